"""The docker use cases (envcheck.app.docker) where no engine is needed: the plan an image is
built from, a CI target rendered only when its wheels cannot be had, bad input before any work."""

from __future__ import annotations

import json

import pytest

from envcheck.app.docker import BuildResult, CiRequest, build_plan, docker_ci
from envcheck.app.plan import PlanRequest, Target
from envcheck.errors import NoCompatibleBuild, OutputExistsError, UsageError
from tests.conftest import run_cli

CPU = PlanRequest(target=Target(os="linux", arch="x86_64", python="3.11"), torch="2.13.0", backend="cpu")


def test_the_plan_from_flags_and_from_its_lock_agree(tmp_path):
    matrix, plan = build_plan(None, CPU)
    assert plan.pins["torch"] == "2.13.0+cpu"
    r = run_cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--os", "linux",
                 "--arch", "x86_64", "--format", "lock", "-o", str(tmp_path), "--force"])
    assert r.code == 0, r.err
    _, again = build_plan(tmp_path / "envcheck.lock.toml", None)
    assert again.pins == plan.pins and again.candidate.build.variant == "cpu"


def test_no_build_fits_is_exit_1():
    with pytest.raises(NoCompatibleBuild) as err:
        build_plan(None, PlanRequest(target=Target(os="macos", arch="arm64"), backend="cu128"))
    assert err.value.exit_code == 1


def test_build_result_round_trip():
    d = {"tag": "t:1", "id": "sha256:abc", "base_image": "debian", "pins": {"torch": "2.13.0+cpu"},
         "wheels": "host", "notes": ["n"], "seconds": 1.5, "dockerfile": "FROM debian\n"}
    assert BuildResult.from_dict(d).to_json() == d


def test_ci_bad_input_before_any_work(tmp_path):
    with pytest.raises(UsageError, match="no ci_target 'nope'.*known: cpu"):
        docker_ci(CiRequest(target="nope"))
    report = tmp_path / "r.json"
    report.write_text("mine")
    with pytest.raises(OutputExistsError):
        docker_ci(CiRequest(target="cpu", report=report))
    assert report.read_text() == "mine"


@pytest.mark.subprocess
def test_ci_target_without_wheels_is_rendered_only(tmp_path):
    """matrices/docker.toml's rocm target: no ROCm wheel can be fetched here (no network but PyPI)."""
    lines = []
    result = docker_ci(CiRequest(target="rocm", report=tmp_path / "rocm.json", wheelhouse_root=tmp_path / "wh"),
                       say=lines.append)
    assert result.status == "rendered" and result.exit_code == 0 and result.verified is None
    doc = json.loads((tmp_path / "rocm.json").read_text())
    assert doc == result.document and doc["dockerfile"].startswith(("FROM", "#", "ARG"))
    assert "rocm" in doc["reason"] and any("cannot be had here" in line for line in lines)


@pytest.mark.subprocess  # pip download runs (and fails: no ROCm wheel here)
def test_ci_report_line_prints_a_control_character_path_inert(tmp_path):
    """hfix10 put `docker ci`'s "(report: …)" through fsutil.shown() untested through the CLI: a report
    name holding ESC/BEL and a newline must print as one inert line (breaker5 F10), and the report is
    still written under its real name. The rocm target is rendered only here (no engine needed)."""
    report = tmp_path / "r\x1b]0;owned\x07\nFAIL fake.json"
    r = run_cli(["docker", "ci", "rocm", "--wheelhouse-root", str(tmp_path / "wh"), "--report", str(report)])
    assert r.code == 0, r.err[-1500:]
    assert r.out.count("\n") == 1 and r.out.startswith("ci target rocm: rendered"), r.out
    assert r.out.rstrip("\n").endswith(f" (report: {ascii(str(report))})"), r.out
    assert "\x1b" not in r.out + r.err and "\x07" not in r.out + r.err, (r.out, r.err)
    assert json.loads(report.read_text())["target"] == "rocm"
