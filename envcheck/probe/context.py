"""What every probe step shares: where the file system is, how commands run, what was learned.

All paths (``/sys``, ``/proc``, ``/etc``, ``/dev``, ``/opt``, ``/usr/lib/wsl``) are read under
:attr:`ProbeContext.root`, so a copied tree replays a whole machine; all commands go through
:attr:`ProbeContext.runner` (:func:`envcheck.runner.run`, or :class:`envcheck.runner.Replay` in
tests). Nothing here raises for a missing, unreadable or odd file: each read returns the text or
``None`` plus a sentence saying why, which probe records as a stated unknown.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from envcheck.record import field, record
from envcheck.machine.model import GpuDevice
from envcheck.runner import Result, Runner, run

#: Seconds any one external tool may take before it is killed and reported as timed out.
DEFAULT_TIMEOUT = 5.0


@record
class ProbeContext:
    """The machine being probed, as probe steps see it.

    Attributes:
        root: the file-system root every path is read under (``/`` for this machine).
        runner: runs commands (argv list, ``timeout=`` seconds) and returns a :class:`Result`.
        timeout: seconds per external tool.
        live: facts of the running interpreter and kernel (``platform``, ``os.confstr``, NVML)
            describe the probed machine; true only when ``root`` is ``/``.
        env: environment variables of the probed session (``WSL_DISTRO_NAME``, ``container``).
        matrix: the compatibility matrix (GPU names, distros), or ``None``.
        nvml: ``None`` = read NVML through ctypes (:func:`envcheck.verify.collector.read_nvml`)
            when an NVIDIA driver is present; ``True`` = try it even on a replayed tree; ``False`` =
            never use NVML; a loaded NVML library (a stand-in with NVML's C functions) = use it (tests).
    """

    root: Path = Path("/")
    runner: Runner = run
    timeout: float = DEFAULT_TIMEOUT
    live: bool = True
    env: Mapping[str, str] = field(default_factory=dict)
    matrix: Any = None
    nvml: Any = None

    def path(self, rel: str) -> Path:
        """``/proc/version`` → ``<root>/proc/version``."""
        return self.root / rel.lstrip("/")

    def read(self, rel: str, limit: int = 1 << 20) -> Tuple[Optional[str], Optional[str]]:
        """``(text, None)``, or ``(None, why)`` when the file is absent or unreadable.

        ``why`` is a sentence naming the path as it is on the probed machine
        (``"/proc/version: permission denied"``). At most ``limit`` bytes are read.
        """
        p = self.path(rel)
        try:
            with open(p, "rb") as fh:
                data = fh.read(limit)
        except OSError as exc:
            return None, f"{rel}: {_os_reason(exc)}"
        return data.decode("utf-8", errors="replace"), None

    def exists(self, rel: str) -> bool:
        return os.path.lexists(self.path(rel))

    def listdir(self, rel: str) -> Tuple[List[str], Optional[str]]:
        """Sorted entry names, or ``([], why)``."""
        try:
            return sorted(os.listdir(self.path(rel))), None
        except OSError as exc:
            return [], f"{rel}: {_os_reason(exc)}"

    def link_name(self, rel: str) -> Optional[str]:
        """The last part of a symlink's target (``…/drivers/amdgpu`` → ``amdgpu``), or ``None``."""
        try:
            return os.path.basename(os.readlink(self.path(rel)))
        except OSError:
            return None

    def run(self, argv: List[str], timeout: Optional[float] = None) -> Result:
        """Run ``argv`` through the runner with this context's timeout."""
        return self.runner(argv, timeout=self.timeout if timeout is None else timeout)


def matrix_gpu(matrix: Any, name: str, vendor: str) -> Any:
    """The ``[[gpu]]`` row of ``vendor`` that ``name`` (as a tool prints it) means, or ``None``."""
    if matrix is None or not name:
        return None
    from envcheck.errors import UnknownGpuError

    try:
        row = matrix.find_gpu(name)
    except UnknownGpuError:
        return None
    return row if row.vendor == vendor else None


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "absent"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "is a directory"
    return (exc.strerror or str(exc)).lower()


def result_reason(res: Result) -> str:
    """A one-line account of a failed command: its error plus the first line it printed.

    ``"nvidia-smi exited with status 9: NVIDIA-SMI has failed because it couldn't communicate
    with the NVIDIA driver."``
    """
    said = first_line(res.stderr) or first_line(res.stdout)
    base = res.error or f"{os.path.basename(res.argv[0]) if res.argv else '?'} gave no usable output"
    return f"{base}: {said}" if said and res.error and "not found" not in res.error else base


def first_line(text: str, width: int = 160) -> str:
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""


@record
class Finding:
    """What one probe step learned: Machine field values, GPUs, and how / why-unknown notes.

    Steps return a Finding instead of editing the Machine, so independent steps can run side by
    side and their results merge in a fixed order.
    """

    fields: Dict[str, Any] = field(default_factory=dict)
    gpus: List[GpuDevice] = field(default_factory=list)
    how: Dict[str, str] = field(default_factory=dict)
    unknown: Dict[str, str] = field(default_factory=dict)

    def set(self, name: str, value: Any, how: str) -> None:
        """Record a fact and how it was found (clears an earlier unknown for it)."""
        self.fields[name] = value
        self.how[name] = how
        self.unknown.pop(name, None)

    def add_unknown(self, name: str, why: str) -> None:
        """Append ``why`` to the reasons recorded under ``name`` (several GPUs, several problems)."""
        self.unknown[name] = f"{self.unknown[name]}; {why}" if self.unknown.get(name) else why

    def missing(self, name: str, why: str) -> None:
        """Record why a fact is unknown (unless it is already known)."""
        if name not in self.fields:
            self.unknown[name] = why
