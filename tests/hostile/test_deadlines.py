"""Every wait has a deadline that holds — against what tries to stretch it.

* stand-in torches (real packages on PYTHONPATH, run by a real interpreter) that cheat on verify's
  result channel — keep-alive lines, forged results for checks never started, ``ok`` without data —
  or leave children behind in a session of their own;
* hostile index servers on 127.0.0.1 — headers a byte at a time, TLS spoken to plain HTTP, a
  200,000-deep JSON page, an unknown charset;
* input files that never end or never open — FIFOs, character devices, /dev/zero on stdin — for
  every flag that reads a file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "fixtures" / "verify" / "cases"

#: Finds the collector's result channel the way a cheating package would: a pipe that is not stderr.
_CHANNEL = """
import os, stat
def _channel():
    err = os.fstat(2).st_ino
    for fd in range(3, 64):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISFIFO(st.st_mode) and st.st_ino != err:
            return fd
def _say(obj):
    import json
    fd = _channel()
    if fd is not None:
        os.write(fd, (json.dumps(obj) + "\\n").encode())
"""

STANDINS = {
    # a line every 0.3 s that looks like progress, while the import never ends
    "keepalive": _CHANNEL + """
import threading, time
def _beat():
    while True:
        _say({"event": "hello", "protocol": 1})
        _say({"event": "start", "check": "import_torch"})
        time.sleep(0.3)
threading.Thread(target=_beat, daemon=True).start()
time.sleep(1000)
""",
    # PASSes for checks that never started
    "forge": _CHANNEL + """
for c in ("matmul", "cuda_build", "allocation"):
    _say({"event": "result", "check": c, "outcome": "ok", "seconds": 0.1,
          "data": {"seed": 1, "results": [], "devices": [], "errors": {}}})
__version__ = "2.13.0+cpu"
""",
    # an ok with nothing in it, for the running check
    "empty-ok": _CHANNEL + """
_say({"event": "result", "check": "import_torch", "outcome": "ok", "seconds": 0.1, "data": {}})
import time
time.sleep(1000)
""",
}

#: real processes (envcheck, interpreters, docker, servers' clients) run here on purpose
pytestmark = pytest.mark.subprocess


def standin(tmp_path: Path, body: str) -> Path:
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(body)
    return site


def run_verify(cli, args, limit):
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", cli(args)), daemon=True)
    t0 = time.monotonic()
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"verify hung (> {limit} s)"
    return box["r"], time.monotonic() - t0


@pytest.mark.parametrize("kind", sorted(STANDINS))
def test_a_cheating_torch_never_passes_and_never_stretches_the_deadline(cli, tmp_path, monkeypatch, tally, kind):
    monkeypatch.setenv("PYTHONPATH", str(standin(tmp_path, STANDINS[kind])))
    r, took = run_verify(cli, ["verify", "--python", sys.executable, "--timeout", "2", "--checks",
                               "matmul,cuda_build", "--json"], limit=90)
    tally["vectors.deadline.standin"] += 1
    assert "Traceback" not in r.err
    assert r.code in (1, 2), (r.code, r.err)
    if r.code == 1:
        checks = {c["name"]: c for c in r.json()["checks"]}
        assert not [n for n, c in checks.items() if c["status"] == "pass"], checks
    # import 2×2 s + checks 2 s each, plus the start-up: never the 1000 s the stand-in asks for
    assert took < 40, took


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "\nState:\tZ" not in fh.read()
    except OSError:
        return False


ESCAPES = {
    "new-session": """
