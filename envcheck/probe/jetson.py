"""NVIDIA Jetson (Tegra) boards: JetPack's L4T release file and the device tree.

* ``/etc/nv_tegra_release`` is written by L4T (JetPack's Linux); its first line names the release
  (``# R36 (release), REVISION: 4.3, …``).
* ``/proc/device-tree/compatible`` lists NUL-separated names; a Tegra SoC appears as
  ``nvidia,tegra234`` (Orin, NVIDIA/jetson-gpio#125) or ``nvidia,tegra210`` (Nano/TX1).
* ``/proc/device-tree/model`` is the board (``NVIDIA Jetson Nano Developer Kit``,
  rbonghi/jetson_stats#48), which names the module's GPU through matrices/gpus-nvidia.toml.

The GPU of a Jetson is part of its SoC and is the one torch uses, so it is served. The JetPack
release is not derived from L4T here (the matrix has no L4T → JetPack rows): it stays unknown.
"""

from __future__ import annotations

from envcheck.machine.model import GpuDevice
from envcheck.probe.context import Finding, ProbeContext, first_line, matrix_gpu


def probe_jetson(ctx: ProbeContext, have_nvidia_gpus: bool = False) -> Finding:
    """``tegra`` and the module's GPU (unless nvidia-smi/NVML already listed it)."""
    f = Finding()
    release, _ = ctx.read("/etc/nv_tegra_release")
    compatible, _ = ctx.read("/proc/device-tree/compatible")
    names = [n for n in (compatible or "").split("\x00") if n]
    tegra = [n for n in names if n.startswith("nvidia,tegra")]
    if release is not None:
        evidence = f"/etc/nv_tegra_release ({first_line(release, 80)})"
    elif tegra:
        evidence = f"/proc/device-tree/compatible names {tegra[0]}"
    else:
        return f
    f.set("tegra", True, evidence)
    f.missing("jetpack", "a Jetson" + (f" with L4T {first_line(release, 60)!r}" if release else "")
              + ": envcheck does not derive the JetPack release from L4T (no such rows in matrices/)")
    if have_nvidia_gpus:
        return f
    model_text, why = ctx.read("/proc/device-tree/model")
    model = (model_text or "").replace("\x00", "").strip()
    if not model:
        f.unknown["nvidia_gpus"] = f"a Jetson, but its board is unknown ({why or '/proc/device-tree/model is empty'})"
        return f
    row = matrix_gpu(ctx.matrix, model, "nvidia")
    if row is None:
        f.unknown["nvidia_gpus"] = f"a Jetson board {model!r} that matrices/gpus-nvidia.toml does not name"
        return f
    f.gpus.append(GpuDevice(vendor="nvidia", name=row.name, arch=row.arch, integrated=True, serve=True,
                            how=f"/proc/device-tree/model {model!r} (matrices/gpus-nvidia.toml)"))
    f.how["nvidia_gpus"] = "/proc/device-tree/model (a Jetson module)"
    return f
