"""A torchvision built for another torch fails in more ways than `operator torchvision::nms does not
exist`: a torchvision 0.20.0 (Requires-Dist: torch==2.5.0) next to torch 2.13 raised
`AttributeError: '_OpNamespace' 'torchvision' object has no attribute 'nms'` (newcomer3 #14, a real
venv), and verify printed only that message. Whatever the failure says, the facts (the companion's
Requires-Dist against the torch loaded) give the cause and the plan's fix. Facts: C07 (pytorch/vision#9174,
torchvision 0.23.0 built for torch 2.8.0 beside torch 2.6.0) with the other wording.
"""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import ROOT, run_cli

C07 = ROOT / "tests" / "fixtures" / "verify" / "cases" / "C07.json"


@pytest.mark.parametrize("kind, message", [
    ("AttributeError", "'_OpNamespace' 'torchvision' object has no attribute 'nms'"),
    ("RuntimeError", "operator torchvision::nms does not exist"),
])
def test_a_companion_for_another_torch_is_the_cause_whatever_the_error(tmp_path, kind, message):
    doc = json.loads(C07.read_text())
    facts = copy.deepcopy(doc)
    facts["runs"]["torchvision_compat"]["error"] = {"type": kind, "message": message}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    r = run_cli(["verify", "--facts", str(path), "--no-config", "--json"])
    check = next(c for c in r.json()["checks"] if c["name"] == "torchvision_compat")
    assert check["status"] == "fail" and r.code == 1
    assert "torchvision 0.23.0 is built for torch 2.8.0" in check["detail"], check["detail"]
    assert "torchvision==" in (check.get("fix") or ""), check


def test_an_unrelated_torchvision_failure_with_a_matching_torch_stays_unexplained(tmp_path):
    doc = json.loads(C07.read_text())
    doc["packages"]["torchvision"][0]["requires"] = ["numpy", "torch==2.6.0"]
    doc["packages"]["torchvision"][0]["version"] = "0.21.0"
    doc["runs"]["torchvision_compat"]["error"] = {"type": "AttributeError", "message": "something else"}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    check = next(c for c in run_cli(["verify", "--facts", str(path), "--no-config", "--json"]).json()["checks"]
                 if c["name"] == "torchvision_compat")
    assert check["status"] == "fail" and "is built for torch" not in check["detail"], check
