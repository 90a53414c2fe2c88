"""breaker F17: `verify --facts F` where F holds no result of the checks asked was "15 checks: 0 passed,
15 skipped", exit 0 — and, written as a node report, `fleet merge` counted that node as a pass.
Nothing was verified: saved facts without results are bad input (exit 2, one line naming `runs`),
no report is written, and a node report whose every check skipped is never a passing node."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT

CASES = ROOT / "tests" / "fixtures" / "verify" / "cases"


def _facts(tmp_path, runs, **more):
    f = tmp_path / "facts.json"
    f.write_text(json.dumps({"schema": 2, "python": {"version": "3.12.3"}, "platform": {"os": "linux"},
                             "runs": runs, **more}))
    return f


@pytest.mark.parametrize("schema", [1, 2])
def test_facts_without_any_result_are_bad_input(cli, tmp_path, schema):
    f = tmp_path / "empty.json"
    f.write_text(json.dumps({"schema": schema, "runs": {}}))
    r = cli(["verify", "--facts", str(f)])
    assert r.code == 2 and r.out == "", r
    assert r.err == (f"envcheck: error: {f}: runs: nothing to judge: no check result (runs is empty) — "
                     "save facts with `envcheck verify --save-facts FILE`\n")


def test_a_whole_verify_report_without_results_is_bad_input_too(cli, tmp_path):
    f = tmp_path / "report.json"
    f.write_text(json.dumps({"schema": "envcheck.verify.v1", "checks": [], "facts": {"schema": 2, "runs": {}}}))
    r = cli(["verify", "--facts", str(f), "--json"])
    assert r.code == 2 and "runs: nothing to judge" in r.err
    assert json.loads(r.out)["schema"] == "envcheck.error.v1"  # --json: the error document, not a passing report


def test_facts_of_other_checks_only_name_what_they_hold(cli, tmp_path):
    """matmul's result alone cannot judge cudnn_conv (nor does import_torch's absence pass it)."""
    f = _facts(tmp_path, {"matmul": {"outcome": "ok", "data": {"results": []}}})
    r = cli(["verify", "--facts", str(f), "--checks", "cudnn_conv"])
    assert r.code == 2 and "no result of the checks asked (cudnn_conv); these facts hold matmul" in r.err, r.err
    ok = cli(["verify", "--facts", str(f), "--checks", "matmul"])
    assert ok.code != 2 and "nothing to judge" not in ok.err


def test_one_recorded_result_is_judged(cli):
    """The recorded cases (real machines' facts) still replay: each holds results."""
    for case in sorted(CASES.glob("*.json")):
        r = cli(["verify", "--facts", str(case), "--json"])
        assert r.code in (0, 1), (case.name, r.err)
        assert json.loads(r.out)["schema"] == "envcheck.verify.v1"


def test_no_node_report_is_written_for_facts_without_results(cli, tmp_path):
    f = tmp_path / "empty.json"
    f.write_text(json.dumps({"schema": 1, "runs": {}}))
    reports = tmp_path / "reports"
    r = cli(["verify", "--facts", str(f), "--report", f"{reports}/", "--host", "n1"])
    assert r.code == 2 and not (reports / "n1.json").exists()


def test_fleet_merge_never_counts_a_node_that_judged_nothing_as_a_pass(cli, tmp_path):
    """A report whose every check skipped (written before this fix, or by hand) is named and skipped:
    exit 2, and the node is not among the passing ones."""
    reports = tmp_path / "reports"
    r = cli(["verify", "--facts", str(CASES / "C01.json"), "--report", f"{reports}/", "--host", "n1"])
    assert (reports / "n1.json").exists(), r.err
    doc = json.loads((reports / "n1.json").read_text())
    doc["host"]["id"] = "n2"
    doc["checks"] = [{**c, "status": "skip"} for c in doc["checks"]]
    doc["status"] = "pass"
    (reports / "n2.json").write_text(json.dumps(doc))
    merged = cli(["fleet", "merge", str(reports), "--json"])
    out = json.loads(merged.out)
    assert merged.code == 2 and out["passed"] + out["failed"] == 1
    assert [s["reason"] for s in out["skipped"]] == [
        "checks: no check was judged (every one skipped): nothing says this node works"]


def test_quick_facts_replayed_for_checks_they_never_ran_are_bad_input(cli, tmp_path):
    """newcomer4 F3: quick facts (import_torch, cuda_build, …) replayed with `--checks torch_compile`
    (or torch_compile,distributed) were "all SKIP", exit 0: every run records import_torch, and that
    alone counted as something to judge. A partial overlap still judges what is there."""
    f = CASES / "C01.json"  # a recorded machine's quick facts: import_torch and cuda_build only
    for asked in ("torch_compile", "torch_compile,distributed"):
        r = cli(["verify", "--facts", str(f), "--checks", asked])
        assert r.code == 2 and r.out == "", r
        named = r.err.split("no result of the checks asked (", 1)[1].split(")", 1)[0]
        assert r.err.count("\n") == 1 and set(named.split(", ")) == set(asked.split(",")), r.err
        assert "these facts hold cuda_build, import_torch" in r.err, r.err
        j = cli(["verify", "--facts", str(f), "--checks", asked, "--json"])
        assert j.code == 2 and json.loads(j.out)["schema"] == "envcheck.error.v1"
    partial = cli(["verify", "--facts", str(f), "--checks", "torch_compile,import_torch", "--json"])
    assert partial.code in (0, 1), partial.err
    status = {c["name"]: c["status"] for c in json.loads(partial.out)["checks"]}
    assert status["torch_compile"] == "skip" and status["import_torch"] != "skip", status
