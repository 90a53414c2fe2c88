"""probe: describe the machine envcheck runs on, each fact with the method that found it.

This first cut reads only what the standard library knows (OS, CPU arch, glibc, Python, distro,
WSL); GPU and driver probing builds on it.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path
from typing import Dict, Optional

from envcheck.machine.model import Machine


def read_os_release(root: Path = Path("/")) -> Dict[str, str]:
    """Fields of ``/etc/os-release`` (falling back to ``/usr/lib/os-release``); ``{}`` if unreadable."""
    for rel in ("etc/os-release", "usr/lib/os-release"):
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out = {}
        for line in text.splitlines():
            m = re.match(r"([A-Z0-9_]+)=(.*)", line.strip())
            if m:
                out[m.group(1)] = m.group(2).strip().strip('"').strip("'")
        return out
    return {}


def glibc_version() -> Optional[str]:
    """glibc version via ``os.confstr`` (as packaging's ``_manylinux`` does); ``None`` off glibc."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
    except (AttributeError, OSError, ValueError):
        return None
    if not text:
        return None
    parts = text.split()
    return parts[1] if len(parts) == 2 and parts[0] == "glibc" else None


def probe_basic(matrix=None) -> Machine:
    """This machine's OS, CPU arch, glibc, Python and distro (no GPUs yet)."""
    how: Dict[str, str] = {}
    unknown: Dict[str, str] = {}
    system = platform.system().lower()
    os_name = {"linux": "linux", "windows": "windows", "darwin": "macos"}.get(system, system)
    how["os"] = "platform.system()"
    machine_arch = platform.machine().lower()
    arch = {"amd64": "x86_64", "x86_64": "x86_64", "aarch64": "aarch64", "arm64": "arm64"}.get(
        machine_arch, machine_arch)
    how["arch"] = "platform.machine()"
    m = Machine(os=os_name, arch=arch, how=how, unknown=unknown)
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    if getattr(sys, "_is_gil_enabled", None) is not None and not sys._is_gil_enabled():  # type: ignore[attr-defined]
        py += "t"
    m.python = py
    m.python_bits = 64 if sys.maxsize > 2**32 else 32
    how["python"] = f"this interpreter ({sys.executable})"
    if os_name == "linux":
        m.glibc = glibc_version()
        if m.glibc:
            how["glibc"] = "os.confstr('CS_GNU_LIBC_VERSION')"
        else:
            unknown["glibc"] = "os.confstr gave no glibc version (musl or unusual libc)"
        fields = read_os_release()
        if fields:
            m.distro_name = fields.get("PRETTY_NAME") or fields.get("NAME")
            how["distro_name"] = "/etc/os-release"
            if matrix is not None:
                d = matrix.distro_for_os_release(fields)
                if d is not None:
                    m.distro = d.id
                    how["distro"] = "/etc/os-release ID + VERSION_ID (matrices/platforms.toml)"
        try:
            version = Path("/proc/version").read_text(encoding="utf-8", errors="replace")
        except OSError:
            version = ""
        if "microsoft" in version.lower():
            m.wsl = True
            m.wsl_version = 2 if ("WSL2" in version or Path("/dev/dxg").exists()) else 1
            how["wsl"] = "/proc/version"
    elif os_name == "macos":
        ver = platform.mac_ver()[0]
        if ver:
            m.macos = ver
            how["macos"] = "platform.mac_ver()"
    return m


def probe_machine(matrix=None) -> Machine:
    """Everything probe can learn about this machine (see the module docstring)."""
    return probe_basic(matrix)
