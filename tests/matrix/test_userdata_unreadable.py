"""A user data folder that cannot be read (breaker4 F2) is a one-line warning, and the plan is made
from the shipped data — the data ``envcheck matrix update`` fetched is optional — never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

import envcheck.matrix as matrix_pkg
from envcheck.matrix import load_matrix

PLAN = [sys.executable, "-m", "envcheck", "plan", "--json", "--gpu", "RTX 4090", "--driver", "570"]


def _check(out):
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    warnings = [ln for ln in out.stderr.splitlines() if "user data folder" in ln]
    assert len(warnings) == 1 and "shipped data only" in warnings[0], out.stderr
    assert json.loads(out.stdout)["schema"] == "envcheck.plan.v1"


def test_a_folder_that_cannot_be_listed_is_a_warning(tmp_path, monkeypatch, capsys):
    """In-process and as any user (root too): a symbolic-link loop cannot be listed (ELOOP)."""
    data = tmp_path / "data"
    data.mkdir()
    os.symlink("index", data / "index")  # index → itself
    monkeypatch.setenv("ENVCHECK_DATA_DIR", str(data))
    monkeypatch.setenv("ENVCHECK_NO_CACHE", "1")
    matrix_pkg._load_cached.cache_clear()
    mx = load_matrix()
    assert mx.find_gpu("RTX 4090").name == "GeForce RTX 4090"
    err = capsys.readouterr().err
    assert err.count("cannot read the user data folder") == 1 and str(data / "index") in err


def test_a_missing_folder_is_silent(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ENVCHECK_DATA_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("ENVCHECK_NO_CACHE", "1")
    matrix_pkg._load_cached.cache_clear()
    load_matrix()
    assert capsys.readouterr().err == ""


@pytest.mark.subprocess
def test_a_folder_without_permission_is_a_warning_in_plan_json(tmp_path):
    """chmod 000 on the data folder; as root (who reads it anyway) the plan runs as nobody."""
    data = tmp_path / "data"
    (data / "index").mkdir(parents=True)
    data.chmod(0)
    env = {**os.environ, "ENVCHECK_DATA_DIR": str(data), "ENVCHECK_NO_CACHE": "1", "HOME": str(tmp_path)}
    cmd = PLAN
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.skip("root reads any folder, and setpriv (util-linux) is absent to run as another user")
        cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *PLAN]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd="/")
    finally:
        data.chmod(0o755)
    _check(out)
