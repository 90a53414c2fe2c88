"""A command that fails leaves nothing it made, and everything the user had.

newcomer3 #11: `plan --download offline/` where pip download failed exited 1 and left an empty
`offline/wheels/` the user never had; a folder `-o` created for a set that then failed stayed too.
Real parts: a real pip against a real (empty, or never-answering) index on 127.0.0.1, real folders.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envcheck.errors import UsageError
from tests.localhttp import serve_directory

pytestmark = pytest.mark.subprocess  # pip runs for real


@pytest.fixture
def empty_index(tmp_path, monkeypatch):
    """A PEP 503 index on 127.0.0.1 that serves no project at all; pip reads nothing else."""
    root = tmp_path / "index"
    (root / "cpu").mkdir(parents=True)
    (root / "cpu" / "index.html").write_text("<!DOCTYPE html><html><body></body></html>")
    for k in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    with serve_directory(root) as url:
        yield url


def _download(cli, url, target):
    return cli(["plan", "--backend", "cpu", "--os", "linux", "--torch", "2.13.0", "--python", "3.11",
                "--mirror", url, "--download", str(target)])


def _tree(d: Path):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


def test_failed_download_into_a_new_folder_leaves_no_folder(cli, empty_index, tmp_path):
    target = tmp_path / "new" / "offline"
    r = _download(cli, empty_index, target)
    assert r.code == 3, r.err  # could not run (newcomer3 #11): not 1, "no build fits"
    assert "pip download failed" in r.err and "Traceback" not in r.err
    assert not (tmp_path / "new").exists(), _tree(tmp_path / "new")


def test_a_download_folder_with_other_wheels_names_plans_own_flag(cli, empty_index, tmp_path):
    """breaker4 F8: a --download folder whose wheels/ lacks the pinned wheels advised `--wheelhouse`, a
    flag of docker build that plan does not have; what the user had stays."""
    target = tmp_path / "dl"
    (target / "wheels").mkdir(parents=True)
    (target / "wheels" / "old-1.0-py3-none-any.whl").write_text("w")
    r = _download(cli, empty_index, target)
    assert r.code == 3 and "point --download at an empty folder" in r.err and "--wheelhouse" not in r.err, r.err
    assert _tree(target) == ["wheels", "wheels/old-1.0-py3-none-any.whl"]


def test_failed_download_keeps_what_the_user_had_and_only_that(cli, empty_index, tmp_path):
    target = tmp_path / "offline"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _download(cli, empty_index, target).code == 3
    assert _download(cli, empty_index, empty).code == 3
    assert _tree(target) == ["notes.txt"] and (target / "notes.txt").read_text() == "mine"
    assert empty.is_dir() and _tree(empty) == []


def test_failed_wheelhouse_download_leaves_no_folder(empty_index, tmp_path):
    """The same rule for every wheelhouse download (`docker build --wheelhouse DIR` goes through it)."""
    from envcheck.app.plan import plan as make, request_from_flags
    from envcheck.docker.wheelhouse import WheelhouseError, prepare

    plan = make(request_from_flags(["--backend", "cpu", "--os", "linux", "--torch", "2.13.0", "--python", "3.11",
                                    "--mirror", empty_index], "test")).plan
    target = tmp_path / "a" / "wheelhouse"
    with pytest.raises(WheelhouseError):
        prepare(plan, target, dict(plan.pins), "2.28")
    assert not (tmp_path / "a").exists()


def _silent_server():
    """A socket on 127.0.0.1 that accepts connections and never answers: pip waits on it."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s


def test_interrupted_download_leaves_no_folder(tmp_path):
    """SIGTERM (a CI job cancelled, Ctrl-C's cousin) in the middle of pip download: the folder
    envcheck made is gone, and pip is stopped too."""
    srv = _silent_server()
    try:
        url = f"http://127.0.0.1:{srv.getsockname()[1]}"
        target = tmp_path / "offline"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
        env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_DEFAULT_TIMEOUT="60")
        proc = subprocess.Popen([sys.executable, "-m", "envcheck", "--no-config", "plan", "--backend", "cpu",
                                 "--os", "linux", "--torch", "2.13.0", "--python", "3.11", "--mirror", url,
                                 "--download", str(target)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not (target / "wheels").is_dir() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert (target / "wheels").is_dir(), "the download never started"
        time.sleep(1.0)  # pip is connected and waiting
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err.decode()[-2000:]  # interrupted
        assert b"Traceback" not in err, err.decode()[-2000:]
        assert not target.exists(), _tree(target)
    finally:
        srv.close()


def test_a_set_that_fails_removes_the_folders_it_made(tmp_path):
    from envcheck import fsutil

    def boom(i, name):
        raise OSError(28, "No space left on device")

    target = tmp_path / "x" / "y"
    with pytest.raises(UsageError, match="No space left"):
        fsutil.write_set(target, {"a.txt": "a", "b.txt": "b"}, _hook=boom)
    assert not (tmp_path / "x").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    with pytest.raises(UsageError, match="No space left"):
        fsutil.write_set(mine, {"a.txt": "a"}, _hook=boom)
    assert mine.is_dir() and _tree(mine) == []


def test_a_folder_another_writer_filled_is_never_removed(tmp_path):
    """The folders are removed only when still empty: a concurrent writer's files stay."""
    from envcheck import fsutil

    target = tmp_path / "x"

    def other_writer_then_fail(i, name):
        (target / "theirs.txt").write_text("theirs")
        raise OSError(28, "No space left on device")

    with pytest.raises(UsageError, match="No space left"):
        fsutil.write_set(target, {"a.txt": "a"}, _hook=other_writer_then_fail)
    assert (target / "theirs.txt").read_text() == "theirs"


@pytest.mark.parametrize("args", [
    ["probe", "-o", "newA/../m.json"],                   # one file: m.json is there, no --force
    ["plan", "--gpu", "RTX 4090", "-o", "nope/.."],      # a set: requirements.txt is there
    ["plan", "--gpu", "RTX 4090", "-o", "a/b/../../x"],  # x/requirements.txt is there
])
def test_a_refused_write_through_dotdot_leaves_no_folder_it_made(tmp_path, monkeypatch, args):
    """breaker5 F8: the cleanup tried rmdir('nope/..'), failed, and stopped: nope/ stayed."""
    from tests.conftest import run_cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.json").write_text("mine")
    (tmp_path / "requirements.txt").write_text("mine")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "requirements.txt").write_text("mine")
    out = run_cli(args)
    assert out.code == 2 and "refusing to overwrite" in out.err, out.err
    assert sorted(os.listdir(tmp_path)) == ["m.json", "requirements.txt", "x"]
    assert os.listdir(tmp_path / "x") == ["requirements.txt"]
    assert {p.read_text() for p in tmp_path.rglob("*") if p.is_file()} == {"mine"}
