"""The one converter Facts → Machine: the machine a verified environment runs on.

verify and explain ask the resolver for their fixes; the resolver takes a :class:`Machine`. This
module is the only place that turns collected (or replayed, or pasted) facts into one. Each fact
comes from the most direct witness, and ``Machine.how`` says which:

1. what the collector saw in the target interpreter (platform, Python, torch's devices, the
   NVIDIA driver NVML reported);
2. what the explained text itself says (``hints``: "found version 12080" → the driver's CUDA,
   "sm_120 is not compatible" → the GPU's architecture);
3. the machine saved with the facts, the lock's machine, or the probed one (``base``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional

from envcheck.machine.arch import cpu_arch
from envcheck.machine.model import GpuDevice, Machine
from envcheck.verify.facts import Facts


def sm_of(capability: Any) -> Optional[str]:
    """``[12, 0]`` → ``"sm_120"``."""
    try:
        major, minor = int(capability[0]), int(capability[1])
    except (TypeError, ValueError, IndexError):
        return None
    return f"sm_{major}{minor}"


def gfx_of(gcn_arch: Optional[str]) -> Optional[str]:
    """``"gfx1100:sramecc-:xnack-"`` → ``"gfx1100"``."""
    return gcn_arch.split(":")[0] if gcn_arch else None


def gpus_from_facts(facts: Facts, hints: Mapping[str, str], base: Optional[Machine],
                    matrix: Any = None) -> List[GpuDevice]:
    """The GPUs as torch saw them; else as NVML saw them; else the one the explained text names;
    else the base machine's served GPUs."""
    out = []
    for d in facts.devices:
        gfx = gfx_of(d.get("gcn_arch"))
        if gfx:
            out.append(GpuDevice("amd", d.get("name") or gfx, gfx, memory_mib=d.get("memory_mib"),
                                 how="torch (collected)"))
        elif sm_of(d.get("capability")):
            out.append(GpuDevice("nvidia", d.get("name") or "GPU", sm_of(d.get("capability")) or "",
                                 memory_mib=d.get("memory_mib"), how="torch (collected)"))
    if out:
        return out
    for g in facts.driver.get("gpus") or []:
        sm = sm_of(g.get("capability"))
        if sm:
            out.append(GpuDevice("nvidia", g.get("name") or "GPU", sm, how="nvml (collected)"))
    if out:
        return out
    arch = hints.get("gpu_arch")
    if arch:  # named by the explained text ("… CUDA capability sm_120 is not compatible …")
        known = matrix.gpus_with_arch(arch) if matrix is not None else []
        vendor = "amd" if arch.startswith("gfx") else "nvidia"
        name = hints.get("gpu_name") or (known[0].name if known else arch)  # the GPU the text names, if any
        return [GpuDevice(vendor, name, arch, how="the explained text")]
    return list(base.served_gpus) if base else []


def machine_from_facts(facts: Facts, base: Optional[Machine] = None,
                       hints: Optional[Mapping[str, str]] = None, matrix: Any = None) -> Machine:
    """The machine ``facts`` were collected on (see the module docstring for precedence)."""
    hints = hints or {}
    m = base or Machine()
    how: Dict[str, str] = dict(m.how)
    plat = facts.section("platform")
    os_ = plat.get("os") or hints.get("os") or m.os
    # the CPU: as collected; else the base machine's when the OS is its OS; else the usual one of the OS
    arch = cpu_arch(plat.get("arch")) or (m.arch if os_ == m.os else ("arm64" if os_ == "macos" else "x86_64"))
    python = facts.python_minor or m.python
    bits = facts.section("python").get("bits") or m.python_bits
    wsl = m.wsl if "wsl" not in hints else hints["wsl"] == "true"
    wsl = bool(facts.wsl) if facts.wsl is not None else wsl
    glibc = facts.glibc or m.glibc
    if os_ != "linux":  # WSL and glibc are Linux facts
        wsl, glibc = False, None
    driver = facts.driver.get("version") or hints.get("nvidia_driver") or m.nvidia_driver
    cuda_max = facts.driver.get("cuda_max") or hints.get("cuda_driver_max") or m.cuda_driver_max
    for key, value, collected in (("os", os_, plat.get("os")), ("arch", arch, plat.get("arch")),
                                  ("python", python, facts.python_minor), ("glibc", glibc, facts.glibc),
                                  ("nvidia_driver", driver, facts.driver.get("version"))):
        if collected and value:
            how[key] = "the verified interpreter (collected facts)"
    if cuda_max and not facts.driver.get("cuda_max") and hints.get("cuda_driver_max"):
        how["cuda_driver_max"] = "the explained text"
    gpus = gpus_from_facts(facts, hints, base, matrix)
    tegra = m.tegra
    if not tegra and matrix is not None and gpus:
        # a GPU whose architecture only Jetson modules have (sm_87 Orin, sm_72 Xavier) is a Jetson
        rows = [matrix.gpus_with_arch(g.arch) for g in gpus if g.vendor == "nvidia"]
        if rows and all(r and all(x.segment == "embedded" for x in r) for r in rows):
            tegra = True
            how["tegra"] = f"{gpus[0].arch} is an architecture only Jetson modules have (matrices/gpus-*.toml)"
    return replace(m, os=os_, arch=arch, wsl=wsl, glibc=glibc, python=python, python_bits=bits, gpus=gpus,
                   nvidia_driver=driver, cuda_driver_max=cuda_max, tegra=tegra, how=how)
