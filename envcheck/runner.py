"""The one seam through which envcheck runs external programs.

Nothing else in ``envcheck/`` imports :mod:`subprocess`. Commands are argv lists (never a shell
string), always have a timeout, and never raise for the ordinary ways a tool fails: a missing
program, a non-zero exit, a hang (the whole process group is killed), a signal. Each becomes a
:class:`Result` whose ``error`` says what happened in words (``"nvidia-smi not found"``,
``"rocminfo timed out after 5 s"``), so callers record it as a fact instead of crashing. Output is
bounded: a program that prints more than :data:`OUTPUT_CAP` bytes on a stream is killed
(``"yes printed more than 8 MiB on stdout; it was killed"``), and children a program leaves behind
holding its pipes are killed once it has ended, so nothing here waits on them.

Tests replace the runner with :class:`Replay`, which answers from recorded real outputs.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple, Union

from envcheck.record import field, record

__all__ = ["Result", "run", "Runner", "Replay", "which", "Stream", "start", "OUTPUT_CAP", "exit_text"]

#: Bytes of output kept per stream (stdout, stderr) of one command; more gets it killed (:func:`run`,
#: :class:`Stream` stdout) or, for a :class:`Stream`'s stderr, only the newest this many are kept.
OUTPUT_CAP = 8 * 1024 * 1024
#: Bytes read from a pipe at a time.
_CHUNK = 64 * 1024
#: Seconds to wait for the pipes to close after the program ended, before its process group (a
#: child it left behind holding them) is killed.
_DRAIN = 0.5


@record(frozen=True)
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
    max_output: int = OUTPUT_CAP,
) -> Result:
    """Run ``argv`` and wait at most ``timeout`` seconds.

    Args:
        argv: program and arguments; the program is looked up on ``PATH`` (of ``env`` if given).
        timeout: seconds; on expiry the whole process group gets SIGKILL.
        env: the complete environment for the child (default: inherit).
        cwd: working directory.
        input: text written to the child's stdin.
        max_output: bytes kept per stream; a program that prints more is killed (its process
            group) and the Result says so.

    Returns:
        A :class:`Result`; this function does not raise for failures of the command itself. A child
        the program leaves behind holding its pipes is killed once the program has ended.
    """
    argv = tuple(str(a) for a in argv)
    name = os.path.basename(argv[0]) if argv else "?"
    start = time.monotonic()
    proc, error = _spawn(argv, env, cwd, stdin_pipe=input is not None)
    if proc is None:
        return Result(argv, None, "", "", time.monotonic() - start, error)
    cap = _Capture(proc, max_output)
    if input is not None:
        threading.Thread(target=_feed, args=(proc, input.encode()), daemon=True).start()
    deadline = start + timeout
    why = None
    while why is None:
        try:
            proc.wait(timeout=max(0.0, min(0.05, deadline - time.monotonic())))
            break
        except subprocess.TimeoutExpired:
            if cap.over:
                why = f"{name} printed more than {_mib(max_output)} on {cap.over}; it was killed"
            elif time.monotonic() >= deadline:
                why = f"{name} timed out after {timeout:g} s"
    if why is not None:
        _kill_group(proc)
        proc.wait()
    cap.drain(proc, _DRAIN)
    out, err = cap.text("stdout"), cap.text("stderr")
    seconds = time.monotonic() - start
    if why is not None:
        return Result(argv, None, out, err, seconds, why)
    rc = proc.returncode
    if cap.over:
        return Result(argv, rc, out, err, seconds, f"{name} printed more than {_mib(max_output)} on {cap.over}")
    return Result(argv, rc, out, err, seconds, exit_text(name, rc))


def exit_text(name: str, rc: int) -> Optional[str]:
    """``None`` for 0; else ``"nvidia-smi exited with status 9"`` or ``"python was killed by SIGSEGV"``;
    a status 128+N of a signal N (how a shell or a container reports a child killed by it) says so."""
    if rc < 0:
        return f"{name} was killed by {_signal_name(-rc)}"
    if rc == 0:
        return None
    text = f"{name} exited with status {rc}"
    if 128 < rc < 160:
        try:
            text += f" (128+{rc - 128}: a child killed by {signal.Signals(rc - 128).name}, as a shell or container reports it)"
        except ValueError:
            pass
    return text


def _mib(n: int) -> str:
    return f"{n / 2 ** 20:g} MiB"


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    try:
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.close()
    except (OSError, ValueError):
        pass  # the child exited or closed stdin


class _Capture:
    """stdout and stderr of a process read in background threads, at most ``cap`` bytes each."""

    def __init__(self, proc: subprocess.Popen[bytes], cap: int):
        self.cap = cap
        self.parts: Dict[str, list] = {"stdout": [], "stderr": []}
        self.size = {"stdout": 0, "stderr": 0}
        self.over: Optional[str] = None  # the first stream that went over the cap
        self.threads = [threading.Thread(target=self._read, args=(getattr(proc, k), k), daemon=True)
                        for k in ("stdout", "stderr")]
        for t in self.threads:
            t.start()

    def _read(self, pipe: Any, key: str) -> None:
        try:
            fd = pipe.fileno()
            while True:
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    break
                if self.size[key] < self.cap:
                    self.parts[key].append(chunk[: self.cap - self.size[key]])
                self.size[key] += len(chunk)
                if self.size[key] > self.cap and self.over is None:
                    self.over = key
        except (OSError, ValueError):
            pass
        finally:
            _close(pipe)

    def drain(self, proc: subprocess.Popen[bytes], wait: float) -> None:
        """After the process ended: wait ``wait`` seconds for the pipes to close, then kill the
        process group (children left behind holding them) and wait a little more."""
        _join(self.threads, wait)
        if any(t.is_alive() for t in self.threads):
            _kill_group(proc)
            _join(self.threads, 2.0)

    def text(self, key: str) -> str:
        return _text(b"".join(self.parts[key]))


def _join(threads: Sequence[threading.Thread], seconds: float) -> None:
    end = time.monotonic() + seconds
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))


def _close(pipe: Any) -> None:
    try:
        pipe.close()
    except (OSError, ValueError):
        pass


def _resolve(argv: Tuple[str, ...], env: Optional[Mapping[str, str]]) -> Optional[str]:
    """The path of ``argv[0]`` (looked up on the ``PATH`` of ``env``), or None when it does not exist."""
    exe = argv[0] if os.path.sep in argv[0] else which(argv[0], (env or os.environ).get("PATH"))
    return exe if exe is not None and os.path.exists(exe) else None


def _spawn(
    argv: Tuple[str, ...], env: Optional[Mapping[str, str]], cwd: Optional[str], stdin_pipe: bool,
    wrap: Tuple[str, ...] = (), pass_fds: Tuple[int, ...] = (),
) -> Tuple[Optional[subprocess.Popen[bytes]], str]:
    """Start ``argv`` in its own process group with piped stdout/stderr (through ``wrap``, a
    supervisor that takes the resolved argv after it, when given).

    Returns:
        ``(process, "")``, or ``(None, reason)`` when the program is missing or cannot start.
    """
    name = os.path.basename(argv[0]) if argv else "?"
    exe = _resolve(argv, env)
    if exe is None:
        return None, f"{name} not found"
    try:
        proc = subprocess.Popen(
            wrap + (exe,) + argv[1:],
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=os.name == "posix",
            pass_fds=pass_fds,
        )
    except OSError as exc:
        return None, f"{name} could not start: {exc.strerror or exc}"
    return proc, ""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``proc``'s process group — also after ``proc`` itself has ended, for the children it
    left behind (the group outlives its leader while any member lives)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass


def _text(data: Optional[bytes]) -> str:
    return (data or b"").decode("utf-8", errors="replace")


#: Anything callable like :func:`run`.
Runner = Callable[..., Result]


@record
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
    :meth:`kill` also ends processes it forked — also after the child itself has ended. On Linux it
    runs under :mod:`envcheck.supervise` (a child subreaper): what it leaves behind, even after
    leaving its group and session and clearing its environment, is ended when it ends.

    Bounds: more than :data:`OUTPUT_CAP` bytes on stdout (in all, or in one line) get the child
    killed (``finish`` says so); of stderr
    only the newest :data:`OUTPUT_CAP` characters are kept (:meth:`stderr_size` still counts all).

    Attributes:
        argv: the command.
    """

    LINE, EOF, TIMEOUT = "line", "eof", "timeout"

    def __init__(self, argv: Tuple[str, ...], proc: Optional[subprocess.Popen[bytes]],
                 error: Optional[str] = None, max_output: int = OUTPUT_CAP, token: Optional[str] = None,
                 report_fd: Optional[int] = None):
        self.argv = argv
        self._token = token
        self._report_fd = report_fd  # the supervisor's count of what it ended (envcheck.supervise)
        self._seen: Dict[int, int] = {}  # descendants seen while the child ran (pid → start time)
        self._tracking = threading.Event()
        self.left_behind = 0  # processes killed at the end that the child had left running
        self._proc = proc
        self._error = error
        self._start = time.monotonic()
        self._lines: queue.Queue[Optional[str]] = queue.Queue()
        self._stderr: list = []
        self._stderr_dropped = 0  # characters dropped from the front of _stderr (the cap)
        self._stderr_lock = threading.Lock()
        self._cap = max_output
        self._overflow: Optional[str] = None
        self._eof = proc is None
        self._killed_after: Optional[float] = None
        self._threads = []
        if proc is not None:
            targets = [self._pump_stdout, self._pump_stderr]
            if os.path.isdir("/proc/self"):
                targets.append(self._track)
            for target in targets:
                t = threading.Thread(target=target, daemon=True)
                t.start()
                self._threads.append(t)

    def _pump_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        pipe, total = self._proc.stdout, 0
        try:
            while True:
                raw = pipe.readline(self._cap + 1)
                if not raw:
                    break
                total += len(raw)
                if total > self._cap:
                    self._overflow = self._overflow or "stdout"
                    _kill_group(self._proc)
                    break
                self._lines.put(_text(raw).rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        finally:
            self._lines.put(None)
            _close(pipe)

    def _track(self) -> None:
        """Record the child's descendants while it runs, so one that leaves its group and
        session — and clears its environment — is still known by its parentage at the end."""
        assert self._proc is not None
        while not self._tracking.wait(_TRACK_EVERY):
            try:
                self._seen.update(descendants(self._proc.pid, self._token, None))
            except Exception:  # noqa: BLE001 - a process table read racing with exits
                pass
            if self._proc.poll() is not None:
                break

    def _pump_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        import codecs

        pipe = self._proc.stderr
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            fd = pipe.fileno()
            while True:
                chunk = os.read(fd, _CHUNK)
                self._add_stderr(decoder.decode(chunk, final=not chunk))
                if not chunk:
                    break
        except (OSError, ValueError):
            pass
        finally:
            _close(pipe)

    def _add_stderr(self, text: str) -> None:
        """Append stderr text, dropping the oldest chunks beyond the cap."""
        if not text:
            return
        with self._stderr_lock:
            self._stderr.append(text)
            kept = sum(len(x) for x in self._stderr)
            while kept > self._cap and len(self._stderr) > 1:
                gone = self._stderr.pop(0)
                self._stderr_dropped += len(gone)
                kept -= len(gone)

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
            line = self._lines.get(timeout=min(max(timeout, 0.0), threading.TIMEOUT_MAX))
        except queue.Empty:
            return self.TIMEOUT, ""
        if line is None:
            self._eof = True
            return self.EOF, ""
        return self.LINE, line

    def stderr_size(self) -> int:
        """How many stderr characters have arrived so far (a mark for :meth:`stderr_since`)."""
        with self._stderr_lock:
            return self._stderr_dropped + sum(len(x) for x in self._stderr)

    def stderr_since(self, mark: int = 0) -> str:
        """stderr text after ``mark`` characters (all that is kept, by default)."""
        with self._stderr_lock:
            return "".join(self._stderr)[max(0, mark - self._stderr_dropped):]

    def kill(self, after: Optional[float] = None) -> None:
        """SIGKILL the child's whole process group; ``after`` (seconds) is the timeout to report.

        Also after the child has ended: processes it left behind in its group are killed (they
        would hold its pipes open)."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._killed_after = after
        if self._report_fd is not None and os.path.isdir("/proc/self"):
            # the supervisor dies with its group: note what it had adopted while it still holds it
            try:
                self._seen.update(descendants(self._proc.pid, self._token, None))
            except Exception:  # noqa: BLE001 - a process table read racing with exits
                pass
        _kill_group(self._proc)

    def _rest(self, join: float) -> str:
        """After the child ended: wait ``join`` seconds for the readers, return the unread stdout lines."""
        _join(self._threads, join)
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

        Children it left behind holding its pipes are killed (its process group) after
        :data:`_DRAIN` seconds; this method never waits on them longer.

        Returns:
            A :class:`Result` with the remaining stdout lines, all stderr, and ``error`` saying
            "timed out after N s" (when :meth:`kill` was given ``after``), "was killed by
            SIGSEGV", "exited with status 1", "printed more than 8 MiB on stdout", or "not found";
            this method does not raise.
        """
        name = os.path.basename(self.argv[0]) if self.argv else "?"
        if self._proc is None:
            return Result(self.argv, None, "", "", 0.0, self._error)
        try:
            self._proc.wait(timeout=min(max(timeout, 0.0), threading.TIMEOUT_MAX))
        except subprocess.TimeoutExpired:
            self.kill(self._killed_after if self._killed_after is not None else timeout)
            self._proc.wait()
        _join(self._threads, _DRAIN)
        if any(t.is_alive() for t in self._threads):
            _kill_group(self._proc)  # a child left behind holds the pipes
        self._tracking.set()
        rest = self._rest(2.0)
        # whatever the child left running — in its group or gone to a session of its own — ends here
        # (under the supervisor, everything re-parented to it already has: it says how many)
        self.left_behind = self._supervisor_count() + kill_tree(self._proc.pid, self._token, self._seen)
        rc = self._proc.returncode
        seconds = time.monotonic() - self._start
        error = exit_text(name, rc)
        if self._overflow:
            error, rc = f"{name} printed more than {_mib(self._cap)} on {self._overflow}; it was killed", None
        elif self._killed_after is not None:
            error, rc = f"{name} timed out after {self._killed_after:g} s", None
        return Result(self.argv, rc, rest, self.stderr_since(), seconds, error)


    def _supervisor_count(self) -> int:
        fd, self._report_fd = self._report_fd, None
        if fd is None:
            return 0
        try:
            os.set_blocking(fd, False)
            raw = os.read(fd, 64)
        except OSError:  # nothing written: the supervisor was killed with its group
            raw = b""
        finally:
            os.close(fd)
        text = raw.decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else 0


# -- what a child leaves behind -------------------------------------------------------------------
#: Environment variable every :func:`start` child (and whatever it starts, unless it clears its
#: environment) carries, with a token unique to that child: how its descendants are found even
#: after they left its process group and session (``setsid``, a double fork, stdout to /dev/null).
RUN_MARK = "ENVCHECK_RUN_ID"
#: Seconds between looks at a running child's descendants (parentage is recorded while it lasts).
_TRACK_EVERY = 0.2


def _proc_table() -> Dict[int, Tuple[int, int, int, int]]:
    """``pid → (ppid, pgrp, session, start time)`` of every process (Linux ``/proc``); ``{}`` elsewhere."""
    from envcheck.supervise import proc_table

    return {pid: row[:4] for pid, row in proc_table().items()}


def _marked(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return token in fh.read(1 << 20)
    except OSError:
        return False


def descendants(root: int, token: Optional[str], seen: Optional[Dict[int, int]] = None) -> Dict[int, int]:
    """Processes that came from ``root``: its process group and session, everything whose parentage
    leads to one of those, everything carrying ``RUN_MARK=token`` in its environment, and the
    ``seen`` ones (``pid → start time``) still alive as the same process. ``pid → start time``;
    never this process."""
    table = _proc_table()
    me = os.getpid()
    mark = f"{RUN_MARK}={token}\0".encode() if token else b""
    uid = os.getuid() if hasattr(os, "getuid") else None
    found: Dict[int, int] = {}
    for pid, (_ppid, pgrp, sid, st) in table.items():
        if pid == me:
            continue
        ours = pid == root or pgrp == root or sid == root or bool(seen and seen.get(pid) == st)
        if ours or (mark and (uid is None or _owner(pid) == uid) and _marked(pid, mark)):
            found[pid] = st
    grew = True
    while grew:  # parentage: children of anything found
        grew = False
        for pid, (ppid, _, _, st) in table.items():
            if pid not in found and ppid in found and pid != me:
                found[pid] = st
                grew = True
    return found


def _owner(pid: int) -> Optional[int]:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def kill_tree(root: int, token: Optional[str], seen: Optional[Dict[int, int]] = None) -> int:
    """SIGKILL every process :func:`descendants` finds (stopped first, so none forks away while
    the others die); repeated until none is left. Returns how many were killed."""
    if os.name != "posix":  # pragma: no cover - Windows
        return 0
    killed: Dict[int, int] = {}
    for _ in range(5):
        found = {p: st for p, st in descendants(root, token, {**(seen or {}), **killed}).items()
                 if _alive_as(p, st)}
        if not found:
            break
        from envcheck.supervise import stop_and_kill

        stop_and_kill(found)
        killed.update(found)
        time.sleep(0.02)
    return len(killed)


def _alive_as(pid: int, start: int) -> bool:
    """``pid`` is alive (not a zombie) and is the process that started at ``start``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
        f = raw[raw.rindex(b")") + 2:].split()
        return f[0] != b"Z" and int(f[19]) == start
    except (OSError, ValueError, IndexError):
        return False


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
    import secrets

    argv = tuple(str(a) for a in argv)
    token = secrets.token_hex(8)
    child_env = dict(env if env is not None else os.environ)
    child_env[RUN_MARK] = token
    if not _can_supervise() or _resolve(argv, child_env) is None:
        proc, error = _spawn(argv, child_env, cwd, stdin_pipe=False)
        return Stream(argv, None, error) if proc is None else Stream(argv, proc, token=token)
    read_end, write_end = os.pipe()
    try:
        proc, error = _spawn(argv, child_env, cwd, stdin_pipe=False, pass_fds=(write_end,),
                             wrap=(sys.executable, "-I", "-S", SUPERVISOR, str(write_end), "--"))
    finally:
        os.close(write_end)
    if proc is None:
        os.close(read_end)
        return Stream(argv, None, error)
    return Stream(argv, proc, token=token, report_fd=read_end)


#: The supervisor script (:mod:`envcheck.supervise`): a child subreaper between envcheck and a
#: streamed program, so descendants that leave its group, session and environment stay findable.
SUPERVISOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "supervise.py")


def _can_supervise() -> bool:
    """Linux (PR_SET_CHILD_SUBREAPER), an interpreter to run the supervisor on, and its script."""
    return sys.platform.startswith("linux") and bool(sys.executable) and os.path.isfile(SUPERVISOR)
