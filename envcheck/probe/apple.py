"""Apple Silicon (PyTorch's ``mps`` backend): the chip name from ``sysctl -n machdep.cpu.brand_string``.

On an M-series Mac the brand string is the chip (``Apple M2 Pro``); its GPU is integrated and the
only one, so it is served (MPS is how torch uses it). The arch (``apple-m2``) comes from the
matrix row of that chip (matrices/gpus-other.toml).
"""

from __future__ import annotations

from envcheck.machine.model import GpuDevice
from envcheck.probe.context import Finding, ProbeContext, first_line, matrix_gpu, result_reason


def probe_apple(ctx: ProbeContext) -> Finding:
    """The Apple GPU of an arm64 Mac, or why it is unknown."""
    f = Finding()
    res = ctx.run(["sysctl", "-n", "machdep.cpu.brand_string"])
    if not res.ok:
        f.unknown["apple_gpus"] = f"sysctl: {result_reason(res)}"
        return f
    brand = first_line(res.stdout)
    if not brand.startswith("Apple "):
        f.unknown["apple_gpus"] = f"sysctl machdep.cpu.brand_string is {brand!r}, not an Apple chip"
        return f
    row = matrix_gpu(ctx.matrix, brand, "apple")
    arch = row.arch if row is not None else None
    if arch is None:
        f.unknown["apple_gpus"] = f"{brand!r} is not in matrices/gpus-other.toml; its GPU family is unknown"
        return f
    f.gpus.append(GpuDevice(vendor="apple", name=brand, arch=arch, integrated=True, serve=True,
                            how=f"sysctl machdep.cpu.brand_string ({brand}; matrices/gpus-other.toml)"))
    f.how["apple_gpus"] = "sysctl -n machdep.cpu.brand_string"
    return f
