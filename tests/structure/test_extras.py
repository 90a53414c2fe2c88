"""Optional dependencies: plan/probe/verify/explain run with packaging (+tomli, tomli-w, rich) only;
docker, requests and junitparser are extras (NVML is read without a package), and a command that needs a missing one
says in one line which extra to install (exit 2, no traceback)."""

from __future__ import annotations

import subprocess
import sys

import pytest

BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {blocked!r}:
            raise ImportError('blocked for this test: ' + name)
sys.meta_path.insert(0, Block())
from envcheck.cli import main
sys.exit(main({argv!r}))
"""


def run_without(blocked, argv, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "ENVCHECK_DATA_DIR": str(tmp_path / "data"),
           "ENVCHECK_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", BLOCK.format(blocked=set(blocked), argv=list(argv))],
                          capture_output=True, text=True, env=env, timeout=120)


OPTIONAL = {"docker", "requests", "urllib3", "junitparser", "pynvml"}


@pytest.mark.subprocess
@pytest.mark.parametrize("argv", [
    ["plan", "--gpu", "RTX 4090", "--json"],
    ["explain", "--no-probe", "CUDA error: no kernel image is available for execution on the device"],
    ["gpus", "4090", "--json"],
])
def test_core_commands_need_no_extra(argv, tmp_path):
    r = run_without(OPTIONAL, argv, tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr and "extra" not in r.stderr


@pytest.mark.subprocess
@pytest.mark.parametrize("blocked, argv, extra", [
    ({"docker"}, ["docker", "verify", "some/image"], "docker"),
    ({"requests"}, ["matrix", "update", "--dry-run"], "update"),
])
def test_a_missing_extra_is_named(blocked, argv, extra, tmp_path):
    r = run_without(blocked, argv, tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.strip().splitlines() == [
        r.stderr.strip().splitlines()[0]]  # one line
    assert f"pip install 'envcheck[{extra}]'" in r.stderr and "Traceback" not in r.stderr


def test_extras_are_declared():
    from pathlib import Path

    from envcheck.matrix.load import tomllib

    doc = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    deps = " ".join(doc["project"]["dependencies"])
    for name in ("docker", "requests", "junitparser", "nvidia-ml-py"):
        assert name not in deps
    extras = doc["project"]["optional-dependencies"]
    assert {"docker", "update", "junit", "all"} <= set(extras)
