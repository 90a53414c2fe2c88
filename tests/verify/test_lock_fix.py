"""``verify --lock LOCK``: the fix for a missing torch installs the LOCK's pins from the lock's
index — the plan the user chose — not a new plan for this host (breaker F9: a GPU-less host was
told to install torch+cpu against a cu130 lock, guaranteeing the lock check fails next run); and
when the lock is for another Python than the interpreter, it says so."""

from __future__ import annotations

import platform
import shlex
import subprocess
import sys

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.subprocess  # a real venv without torch


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory):
    d = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(d)], check=True, timeout=120)
    return d / "bin" / "python"


def _fix(out):
    line = next(ln for ln in out.splitlines() if "fix:" in ln and "lock's pins" in ln)
    return line.split("`")[1]


@pytest.mark.parametrize("python,other", [("3.14", True), (".".join(platform.python_version_tuple()[:2]), False)])
def test_the_fix_installs_the_locks_pins(tmp_path, bare_venv, python, other):
    out = tmp_path / "lc"
    r = run_cli(["plan", "--gpu", "H100", "--python", python, "-o", str(out)])
    assert r.code == 0, r.err
    r = run_cli(["verify", "--lock", str(out / "envcheck.lock.toml"), "--python", str(bare_venv), "--tier", "quick"])
    assert r.code == 1, r.err
    argv = shlex.split(_fix(r.out))
    assert argv[:4] == [str(bare_venv), "-m", "pip", "install"]
    pins = [a for a in argv if "==" in a]
    assert pins and all("+cu" in p for p in pins) and "+cpu" not in r.out.split("fix:")[1][:400], r.out
    assert argv[argv.index("--index-url") + 1].endswith("/cu130") or "/cu12" in argv[argv.index("--index-url") + 1]
    said = "The lock is for Python 3.14 and this interpreter is Python" in r.out
    assert said == (other and python != ".".join(platform.python_version_tuple()[:2])), r.out
