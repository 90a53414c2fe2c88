"""A small supervisor between envcheck and a program it streams (:func:`envcheck.runner.start`, on
Linux): it makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), so every process
the program leaves behind — double-forked, in a session of its own, with its environment cleared —
is re-parented to the supervisor instead of to init, and stays findable by parentage. When the
program ends, the supervisor ends everything still below it, reaps it, reports how many it ended,
and exits the way the program did (its exit code, or the same signal).

Run as a script by the interpreter envcheck runs on (``python -I supervise.py REPORT_FD -- argv…``);
standard library only, and it never imports envcheck. ``argv[0]`` is already a resolved path. The
program inherits stdin/stdout/stderr and the environment; the supervisor points its own stdout and
stderr at /dev/null once the program started, so the readers' end of file comes from the program's
side only. ``REPORT_FD`` (a pipe to envcheck) gets one line: the number of processes it ended.
"""

import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
#: Seconds the supervisor spends ending what is left before it gives up (every wait has a deadline).
END_WITHIN = 10.0


def become_subreaper() -> bool:
    """``prctl(PR_SET_CHILD_SUBREAPER, 1)`` through libc; False where it is not available."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError, TypeError):
        return False


def proc_table() -> dict:
    """``pid → (ppid, pgrp, session, start time, state)`` of every process, from Linux ``/proc``
    (``{}`` without it). Shared with :mod:`envcheck.runner` (this module stays standard library only)."""
    out = {}  # type: dict
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read()
            f = raw[raw.rindex(b")") + 2:].split()
            out[int(name)] = (int(f[1]), int(f[2]), int(f[3]), int(f[19]), f[0].decode("ascii", "replace"))
        except (OSError, ValueError, IndexError):
            continue
    return out


def below(root: int) -> list:
    """Every live (not zombie) process whose parentage leads to ``root``."""
    table = proc_table()
    found, grew = {root}, True
    while grew:
        grew = False
        for pid, row in table.items():
            if pid not in found and row[0] in found:
                found.add(pid)
                grew = True
    return [p for p in found if p != root and p in table and table[p][4] != "Z"]


def stop_and_kill(pids) -> None:  # type: ignore[no-untyped-def]
    """SIGSTOP every one of ``pids``, then SIGKILL them: stopped first, none forks away while the
    others die. Shared with :mod:`envcheck.runner`."""
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def end_all(me: int, deadline: float) -> int:
    """Stop, then kill, everything below ``me`` until nothing is left (or the deadline); reap it.
    Returns how many processes were ended."""
    ended = set()
    while time.monotonic() < deadline:
        left = below(me)
        if not left:
            break
        stop_and_kill(left)
        ended.update(left)
        time.sleep(0.01)
        _reap()
    _reap()
    return len(ended)


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the program's crash, not a core of ours
        except (ImportError, OSError, ValueError):
            pass
        try:
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main(argv: list) -> None:
    report = int(argv[1])
    cmd = argv[3:]
    become_subreaper()
    pid = os.fork()
    if pid == 0:
        os.close(report)
        try:
            os.execv(cmd[0], cmd)
        except OSError as exc:
            os.write(2, f"{os.path.basename(cmd[0])} could not start: {exc.strerror or exc}\n".encode())
        os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:  # pragma: no cover - retried by Python itself since 3.5
            continue
    ended = end_all(os.getpid(), time.monotonic() + END_WITHIN)
    try:
        os.write(report, f"{ended}\n".encode())
        os.close(report)
    except OSError:
        pass
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv)
