"""The `matrix update` / `matrix status` command line, and the update against real PyPI (marker network)."""

from __future__ import annotations

import socket

import pytest

from envcheck.matrix import load_matrix


def test_update_help_teaches(cli):
    r = cli(["matrix", "update", "--help"])
    assert r.code == 0
    for text in ("--index", "--packages", "--variants", "--dry-run", "--json", "exit codes",
                 "envcheck matrix update --index https://pypi.org/simple/"):
        assert text in r.out


def test_status_help(cli):
    r = cli(["matrix", "status", "--help"])
    assert r.code == 0 and "unverified" in r.out and "examples" in r.out


def test_show_and_validate_still_work(cli):
    r = cli(["matrix", "show", "--torch", "2.7.1", "--variant", "cu128", "--json"])
    assert r.code == 0 and {row["torch"] for row in r.json()["builds"]} == {"2.7.1"}


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


@pytest.mark.network
def test_update_from_real_pypi(cli, mx):
    """Plain PyPI: PEP 691 JSON, files on files.pythonhosted.org, recorded as channel "pypi"."""
    if not _pypi_reachable():
        pytest.skip("pypi.org is not reachable from here")
    r = cli(["matrix", "update", "--index", "https://pypi.org/simple/", "--packages", "torchaudio",
             "--matrices", str(mx), "--json"])
    assert r.code == 0, r.err
    (pkg,) = r.json()["packages"]
    assert r.json()["channel"] == "pypi"
    assert pkg["pages"] == ["https://pypi.org/simple/torchaudio/"] and pkg["files"] > 100
    data = load_matrix(mx).index_data()
    files = data.select("pypi", "torchaudio", "2.7.1", "linux-x86_64", "3.12")
    assert len(files) == 1 and len(files[0].sha256) == 64 and files[0].subindex == ""
    rows = [w for w in load_matrix(mx).index_wheels if w.version == "2.7.1"]
    assert rows[0].uploaded.startswith("2025-06") and rows[0].source == ("https://pypi.org/simple/torchaudio/",)
