"""A path through a folder the user may not enter (EACCES: a 0700 folder of another user, a shared
cluster folder of another group) is bad input: one line, exit 2, never a traceback (breaker5 F2).
Run as nobody, so root's power to enter any folder does not hide the error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.subprocess


def _as_nobody(args, tmp_path):
    cmd = [sys.executable, "-m", "envcheck", *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.skip("root enters any folder, and setpriv (util-linux) is absent to run as another user")
        cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    env = {**os.environ, "ENVCHECK_NO_CACHE": "1", "HOME": "/"}
    if os.geteuid() == 0:
        can = subprocess.run([*cmd[:cmd.index(sys.executable)], sys.executable, "-c", "import envcheck"],
                             capture_output=True, text=True, timeout=120, env=env, cwd="/")
        if can.returncode != 0:  # a checkout (and its venv) in a folder nobody may enter, e.g. /root
            pytest.skip(f"nobody cannot run this checkout's python: {can.stderr.strip()[-200:]}")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd="/")


@pytest.mark.parametrize("args, names", [
    (["probe", "-o", "{locked}/x/y.json"], "-o {locked}/x/y.json"),
    (["probe", "-o", "{locked}/x"], "-o {locked}/x"),  # a folder behind it ("x/" is refused as a folder's name)
    (["verify", "--facts", "{locked}/v.json", "--report", "{locked}/x/y.json"], "{locked}"),
    (["fleet", "merge", "{locked}/x"], "{locked}/x"),
    (["fleet", "diff", "{locked}/a", "{locked}/b"], "{locked}/a"),
])
def test_a_folder_the_user_cannot_enter_is_one_line_exit_2(tmp_path, args, names):
    locked = tmp_path / "locked"
    (locked / "x").mkdir(parents=True)
    locked.chmod(0o700)
    if os.geteuid() != 0 and os.access(locked, os.X_OK):
        locked.chmod(0)
    try:
        out = _as_nobody([a.format(locked=locked) for a in args], tmp_path)
    finally:
        locked.chmod(0o755)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("envcheck: error: "), out.stderr
    assert names.format(locked=locked) in lines[0] and "Permission denied" in lines[0], lines[0]