import subprocess, os
p = subprocess.Popen(["sleep", "1000"], start_new_session=True, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
open(os.environ["PIDFILE"], "w").write(str(p.pid))
""",
    "double-fork": """
import os
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        for n in (0, 1, 2):
            os.dup2(fd, n)
        os.write(w, str(os.getpid()).encode())
        os.close(w)
        import time
        time.sleep(1000)
    os._exit(0)
os.close(w)
open(os.environ["PIDFILE"], "w").write(os.read(r, 32).decode())
""",
    "clean-env-after-a-while": """
import subprocess, os, sys, time
code = ("import os, time, sys\\n"
        "time.sleep(0.8)\\n"
        "if os.fork() == 0:\\n"
        "    os.setsid()\\n"
        "    open(sys.argv[1], 'w').write(str(os.getpid()))\\n"
        "    time.sleep(1000)\\n"
        "os._exit(0)\\n")
subprocess.Popen([sys.executable, "-c", code, os.environ["PIDFILE"]], env={}, start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1.5)
""",
}


# "clean-env-after-a-while" clears its environment and double-forks between two looks (0.2 s) of the
# parent's tracking: only the supervisor (envcheck.supervise, a child subreaper) still finds it
@pytest.mark.parametrize("kind", ["double-fork", "new-session", "clean-env-after-a-while"])
def test_children_that_leave_the_group_are_ended(cli, tmp_path, monkeypatch, tally, kind):
    pidfile = tmp_path / "child.pid"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    monkeypatch.setenv("PYTHONPATH", str(standin(tmp_path, ESCAPES[kind] + "\n__version__ = '2.13.0+cpu'\n")))
    r, _ = run_verify(cli, ["verify", "--python", sys.executable, "--timeout", "5", "--checks", "import_torch",
                            "--json"], limit=90)
    assert "Traceback" not in r.err
    deadline = time.monotonic() + 5
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    tally["vectors.stray"] += 1
    if _alive(pid):
        os.kill(pid, 9)
        pytest.fail(f"{kind}: the child {pid} was left running")


def test_stream_ends_a_double_forked_daemon_of_a_plain_command(tmp_path):
    from envcheck.runner import start

    # (the program waits until the daemon wrote its pid: what it leaves is ended as soon as it ends)
    pid_file = tmp_path / "pid"
    s = start(["sh", "-c", f"(setsid sh -c 'sleep 1000 & echo $! > {pid_file}' </dev/null >/dev/null 2>&1 &); echo ok; "
               f"while [ ! -s {pid_file} ]; do sleep 0.05; done"])
    assert s.readline(10) == (s.LINE, "ok")
    time.sleep(0.5)
    s.finish()
    pid = int((tmp_path / "pid").read_text())
    time.sleep(0.2)
    assert not _alive(pid)
    assert s.left_behind >= 1


_ESCAPE_NOW = ("env -i sh -c '(setsid sh -c \"sleep 1000 & echo \\$! > %s\" </dev/null >/dev/null 2>&1 &)'; "
               "echo started")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
@pytest.mark.parametrize("ending", ["exits", "times out"])
def test_the_supervisor_ends_an_orphan_with_a_cleared_environment(tmp_path, ending):
    """A program whose grandchild clears its environment, leaves the session and is orphaned at once
    (no look of the parent's tracking can see it in time): re-parented to the supervisor, it is ended
    when the program exits, and when the program is killed at its deadline."""
    from envcheck.runner import start

    pidfile = tmp_path / "pid"
    go = tmp_path / "go"
    wait = f"; while [ ! -e {go} ]; do sleep 0.05; done"  # until the test has looked at the orphan
    s = start(["sh", "-c", _ESCAPE_NOW % pidfile + wait + ("; exit 3" if ending == "exits" else "; exec sleep 1000")])
    assert s.readline(30) == (s.LINE, "started")
    deadline = time.monotonic() + 10
    while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    with open(f"/proc/{pid}/environ", "rb") as fh:
        assert b"ENVCHECK_RUN_ID" not in fh.read()  # the mark is gone: only parentage finds it
    go.touch()
    if ending == "times out":
        s.kill(after=1)
    r = s.finish(timeout=30)
    time.sleep(0.2)
    if _alive(pid):
        stat = Path(f"/proc/{pid}/stat").read_text()
        os.kill(pid, 9)
        pytest.fail(f"{ending}: {pid} was left running: {stat}")
    if ending == "exits":
        assert r.returncode == 3 and r.error == "sh exited with status 3", r
        assert s.left_behind >= 1
    else:
        assert r.error == "sh timed out after 1 s", r


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
def test_the_supervisor_passes_the_programs_ending_through(tmp_path):
    """The supervisor exits as the program did: a signal stays a signal (named by the Result), stdout
    and stderr are the program's, and a program that cannot start is said so."""
    from envcheck.runner import start

    s = start(["sh", "-c", "echo out; echo err >&2; kill -SEGV $$"])
    assert s.readline(30) == (s.LINE, "out")
    r = s.finish(timeout=30)
    assert r.returncode == -11 and "SIGSEGV" in (r.error or ""), r
    assert r.stderr == "err\n"
    nx = tmp_path / "not-executable"
    nx.write_text("#!/bin/sh\n")
    r = start([str(nx)]).finish(timeout=30)
    assert r.returncode == 127 and "could not start" in r.stderr and "Permission denied" in r.stderr, r


# -- hostile index servers ---------------------------------------------------------------------------
def _headers_a_byte_at_a_time(h):
    try:
        for b in b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Pad: " + b"x" * 10000:
            h.wfile.write(bytes([b]))
            h.wfile.flush()
            time.sleep(0.1)
    except OSError:
        pass
    h.close_connection = True


def _deep_json(h):
    from tests.update.index_support import JSON_TYPE, send

    send(h, 200, b"[" * 200_000, JSON_TYPE)


def _charset(h):
    from tests.update.index_support import send

    send(h, 200, b"<html><body></body></html>", "text/html; charset=x-no-such-charset-42")


@pytest.mark.parametrize("route, words", [
    (_headers_a_byte_at_a_time, "did not arrive within"),
    (_deep_json, "nested too deeply"),
    (_charset, "character set"),
    ("tls", "TLS"),
])
def test_a_hostile_index_is_a_one_line_error_in_bounded_time(tmp_path, tally, route, words):
    import shutil

    from tests.update.index_support import IndexServer

    server = IndexServer()
    mx = tmp_path / "matrices"
    mx.mkdir()
    for p in (ROOT / "matrices").glob("*.toml"):
        if not p.name.startswith("generated-"):
            shutil.copy2(p, mx / p.name)
    before = sorted(p.name for p in mx.iterdir())
    try:
        url = f"{server.url}/whl/"
        if route == "tls":
            url = url.replace("http://", "https://")
        else:
            server.routes["/whl/torch/"] = route
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "envcheck", "matrix", "update", "--index", url, "--packages", "torch",
                            "--channel", "pytorch", "--matrices", str(mx), "--retries", "0", "--timeout", "0.5"],
                           capture_output=True, text=True, timeout=120)
        took = time.monotonic() - t0
    finally:
        server.close()
    tally["vectors.deadline.server"] += 1
    assert r.returncode == 3, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("envcheck:")]
    assert len(lines) == 1 and words in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert took < 60
    assert sorted(p.name for p in mx.iterdir()) == before


