"""Paths in the messages of plan --download, docker's wheelhouse, matrix validate and fleet merge go
through fsutil.shown(): a name holding a line break or an escape sequence is printed as ascii()
writes it, one inert line — it cannot fake a line of envcheck's output or retitle the terminal
(breaker5 F10, left by hfix7: only plan's and probe's "wrote" lines were done). matrix update:
tests/update/test_shown_paths_update.py."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

EVIL = "x\nWrote evil\x1b]0;PWNED\x07\x1b[31m"


def _inert(text: str) -> bool:
    return "\x1b" not in text and "\x07" not in text and "\nWrote evil" not in text


def test_plan_download_names_a_file_in_the_way_on_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / EVIL).write_text("the user's")
    r = run_cli(["plan", "--gpu", "RTX 4090", "--download", EVIL])
    assert r.code == 2, r.err
    assert r.err.count("\n") == 1 and _inert(r.err) and "\\x1b" in r.err, r.err


def test_matrix_validate_names_its_folder_on_one_line(tmp_path):
    r = run_cli(["matrix", "validate", "--matrices", str(tmp_path / EVIL)])
    assert r.code != 0
    assert _inert(r.out + r.err) and "\\x1b" in r.out, (r.out, r.err)


@pytest.mark.parametrize("json_out", [False, True])
def test_fleet_merge_names_a_skipped_report_on_one_line(tmp_path, json_out):
    d = tmp_path / "reps"
    d.mkdir()
    (d / f"{EVIL}.json").write_text(json.dumps({"not": "a report"}))
    r = run_cli(["fleet", "merge", str(d), *(["--json"] if json_out else [])])
    assert r.code == 2
    skipped = [ln for ln in r.err.splitlines() if "skipped" in ln]
    assert len(skipped) == 1 and "\\x1b" in skipped[0], r.err
    assert _inert(r.err) and (json_out or _inert(r.out)), (r.out, r.err)


def test_docker_wheelhouse_names_its_folder_on_one_line(tmp_path):
    from envcheck.app.plan import plan, request_from_flags
    from envcheck.docker.wheelhouse import WheelhouseError, prepare
    from tests.docker.conftest import CPU_FLAGS

    result = plan(request_from_flags(CPU_FLAGS, "test"))
    assert result.plan is not None
    d = tmp_path / EVIL
    d.mkdir()
    (d / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")  # torchvision is missing
    with pytest.raises(WheelhouseError) as exc:
        prepare(result.plan, d, result.plan.pins, "2.36")
    assert _inert(str(exc.value)) and "\\x1b" in str(exc.value), str(exc.value)
