"""Host facts: OS, CPU arch, Python, glibc, distribution, container.

Sources, in the order tried:
  * OS / CPU arch / Python: the running interpreter (``platform``, ``sys``, ``sysconfig``).
  * glibc: ``os.confstr("CS_GNU_LIBC_VERSION")``, else ``gnu_get_libc_version()`` through ctypes
    (packaging's ``_manylinux`` does the same), else the glibc the distribution ships
    (``matrices/platforms.toml``) — the only source for a replayed tree.
  * distribution: ``/etc/os-release``, else ``/usr/lib/os-release`` (os-release(5)), matched to
    a ``[[distro]]`` row by ID and VERSION_ID.
  * container: ``/.dockerenv`` (Docker), ``/run/.containerenv`` (Podman), container names in
    ``/proc/1/cgroup``, or a ``container`` environment variable (systemd's convention).
"""

from __future__ import annotations

import os
import platform
import re
import sys
from typing import Dict, Optional, Tuple

from envcheck.machine.arch import cpu_arch
from envcheck.probe.context import Finding, ProbeContext

_OS_NAMES = {"linux": "linux", "windows": "windows", "darwin": "macos"}
_OS_RELEASE_LINE = re.compile(r"([A-Za-z0-9_]+)=(.*)")
_CGROUP_CONTAINER = re.compile(r"docker|kubepods|containerd|libpod|lxc|podman", re.I)


def parse_os_release(text: str) -> Dict[str, str]:
    """``KEY=value`` lines of an os-release file; quotes removed, comments skipped."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        mt = _OS_RELEASE_LINE.fullmatch(line.strip())
        if mt:
            value = mt.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            out[mt.group(1)] = value
    return out


def read_os_release(ctx: ProbeContext) -> Tuple[Dict[str, str], str]:
    """``(fields, path read)`` or ``({}, why)`` when neither os-release file is readable."""
    reasons = []
    for rel in ("/etc/os-release", "/usr/lib/os-release"):
        text, why = ctx.read(rel)
        if text is None:
            reasons.append(why or rel)
            continue
        fields = parse_os_release(text)
        if fields:
            return fields, rel
        reasons.append(f"{rel}: no KEY=value lines")
    return {}, "; ".join(reasons)


def glibc_from_confstr() -> Optional[str]:
    """``"2.36"`` from ``os.confstr("CS_GNU_LIBC_VERSION")`` (``"glibc 2.36"``); ``None`` off glibc."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, OSError, ValueError):
        return None
    return _glibc_number(text)


def glibc_from_ctypes() -> Optional[str]:
    """``gnu_get_libc_version()`` of the running process; ``None`` when the symbol is missing."""
    try:
        import ctypes

        fn = ctypes.CDLL(None).gnu_get_libc_version
    except (OSError, AttributeError, ImportError):
        return None
    fn.restype = ctypes.c_char_p
    raw = fn()
    return _glibc_number("glibc " + raw.decode("ascii", "replace")) if raw else None


def _glibc_number(text: Optional[str]) -> Optional[str]:
    parts = (text or "").split()
    if len(parts) == 2 and parts[0] == "glibc" and re.fullmatch(r"\d+\.\d+(\.\d+)?", parts[1]):
        return parts[1]
    return None


def python_tag() -> Tuple[str, int, str]:
    """This interpreter: ``("3.13t", 64, "cpython")`` — version (``t`` = free-threaded build), bits, implementation."""
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    import sysconfig

    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        py += "t"
    bits = 64 if sys.maxsize > 2**32 else 32
    return py, bits, platform.python_implementation().lower()


