"""--python takes what people type (as uv and nox do): a path, an environment folder, a name on
PATH, or a version found on PATH or by the real `uv python find`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from envcheck.errors import UsageError
from envcheck.pyfind import find_python

MM = f"{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture
def bindir(tmp_path, monkeypatch):
    d = tmp_path / "bin"
    d.mkdir()
    os.symlink(sys.executable, d / f"python{MM}")
    os.symlink(sys.executable, d / "python3")
    monkeypatch.setenv("PATH", str(d))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    return d


def test_a_name_on_path(bindir):
    assert find_python("python3") == str(bindir / "python3")
    assert find_python(f"python{MM}") == str(bindir / f"python{MM}")


def test_a_version_found_on_path(bindir):
    assert find_python(MM) == str(bindir / f"python{MM}")


def test_a_version_found_by_uv(tmp_path, monkeypatch, uv_bin):
    """Nothing on PATH: uv finds the interpreter of the active environment (VIRTUAL_ENV)."""
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("ENVCHECK_UV", uv_bin)
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    found = find_python(MM)
    assert os.path.samefile(os.path.dirname(found), venv / "bin")


def test_a_folder_and_a_path(tmp_path):
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    assert find_python(str(venv)) == str(venv / "bin" / "python")
    assert find_python(str(venv / "bin" / "python3")) == str(venv / "bin" / "python3")


@pytest.mark.parametrize("text,words", [("3.99", "python3.99"), ("pythonx", "not a file"),
                                        ("./python3", "no such interpreter")])
def test_unknown_is_a_usage_error(bindir, monkeypatch, tmp_path, text, words):
    monkeypatch.setenv("ENVCHECK_UV", str(tmp_path / "no-uv"))
    with pytest.raises(UsageError) as e:
        find_python(text)
    assert words in str(e.value)


def test_verify_cli_unknown_version_is_exit_2(cli, bindir, monkeypatch, tmp_path):
    monkeypatch.setenv("ENVCHECK_UV", str(tmp_path / "no-uv"))
    r = cli(["verify", "--python", "3.99"])
    assert r.code == 2 and "3.99" in r.err and "Traceback" not in r.err
