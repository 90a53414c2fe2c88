"""The matrix use cases (envcheck.app.matrix) called as a library: typed results, nothing printed."""

from __future__ import annotations

import shutil

import pytest

from envcheck.app.matrix import builds, index_status, validate_matrix
from envcheck.errors import UsageError
from envcheck.matrix import default_matrix_dir


def test_builds_filtered_by_release_and_variant(capsys):
    found = builds(torch="2.7", variant="cu128")
    assert found.rows and {(r.version, b.variant) for r, b in found.rows} <= {("2.7.0", "cu128"), ("2.7.1", "cu128")}
    rows = [d for d in found.to_json() if d["torch"] == "2.7.0"]
    assert rows and all(d["cuda"].startswith("12.8") and d["source"] for d in rows)
    assert any("sm_120" in d["sm"] for d in rows)  # 2.7.0 was the first release with Blackwell kernels
    assert builds(torch="2.7", variant="no-such").rows == ()
    with pytest.raises(UsageError):
        builds(torch="two point seven")
    assert capsys.readouterr() == ("", "")


def test_validate_matrix_finds_a_broken_reference(tmp_path):
    assert validate_matrix().exit_code == 0 and validate_matrix().directory == default_matrix_dir()
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    p = d / "torch-releases.toml"
    text = p.read_text()
    assert 'version = "2.7.0"' in text
    p.write_text(text.replace('version = "2.7.0"', 'version = "2.7.0.post99"', 1))  # its builds now point nowhere
    checked = validate_matrix(d)
    assert checked.exit_code == 1 and checked.errors
    assert checked.to_json()["ok"] is False and checked.to_json()["directory"] == str(d)


def test_index_status_without_generated_data(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVCHECK_DATA_DIR", str(tmp_path / "empty"))
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d, ignore=shutil.ignore_patterns("generated-*"))
    assert index_status(d).indexes == []


def test_search_gpus():
    from envcheck.app.matrix import search_gpus

    found = search_gpus("7900 xtx")
    assert [g.arch for g in found.gpus] and {g.arch for g in found.gpus} == {"gfx1100"} and found.exit_code == 0
    assert found.to_json()[0]["source"]
    missing = search_gpus("RTX 9999 Ultra")
    assert missing.gpus == () and missing.unknown and missing.exit_code == 1


def test_check_locks(tmp_path):
    from envcheck.app.matrix import check_locks
    from tests.conftest import run_cli

    r = run_cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--os", "linux",
                 "--arch", "x86_64", "--format", "lock", "-o", str(tmp_path), "--force"])
    assert r.code == 0, r.err
    checked = check_locks([tmp_path / "envcheck.lock.toml"])
    (only,) = checked.results
    assert only.status in ("ok", "outdated") and checked.exit_code == 0
    assert checked.to_json()["locks"][0]["path"] == str(tmp_path / "envcheck.lock.toml")
