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
import queue
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["Result", "run", "Runner", "Replay", "which", "Stream", "start"]


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
    proc, error = _spawn(argv, env, cwd, stdin_pipe=input is not None)
    if proc is None:
        return Result(argv, None, "", "", time.monotonic() - start, error)
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


def _spawn(
    argv: Tuple[str, ...], env: Optional[Mapping[str, str]], cwd: Optional[str], stdin_pipe: bool
) -> "Tuple[Optional[subprocess.Popen[bytes]], str]":
    """Start ``argv`` in its own process group with piped stdout/stderr.

    Returns:
        ``(process, "")``, or ``(None, reason)`` when the program is missing or cannot start.
    """
    name = os.path.basename(argv[0]) if argv else "?"
    exe = argv[0] if os.path.sep in argv[0] else which(argv[0], (env or os.environ).get("PATH"))
    if exe is None or not os.path.exists(exe):
        return None, f"{name} not found"
    try:
        proc = subprocess.Popen(
            (exe,) + argv[1:],
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=os.name == "posix",
        )
    except OSError as exc:
        return None, f"{name} could not start: {exc.strerror or exc}"
    return proc, ""


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


# -- streaming ----------------------------------------------------------------------------------

class Stream:
    """A child started by :func:`start`, read line by line while it runs.

    For a long-lived worker that reports progress (``envcheck verify``'s collector prints one JSON
    line per check): :meth:`readline` waits at most ``timeout`` seconds for the next stdout line,
    stderr is collected in the background (so the child never blocks on a full pipe), and
    :meth:`finish` returns the same :class:`Result` :func:`run` would, with a signal named
    (``"python was killed by SIGSEGV"``). The child runs in its own process group, so
    :meth:`kill` also ends processes it forked.

    Attributes:
        argv: the command.
    """

    LINE, EOF, TIMEOUT = "line", "eof", "timeout"

    def __init__(self, argv: Tuple[str, ...], proc: "Optional[subprocess.Popen[bytes]]",
                 error: Optional[str] = None):
        self.argv = argv
        self._proc = proc
        self._error = error
        self._start = time.monotonic()
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self._stderr: list = []
        self._stderr_lock = threading.Lock()
        self._eof = proc is None
        self._killed_after: Optional[float] = None
        self._threads = []
        if proc is not None:
            for target in (self._pump_stdout, self._pump_stderr):
                t = threading.Thread(target=target, daemon=True)
                t.start()
                self._threads.append(t)

    def _pump_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for raw in self._proc.stdout:
            self._lines.put(_text(raw).rstrip("\r\n"))
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for raw in self._proc.stderr:
            with self._stderr_lock:
                self._stderr.append(_text(raw))

    @property
    def pid(self) -> Optional[int]:
        return self._proc.pid if self._proc is not None else None

    def readline(self, timeout: float) -> Tuple[str, str]:
        """The next stdout line, waiting at most ``timeout`` seconds.

        Returns:
            ``(Stream.LINE, text)`` (without the newline), ``(Stream.EOF, "")`` once stdout is
            closed (the child ended or could not start), or ``(Stream.TIMEOUT, "")``.
        """
        if self._eof:
            return self.EOF, ""
        try:
            line = self._lines.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return self.TIMEOUT, ""
        if line is None:
            self._eof = True
            return self.EOF, ""
        return self.LINE, line

    def stderr_size(self) -> int:
        """How many stderr characters have arrived so far (a mark for :meth:`stderr_since`)."""
        with self._stderr_lock:
            return sum(len(x) for x in self._stderr)

    def stderr_since(self, mark: int = 0) -> str:
        """stderr text after ``mark`` characters (all of it by default)."""
        with self._stderr_lock:
            return "".join(self._stderr)[mark:]

    def kill(self, after: Optional[float] = None) -> None:
        """SIGKILL the child's whole process group; ``after`` (seconds) is the timeout to report."""
        if self._proc is not None and self._proc.poll() is None:
            self._killed_after = after
            _kill_group(self._proc)

    def _rest(self, join: float) -> str:
        """After the child ended: wait ``join`` seconds for the readers, return the unread stdout lines."""
        for t in self._threads:
            t.join(timeout=join)
        rest = []
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                rest.append(line + "\n")
        return "".join(rest)

    def finish(self, timeout: float = 5.0) -> Result:
        """Wait for the child to end (killing it after ``timeout`` seconds) and describe how it ended.

        Returns:
            A :class:`Result` with the remaining stdout lines, all stderr, and ``error`` saying
            "timed out after N s" (when :meth:`kill` was given ``after``), "was killed by
            SIGSEGV", "exited with status 1", or "not found"; this method does not raise.
        """
        name = os.path.basename(self.argv[0]) if self.argv else "?"
        if self._proc is None:
            return Result(self.argv, None, "", "", 0.0, self._error)
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(self._killed_after if self._killed_after is not None else timeout)
            self._proc.wait()
        rest = self._rest(2.0)
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
        rc = self._proc.returncode
        seconds = time.monotonic() - self._start
        error = None
        if self._killed_after is not None:
            error, rc = f"{name} timed out after {self._killed_after:g} s", None
        elif rc < 0:
            error = f"{name} was killed by {_signal_name(-rc)}"
        elif rc != 0:
            error = f"{name} exited with status {rc}"
        return Result(self.argv, rc, rest, self.stderr_since(), seconds, error)


def start(
    argv: Sequence[str],
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
) -> Stream:
    """Start ``argv`` without waiting; read it through the returned :class:`Stream`.

    Same conventions as :func:`run`: an argv list, the program looked up on ``PATH``, its own
    process group, stdin closed. A program that is missing or cannot start gives a Stream that is
    already at EOF and whose :meth:`Stream.finish` says why. Always call ``finish()``.
    """
    argv = tuple(str(a) for a in argv)
    proc, error = _spawn(argv, env, cwd, stdin_pipe=False)
    if proc is None:
        return Stream(argv, None, error)
    return Stream(argv, proc)
