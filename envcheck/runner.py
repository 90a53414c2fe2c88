"""The one seam through which envcheck runs external programs.

Nothing else in ``envcheck/`` imports :mod:`subprocess`. Commands are argv lists (never a shell
string), always have a timeout, and never raise for the ordinary ways a tool fails: a missing
program, a non-zero exit, a hang (the whole process group is killed), a signal. Each becomes a
:class:`Result` whose ``error`` says what happened in words (``"nvidia-smi not found"``,
``"rocminfo timed out after 5 s"``), so callers record it as a fact instead of crashing.

Tests replace the runner with :class:`Replay`, which answers from recorded real outputs.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["Result", "run", "Runner", "Replay", "which"]


@dataclass(frozen=True)
class Result:
    """What running a command gave.

    Attributes:
        argv: the command.
        returncode: exit status; ``None`` when it did not run or was killed by a timeout;
            negative (``-11``) when a signal ended it.
        stdout, stderr: decoded text (UTF-8, undecodable bytes replaced).
        seconds: wall time.
        error: ``None`` on exit 0; otherwise a sentence: not found, timed out, exit status, signal.
    """

    argv: Tuple[str, ...]
    returncode: Optional[int]
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    @property
    def signal(self) -> Optional[int]:
        """The signal number that ended the process (``11`` for SIGSEGV), if any."""
        return -self.returncode if self.returncode is not None and self.returncode < 0 else None


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def which(program: str, path: Optional[str] = None) -> Optional[str]:
    """``shutil.which``: the full path of ``program`` on ``PATH``, or ``None``."""
    return shutil.which(program, path=path)


def run(
    argv: Sequence[str],
    timeout: float = 5.0,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    input: Optional[str] = None,
) -> Result:
    """Run ``argv`` and wait at most ``timeout`` seconds.

    Args:
        argv: program and arguments; the program is looked up on ``PATH`` (of ``env`` if given).
        timeout: seconds; on expiry the whole process group gets SIGKILL.
        env: the complete environment for the child (default: inherit).
        cwd: working directory.
        input: text written to the child's stdin.

    Returns:
        A :class:`Result`; this function does not raise for failures of the command itself.
    """
    argv = tuple(str(a) for a in argv)
    name = os.path.basename(argv[0]) if argv else "?"
    start = time.monotonic()
    exe = argv[0] if os.path.sep in argv[0] else which(argv[0], (env or os.environ).get("PATH"))
    if exe is None or not os.path.exists(exe):
        return Result(argv, None, "", "", 0.0, f"{name} not found")
    try:
        proc = subprocess.Popen(
            (exe,) + argv[1:],
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=os.name == "posix",
        )
    except OSError as exc:
        return Result(argv, None, "", "", time.monotonic() - start, f"{name} could not start: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(input=input.encode() if input is not None else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        return Result(argv, None, _text(out), _text(err), time.monotonic() - start,
                      f"{name} timed out after {timeout:g} s")
    seconds = time.monotonic() - start
    rc = proc.returncode
    error = None
    if rc < 0:
        error = f"{name} was killed by {_signal_name(-rc)}"
    elif rc != 0:
        error = f"{name} exited with status {rc}"
    return Result(argv, rc, _text(out), _text(err), seconds, error)


def _kill_group(proc: "subprocess.Popen[bytes]") -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        proc.kill()


def _text(data: Optional[bytes]) -> str:
    return (data or b"").decode("utf-8", errors="replace")


#: Anything callable like :func:`run`.
Runner = Callable[..., Result]


@dataclass
class Replay:
    """A runner that answers from recorded outputs (for tests of machines we do not have).

    ``outputs`` maps a command — the full argv tuple, or just the program name — to the recorded
    ``stdout`` text, or to a :class:`Result`. Unknown commands answer "not found", as on a
    machine without that tool. ``calls`` records every argv asked for.
    """

    outputs: Dict[Union[str, Tuple[str, ...]], Union[str, Result]] = field(default_factory=dict)
    calls: list = field(default_factory=list)

    def __call__(self, argv: Sequence[str], timeout: float = 5.0, **_: object) -> Result:
        argv = tuple(str(a) for a in argv)
        self.calls.append(argv)
        name = os.path.basename(argv[0])
        for key in (argv, name):
            if key in self.outputs:
                val = self.outputs[key]
                if isinstance(val, Result):
                    return Result(argv, val.returncode, val.stdout, val.stderr, val.seconds, val.error)
                return Result(argv, 0, val, "", 0.0, None)
        return Result(argv, None, "", "", 0.0, f"{name} not found")
