"""WSL: is this Linux running under the Windows Subsystem for Linux, and which version.

* ``/proc/version`` names a Microsoft kernel on WSL: ``…-microsoft-standard-WSL2`` on WSL2
  (microsoft/WSL#6772), ``4.4.0-19041-Microsoft`` on WSL1 (microsoft/WSL#5554), whose "kernel"
  is a translation layer without GPU access.
* ``/dev/dxg`` is the GPU paravirtualization device only WSL2 has; ``/usr/lib/wsl/lib`` holds the
  user-mode driver libraries the Windows driver projects into WSL2 (``libcuda.so``,
  ``nvidia-smi``, ``libdxcore.so``). A GPU under WSL is driven by the Windows driver.
"""

from __future__ import annotations

import re

from envcheck.probe.context import Finding, ProbeContext, first_line

WSL_LIB = "/usr/lib/wsl/lib"


def probe_wsl(ctx: ProbeContext) -> Finding:
    """Sets ``wsl`` / ``wsl_version`` (Linux only); every conclusion names its evidence."""
    f = Finding()
    text, why = ctx.read("/proc/version")
    if text is None:
        text, why2 = ctx.read("/proc/sys/kernel/osrelease")
        if text is None:
            f.missing("wsl", f"{why}; {why2}")
            return f
        source = "/proc/sys/kernel/osrelease"
    else:
        source = "/proc/version"
    if "microsoft" not in text.lower():
        f.set("wsl", False, f"{source} names no Microsoft kernel ({_kernel(text)})")
        return f
    dxg = ctx.exists("/dev/dxg")
    wsl2 = bool(re.search(r"WSL2|microsoft-standard", text)) or dxg
    evidence = [f"{source} ({_kernel(text)})"]
    if dxg:
        evidence.append("/dev/dxg present")
    if ctx.exists(WSL_LIB):
        evidence.append(f"{WSL_LIB} present")
    f.set("wsl", True, ", ".join(evidence))
    f.set("wsl_version", 2 if wsl2 else 1, ", ".join(evidence))
    return f


def _kernel(text: str) -> str:
    mt = re.search(r"Linux version (\S+)", text)
    return mt.group(1) if mt else first_line(text, 80)
