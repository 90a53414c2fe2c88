"""Shared fixtures: the real matrix, an in-process CLI runner, named machines."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: the public cases and data files; beside the checkout, or where $ENVCHECK_TEST_SHARED says (a worktree)
SHARED = Path(os.environ.get("ENVCHECK_TEST_SHARED") or ROOT.parent / "shared")


@pytest.fixture(autouse=True, scope="session")
def _private_matrix_cache(tmp_path_factory):
    """Tests parse many scratch matrices: keep their cache out of the user's ~/.cache."""
    import os

    saved = {k: os.environ.get(k) for k in ("ENVCHECK_CACHE_DIR", "ENVCHECK_DATA_DIR")}
    os.environ["ENVCHECK_CACHE_DIR"] = str(tmp_path_factory.mktemp("envcheck-cache"))
    # and the user's `matrix update` data out of the answers (the golden files hold shipped data only)
    os.environ["ENVCHECK_DATA_DIR"] = str(tmp_path_factory.mktemp("envcheck-data"))
    yield
    for k, old in saved.items():
        if old is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = old


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_cli(args: List[str]) -> CliResult:
    """Run ``envcheck ARGS`` in-process; exit code, stdout, stderr."""
    from envcheck.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session")
def matrix():
    from envcheck.matrix import load_matrix

    return load_matrix()


@pytest.fixture(scope="session")
def cases():
    """The public bug-report cases (../shared/cases/cases.json), by id."""
    path = SHARED / "cases" / "cases.json"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared cases live beside the checkout)")
    return {c["id"]: c for c in json.loads(path.read_text())}


def plan_for(matrix, request=None, **flags):
    """Resolve for a machine described by flags (as `envcheck plan --gpu …` would)."""
    from envcheck.machine.describe import apply_flags
    from envcheck.resolve import Request, resolve

    gpus = flags.pop("gpus", ())
    machine = apply_flags(matrix, None, gpus=gpus, **flags)
    return resolve(machine, request or Request(), matrix)


#: markers that declare a test may start child processes (docker and slow tests do by nature)
SPAWN_MARKERS = ("subprocess", "docker", "slow")


@pytest.fixture(autouse=True)
def _subprocess_needs_a_marker(request, monkeypatch):
    """A unit test that starts a child process without ``@pytest.mark.subprocess`` fails.

    Child processes make a test slow, machine-dependent and able to leak; the marker says so and
    lets ``-m 'not subprocess'`` run the pure tests alone. Every start goes through
    ``subprocess.Popen`` (``run``, ``check_output``, envcheck's runner) or ``os.posix_spawn`` /
    ``os.fork``; each is recorded and the test fails at teardown (so code under test that catches
    errors cannot hide it), naming what was started.
    """
    if any(request.node.get_closest_marker(m) for m in SPAWN_MARKERS):
        yield
        return
    import os
    import subprocess

    started: List[str] = []
    real_init = subprocess.Popen.__init__

    def popen_init(self, args, *a, **kw):
        started.append(repr(args)[:200])
        return real_init(self, args, *a, **kw)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen_init)
    for name in ("posix_spawn", "posix_spawnp", "fork"):
        real = getattr(os, name, None)
        if real is not None:
            def spawn(*a, _real=real, _name=name, **kw):
                started.append(f"os.{_name}{repr(a[:2])[:200]}")
                return _real(*a, **kw)

            monkeypatch.setattr(os, name, spawn)
    yield
    if started:
        pytest.fail(f"{request.node.nodeid} started {len(started)} child process(es) without "
                    f"@pytest.mark.subprocess: {started[0]}", pytrace=False)


#: the head of a child script (``python -c``): its fsync touches the file ``sys.argv[2]`` and then holds
#: for 60 s (a slow disk, NFS), so a test signals it mid-write; ``main`` is envcheck's entry point
HELD_FSYNC = r"""
import os, sys, time
real = os.fsync
def held(fd):
    open(sys.argv[2], "w").close()
    time.sleep(60)
    real(fd)
os.fsync = held
from envcheck.entry import main
"""


def signal_mid_write(cmd: List[str], ready: Path, sig: int, under_way: Any, **popen: Any) -> tuple[int, str]:
    """Start ``cmd`` (a child whose write holds in fsync after touching ``ready``), wait (deadline
    120 s) for it to be there, check ``under_way()`` (the write's temporary file exists), send ``sig``;
    the exit code and stderr. SIGINT is left at its default in the child, as in a terminal."""
    import signal
    import subprocess
    import time

    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **popen)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the write never started"
            time.sleep(0.05)
        assert under_way(), "the write should be under way"
        child.send_signal(sig)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode, err
