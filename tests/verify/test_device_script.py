"""`nox -s device` (tests/device/run.py) on this machine's CPU path: it plans for the machine it finds,
runs verify against the plan's lock, and records facts that replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess  # runs the nox device script (tests/README.md)

SCRIPT = Path(__file__).resolve().parents[1] / "device" / "run.py"


def test_records_facts_that_replay(torch_venv, tmp_path, cli):
    out = tmp_path / "recorded"
    p = subprocess.run([sys.executable, str(SCRIPT), "--python", str(torch_venv), "--torch", "2.13.0",
                        "--out", str(out), "--name", "cpu-test", "--budget", "300",
                        "--checks", "import_torch,cuda_build,environment,lock,matmul"],
                       capture_output=True, text=True, timeout=320)
    assert p.returncode == 0, p.stderr
    assert "plan: torch 2.13.0 (cpu)" in p.stderr
    facts = out / "cpu-test.json"
    report = json.loads((out / "cpu-test.report.json").read_text())
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    # the venv has torch only: the lock's torchvision pin is missing, which fails the lock check
    # (newcomer3 #10); everything else passes
    assert statuses == {"import_torch": "pass", "cuda_build": "pass", "environment": "pass", "lock": "fail",
                        "matmul": "pass"}, report["checks"]
    lock = next(c for c in report["checks"] if c["name"] == "lock")
    assert "torchvision: lock 0.28.0+cpu, not installed" in lock["detail"]
    # replayed, the same checks are judged (newcomer3 #7); the lock was an input, not a fact: it skips
    again = cli(["verify", "--facts", str(facts), "--json"])
    assert again.code == 0 and json.loads(facts.read_text())["schema"] == 2
    assert {c["name"]: c["status"] for c in again.json()["checks"]} == {**statuses, "lock": "skip"}


def test_bad_arguments_exit_2():
    p = subprocess.run([sys.executable, str(SCRIPT), "--budget", "5"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--budget must leave time" in p.stderr