# -- files that never end ----------------------------------------------------------------------------
def _fifo(tmp_path: Path) -> str:
    p = tmp_path / "fifo"
    if not p.exists():
        os.mkfifo(p)
    return str(p)


FILE_FLAGS = [
    ["plan", "--machine", "{f}"],
    ["verify", "--lock", "{f}", "--facts", str(CASES / "C01.json")],
    ["verify", "--facts", "{f}"],
    ["explain", "--no-probe", "--facts", "{f}", "CUDA error"],
    ["fleet", "merge", "{f}"],
    ["fleet", "merge", str(CASES / "C01.json"), "--lock", "{f}"],
    ["docker", "build", "--lock", "{f}"],
    ["fleet", "k8s", "--lock", "{f}"],
]


@pytest.mark.parametrize("source", ["fifo", "/dev/zero", "/dev/urandom", "/dev/null"])
@pytest.mark.parametrize("argv", FILE_FLAGS, ids=lambda a: " ".join(a[:3]))
def test_a_file_that_never_ends_is_refused(cli, tmp_path, tally, source, argv):
    f = _fifo(tmp_path) if source == "fifo" else source
    args = [a.replace("{f}", f) for a in argv]
    r, _ = run_verify(cli, args, limit=60)
    tally["vectors.deadline.input_file"] += 1
    assert "Traceback" not in r.err, r.err
    assert r.code in (1, 2), (r.code, r.err)


@pytest.mark.parametrize("source", ["/dev/zero", "/dev/urandom"])
def test_explain_reads_stdin_with_a_cap(tally, source):
    with open(source, "rb") as fh:
        r = subprocess.run([sys.executable, "-m", "envcheck", "explain", "-"], stdin=fh, capture_output=True,
                           text=True, timeout=120)
    tally["vectors.deadline.input_file"] += 1
    assert r.returncode == 2 and "larger than" in r.stderr and "Traceback" not in r.stderr


def test_matrix_folder_with_a_fifo_is_refused(tmp_path, tally):
    import shutil

    mx = tmp_path / "m"
    mx.mkdir()
    for p in (ROOT / "matrices").glob("*.toml"):
        shutil.copy2(p, mx / p.name)
    victim = sorted(mx.glob("*.toml"))[0]  # a file the loader reads, now a FIFO
    victim.unlink()
    os.mkfifo(victim)
    r = subprocess.run([sys.executable, "-m", "envcheck", "plan", "--gpu", "A100", "--matrices", str(mx)],
                       capture_output=True, text=True, timeout=120)
    tally["vectors.deadline.input_file"] += 1
    assert r.returncode == 2 and "FIFO" in r.stderr and "Traceback" not in r.stderr
