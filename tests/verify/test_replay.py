"""Every `verify` case of ../shared/cases, replayed as saved Facts: the check, diagnosis and fix it expects.

The facts files (tests/fixtures/verify/cases/<ID>.json) are rebuilt from each public report (the URL
and what was filled in are in their ``_source`` / ``_note``); the expectations come from cases.json.
"""

from __future__ import annotations

import json

import pytest

from tests.verify.conftest import CASES

VERIFY_CASES = sorted(p.stem for p in CASES.glob("C*.json"))


def test_every_verify_case_has_facts(cases):
    wanted = sorted(cid for cid, c in cases.items() if c["kind"] == "verify")
    assert wanted == VERIFY_CASES


@pytest.mark.parametrize("cid", VERIFY_CASES)
def test_case_replays_to_its_diagnosis(cli, cases, cid):
    exp = cases[cid]["expected"]
    r = cli(["verify", "--facts", str(CASES / f"{cid}.json"), "--json"])
    assert r.code == (1 if exp["status"] == "fail" else 0), r.err
    checks = {c["name"]: c for c in r.json()["checks"]}
    failed = checks[exp["failed_check"]]
    assert failed["status"] == "fail"
    for word in exp["diagnosis_contains"]:
        assert word in failed["detail"], (word, failed["detail"])
    for word in exp["fix_contains"]:
        assert word in failed["fix"], (word, failed["fix"])
    for name in exp.get("passed_checks_include", []):
        assert checks[name]["status"] == "pass", checks[name]
    others = [c["name"] for c in checks.values() if c["status"] == "fail" and c["name"] != exp["failed_check"]]
    assert others == []


def test_c01_fix_names_the_first_release_with_sm_120(cli, cases):
    r = cli(["verify", "--facts", str(CASES / "C01.json"), "--checks", "arch_compat", "--json"])
    (check,) = r.json()["checks"]
    first = cases["C01"]["expected"]["fix_min_torch"]
    assert f"The first release with code for sm_120 is torch {first}+cu128;" in check["fix"]
    assert "this driver (570.124.04) is enough" in check["fix"]


def test_replaying_a_whole_report_equals_replaying_its_facts(cli, tmp_path):
    first = cli(["verify", "--facts", str(CASES / "C07.json"), "--json"])
    report = tmp_path / "report.json"
    report.write_text(first.out)
    again = cli(["verify", "--facts", str(report), "--json"])
    assert again.code == first.code == 1
    assert json.loads(again.out)["checks"] == json.loads(first.out)["checks"]


def test_text_report_shows_the_fix(cli):
    r = cli(["verify", "--facts", str(CASES / "C09.json")])
    assert r.code == 1
    assert " FAIL cudnn_conv" in r.out
    assert "fix: Put the WSL driver libraries on the loader path: `export LD_LIBRARY_PATH=/usr/lib/wsl/lib" in r.out
    # a schema 1 case has no environment facts: that check skips (15 checks since the environment one)
    assert "15 checks: 3 passed, 0 warning(s), 11 skipped, 1 failed" in r.out
