"""Exit 3, "could not run": a tool envcheck runs is missing or failed, or an index could not be
reached — distinct from 1 ("no build fits" / "a check failed") and 2 (bad input).

newcomer3 #11: `plan --format pylock` without uv, `--format pylock` with the index unreachable,
`plan --download` when pip download fails and `plan --hashes` without `matrix update` data all
exited 1, the code of "no build for this GPU": a script could not tell them apart. The tools here
are real (no uv on PATH, no sbatch on PATH, a port nothing listens on).
"""

from __future__ import annotations

import socket

import pytest

from envcheck.cli import build_parser

PLAN = ["plan", "--backend", "cpu", "--os", "linux", "--torch", "2.13.0", "--python", "3.11"]


def _dead_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


def test_pylock_without_uv_is_could_not_run(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("ENVCHECK_UV", str(tmp_path / "no-uv-here"))
    r = cli([*PLAN, "--format", "pylock", "-o", str(tmp_path / "out")])
    assert r.code == 3, r.err
    assert "uv" in r.err and "not found" in r.err and "Traceback" not in r.err
    assert not (tmp_path / "out").exists()


def test_matrix_update_with_the_index_unreachable_is_could_not_run(cli, tmp_path):
    r = cli(["matrix", "update", "--index", f"http://127.0.0.1:{_dead_port()}/whl/", "--packages", "torch",
             "--data-dir", str(tmp_path / "data"), "--retries", "0"])
    assert r.code == 3, r.err
    assert "cannot connect" in r.err


def test_sbatch_missing_is_could_not_run(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no sbatch on it
    monkeypatch.chdir(tmp_path)
    r = cli(["fleet", "slurm", "--partition", "gpu", "--nodes", "1", "--submit", "--envcheck", "/usr/bin/true"])
    assert r.code == 3, r.err
    assert "sbatch not found" in r.err


def test_a_usage_error_is_still_2_and_no_fit_still_1(cli):
    assert cli(["plan", "--gpu", "no such gpu"]).code == 2
    assert cli(["plan", "--os", "macos", "--arch", "aarch64", "--backend", "cu128"]).code == 1


@pytest.mark.parametrize("path", [["plan"], ["docker", "build"], ["docker", "verify"], ["matrix", "update"]])
def test_help_says_what_3_means(path):
    parser = build_parser(path)
    sub = parser
    for word in path:
        sub = next(a for a in sub._actions if a.__class__.__name__ == "_SubParsersAction").choices[word]
    epilog = " ".join((sub.epilog or "").split())
    assert "3 could not run" in epilog, epilog[-600:]


def test_readme_documents_3():
    from tests.conftest import ROOT

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "· 3 could not run: a tool envcheck runs is missing or failed, or an index could not be reached" in text


def test_a_hanging_index_stops_uv_at_plans_timeout(cli, uv_bin, monkeypatch, tmp_path):
    """breaker2 F17 leftover: pylock waited a fixed 600 s for uv. `plan --timeout S` bounds it: the real
    uv against an index that accepts connections and never answers is stopped at the deadline."""
    import time

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    try:
        monkeypatch.setenv("ENVCHECK_UV", uv_bin)
        monkeypatch.setenv("UV_NO_CONFIG", "1")
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
        t0 = time.monotonic()
        r = cli([*PLAN, "--format", "pylock", "--mirror", f"http://127.0.0.1:{s.getsockname()[1]}",
                 "--timeout", "3", "-o", str(tmp_path / "out")])
        took = time.monotonic() - t0
    finally:
        s.close()
    assert r.code == 3, r.err
    assert "timed out after 3 s" in r.err and "plan --timeout S" in r.err, r.err
    assert took < 30, took
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad", ["0", "nan", "-5", "inf"])
def test_plan_timeout_must_be_a_number_of_seconds(cli, bad):
    r = cli([*PLAN, "--timeout", bad])
    assert r.code == 2 and "--timeout" in r.err