def probe_host(ctx: ProbeContext) -> Finding:
    """OS, CPU arch, Python, glibc, distribution and container facts (see the module docstring)."""
    f = Finding()
    if ctx.live:
        system = platform.system().lower()
        f.set("os", _OS_NAMES.get(system, system), "platform.system()")
    else:
        f.set("os", "linux", f"a replayed Linux tree ({ctx.root})")
    machine = platform.machine().lower()
    f.set("arch", cpu_arch(machine) or machine, "platform.machine()")
    py, bits, impl = python_tag()
    where = f"this interpreter ({sys.executable})"
    f.set("python", py, where + (", free-threaded build (Py_GIL_DISABLED)" if py.endswith("t") else ""))
    f.set("python_bits", bits, where)
    f.set("python_implementation", impl, "platform.python_implementation()")
    if f.fields["os"] == "linux":
        _distro(ctx, f)
        _glibc(ctx, f)
        _container(ctx, f)
    elif f.fields["os"] == "macos":
        ver = platform.mac_ver()[0]
        if ver:
            f.set("macos", ver, "platform.mac_ver()")
        else:
            f.missing("macos", "platform.mac_ver() gave no version")
    return f


def _distro(ctx: ProbeContext, f: Finding) -> None:
    fields, where = read_os_release(ctx)
    if not fields:
        f.missing("distro", f"no os-release file ({where})")
        return
    name = fields.get("PRETTY_NAME") or fields.get("NAME")
    if name:
        f.set("distro_name", name, f"{where} PRETTY_NAME")
    if ctx.matrix is None:
        f.missing("distro", "no matrix loaded to match os-release against matrices/platforms.toml")
        return
    row, how = match_distro(ctx.matrix, fields)
    if row is None:
        f.missing("distro", f"{where} ID={fields.get('ID', '?')!r} VERSION_ID={fields.get('VERSION_ID', '?')!r} "
                            "matches no [[distro]] row of matrices/platforms.toml")
        return
    f.set("distro", row.id, f"{where} {how} (matrices/platforms.toml)")


def match_distro(matrix, fields: Dict[str, str]):
    """The ``[[distro]]`` row for os-release ``fields`` and how it matched, or ``(None, "")``.

    Exact ID + VERSION_ID first; then ID + the major part of VERSION_ID, because RHEL and its
    rebuilds write ``VERSION_ID="9.6"`` where the row says ``"9"`` (matrices/platforms.toml).
    """
    row = matrix.distro_for_os_release(fields)
    if row is not None:
        return row, "ID + VERSION_ID"
    version = fields.get("VERSION_ID", "")
    if "." in version:
        row = matrix.distro_for_os_release(dict(fields, VERSION_ID=version.split(".")[0]))
        if row is not None:
            return row, "ID + major of VERSION_ID"
    return None, ""


def _glibc(ctx: ProbeContext, f: Finding) -> None:
    tried = []
    if ctx.live:
        value = glibc_from_confstr()
        if value:
            f.set("glibc", value, "os.confstr('CS_GNU_LIBC_VERSION')")
            return
        tried.append("os.confstr gave no glibc version")
        value = glibc_from_ctypes()
        if value:
            f.set("glibc", value, "ctypes gnu_get_libc_version()")
            return
        tried.append("gnu_get_libc_version() is not in this process (musl or another libc)")
    else:
        tried.append("a replayed tree has no running libc to ask")
    distro = f.fields.get("distro")
    row = next((d for d in ctx.matrix.distros if d.id == distro), None) if ctx.matrix and distro else None
    if row is not None and row.glibc:
        f.set("glibc", row.glibc, f"the glibc {row.name} ships (matrices/platforms.toml), because "
                                  + "; ".join(tried))
        return
    f.missing("glibc", "; ".join(tried + ["distribution unknown to matrices/platforms.toml"]))


def _container(ctx: ProbeContext, f: Finding) -> None:
    if ctx.exists("/.dockerenv"):
        f.set("container", True, "/.dockerenv exists (Docker)")
        return
    if ctx.exists("/run/.containerenv"):
        f.set("container", True, "/run/.containerenv exists (Podman)")
        return
    text, _ = ctx.read("/proc/1/cgroup")
    hit = _CGROUP_CONTAINER.search(text or "")
    if hit:
        f.set("container", True, f"/proc/1/cgroup names {hit.group(0)!r}")
        return
    if ctx.env.get("container"):
        f.set("container", True, f"environment variable container={ctx.env['container']!r}")
        return
    f.set("container", False, "no /.dockerenv, /run/.containerenv, container name in /proc/1/cgroup "
                              "or $container")
