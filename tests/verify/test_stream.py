"""envcheck.runner.start / Stream: lines as they come, timeouts, process-group kill, signals."""

from __future__ import annotations

import os
import sys
import time

import pytest

from envcheck.runner import Stream, start

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="signals and process groups are POSIX"),
              pytest.mark.subprocess]


def py(code):
    return [sys.executable, "-c", code]


def test_lines_then_eof_and_a_clean_exit():
    s = start(py("import sys; print('a', flush=True); sys.stderr.write('oops\\n'); print('b')"))
    assert s.readline(10) == (Stream.LINE, "a")
    assert s.readline(10) == (Stream.LINE, "b")
    assert s.readline(10) == (Stream.EOF, "")
    res = s.finish()
    assert res.ok and res.returncode == 0
    assert res.stderr == "oops\n"


def test_a_signal_is_named():
    s = start(py("import os, signal; print('x', flush=True); os.kill(os.getpid(), signal.SIGSEGV)"))
    assert s.readline(10)[0] == Stream.LINE
    assert s.readline(10)[0] == Stream.EOF
    res = s.finish()
    assert res.returncode == -11
    assert res.error.endswith("was killed by SIGSEGV")


def test_timeout_then_kill_takes_the_whole_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    code = ("import os, time, subprocess, sys\n"
            f"c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(pidfile)!r}, 'w').write(str(c.pid))\n"
            "print('ready', flush=True)\ntime.sleep(60)\n")
    s = start(py(code))
    assert s.readline(20) == (Stream.LINE, "ready")
    assert s.readline(0.3) == (Stream.TIMEOUT, "")
    s.kill(after=0.3)
    res = s.finish()
    assert res.error.endswith("timed out after 0.3 s")
    grandchild = int(pidfile.read_text())
    for _ in range(50):  # the grandchild was in the same process group: it is gone too
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        try:
            os.waitpid(grandchild, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    else:
        pytest.fail("the grandchild survived the kill")


def test_stderr_marks():
    s = start(py("import sys, time; sys.stderr.write('one\\n'); sys.stderr.flush(); print('m', flush=True);"
                 " time.sleep(0.2); sys.stderr.write('two\\n')"))
    assert s.readline(10) == (Stream.LINE, "m")
    deadline = time.monotonic() + 10
    while s.stderr_size() < len("one\n") and time.monotonic() < deadline:
        time.sleep(0.01)
    mark = s.stderr_size()
    s.finish()
    assert s.stderr_since(mark) == "two\n"


def test_missing_program():
    s = start(["no-such-program-envcheck"])
    assert s.readline(1) == (Stream.EOF, "")
    assert s.finish().error == "no-such-program-envcheck not found"
