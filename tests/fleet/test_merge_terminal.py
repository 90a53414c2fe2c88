"""A node report comes from any machine: the names and values ``fleet merge`` / ``fleet diff``
print from it cannot fake lines of envcheck's output (breaker F14: ``host.id = "gpu002\\nFAKE …"``
printed a line of its own) nor send escape sequences to the terminal."""

from __future__ import annotations

import copy
import json
import re

import pytest

from tests.conftest import run_cli

HOSTILE = ["gpu002\nFAKE all 9 nodes pass", "gpu002\r\x1b[2KALL PASS", "gpu\x1b]0;owned\x07002", "a\u2028FAKE",
           "[bold red]x[/]\x85FAKE", "gpu\x9b2J002"]


@pytest.mark.parametrize("name", HOSTILE)
def test_node_names_from_reports_print_on_one_line(tmp_path, case_reports, name):
    base = case_reports["C01"]
    for i, host in enumerate([name, "gpu001"]):
        doc = copy.deepcopy(base)
        doc["host"]["id"] = host
        if i == 0:  # make it fail and drift so the name appears in every section
            doc["status"] = "fail"
            doc["facts"].setdefault("torch", {})
            doc["checks"] = [dict(c, status="fail", detail="x" + name) for c in doc.get("checks", [])][:2] or doc.get("checks", [])
        (tmp_path / f"n{i}.json").write_text(json.dumps(doc))
    r = run_cli(["fleet", "merge", str(tmp_path), "--expect", "gpu001,gpu003"])
    assert "Traceback" not in r.err
    out = r.out + r.err
    assert not re.search(r"[\x1b\x9b\x07\x85\u2028\r]", out), ascii(out)
    assert not any(line.startswith(("FAKE", "ALL PASS")) for line in out.splitlines()), out
    r = run_cli(["fleet", "diff", str(tmp_path / "n0.json"), str(tmp_path / "n1.json")])
    out = r.out + r.err
    assert not re.search(r"[\x1b\x9b\x07\x85\u2028\r]", out) and not any(
        line.startswith(("FAKE", "ALL PASS")) for line in out.splitlines()), ascii(out)
