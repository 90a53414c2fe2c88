"""`matrix update` writes to a per-user data folder, never into the installed package, and `plan`
reads the shipped matrices plus that folder (issue #9)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from envcheck.matrix import default_matrix_dir, load_matrix
from envcheck.matrix.userdata import user_data_dir, user_index_dir
from tests.update.index_support import snapshot

SHA = hashlib.sha256(b"not a real wheel").hexdigest()
WHEEL = "torch-2.7.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"
PAGE = f'<html><body>\n<a href="/whl/cu128/{WHEEL}#sha256={SHA}">x</a>\n</body></html>\n'.encode()


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "user-data"
    monkeypatch.setenv("ENVCHECK_DATA_DIR", str(d))
    return d


def _update(cli, server, *extra):
    server.html("/whl/torch/", PAGE)
    return cli(["matrix", "update", "--index", f"{server.url}/whl/", "--channel", "pytorch", "--packages", "torch",
                "--retries", "0", *extra])


def test_update_writes_to_the_user_data_folder_not_the_package(cli, server, data_dir):
    shipped = default_matrix_dir()
    before = snapshot(shipped)
    r = _update(cli, server)
    assert r.code == 0, r.err
    written = data_dir / "index" / "generated-index-pytorch-torch.toml"
    assert written.is_file() and SHA in written.read_text()
    assert snapshot(shipped) == before  # the installed package is never written
    # plan/status read the shipped matrices plus the user's data
    data = load_matrix().index_data()
    (f,) = data.select("pytorch", "torch", "2.7.1+cu128", "linux-x86_64", "3.12")
    assert f.sha256 == SHA
    st = cli(["matrix", "status", "--json"])
    assert st.code == 0 and [i["package"] for i in st.json()["indexes"]] == ["torch"]


def test_data_dir_flag_and_explicit_matrices(cli, server, data_dir, mx, tmp_path):
    out = tmp_path / "elsewhere"
    out.mkdir()
    r = _update(cli, server, "--data-dir", str(out))
    assert r.code == 0, r.err
    assert not (data_dir / "index").exists()
    # one path rule (breaker3 F10): --data-dir DIR is the folder ENVCHECK_DATA_DIR=DIR names — the
    # files go to DIR/index, where plan and status then read them (before: DIR itself, never read)
    assert [str(p.relative_to(out)) for p in sorted(out.rglob("*"))] == ["index", "index/generated-index-pytorch-torch.toml"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ENVCHECK_DATA_DIR", str(out))
        st = cli(["matrix", "status", "--json"])
        assert st.code == 0 and [i["package"] for i in st.json()["indexes"]] == ["torch"], st.out + st.err
        (f,) = load_matrix().index_data().select("pytorch", "torch", "2.7.1+cu128", "linux-x86_64", "3.12")
        assert f.sha256 == SHA
    # an explicit --matrices folder is read alone, and written to when no --data-dir is given
    r = _update(cli, server, "--matrices", str(mx))
    assert r.code == 0, r.err
    assert (mx / "generated-index-pytorch-torch.toml").is_file()
    assert load_matrix(mx).index_data().select("pytorch", "torch", "2.7.1+cu128", "linux-x86_64", "3.12")


def test_status_without_user_data_says_run_update(cli, data_dir):
    r = cli(["matrix", "status"])
    assert r.code == 3 and "run `envcheck matrix update`" in r.out


def test_platform_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("ENVCHECK_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        assert user_data_dir() == tmp_path / ".local" / "share" / "envcheck"
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
        assert user_index_dir() == tmp_path / "xdg" / "envcheck" / "index"
        monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")  # the XDG spec: relative paths are invalid
        assert user_data_dir() == tmp_path / ".local" / "share" / "envcheck"
    monkeypatch.setenv("ENVCHECK_DATA_DIR", os.fspath(tmp_path / "mine"))
    assert user_index_dir() == tmp_path / "mine" / "index"
