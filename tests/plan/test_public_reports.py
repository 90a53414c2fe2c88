"""Public bug reports, run through `envcheck plan` (tests/fixtures/reports/cases.json).

Each case is one GitHub issue or pull request in which a user's machine is described well enough to plan
for (GPU, OS/WSL/distro/glibc, driver, Python, CPU arch) and the thread shows which torch build works or
why the installed one failed. The fixture holds the report's URL, the machine in the report's words, the
same machine as `envcheck plan` flags, what the thread established, and the right answer judged from
primary sources (PyTorch's wheels, build scripts and release notes, NVIDIA's CUDA compatibility tables,
AMD's ROCm matrices) — written by hand, never computed by envcheck. Where the thread's own conclusion is
wrong (e.g. "Pascal needs cu118"), `why` says so and the expectation follows the primary source.

The expectations use the checker of the peer-table cases (tests/plan/test_peer_tables.py `misses`).
`python -m tests.plan.test_public_reports` prints the score table for the notes.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tests.plan.test_peer_tables import misses

CASES_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "reports" / "cases.json"
CASES: List[Dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))["cases"]


def _param(case: Dict[str, Any]) -> Any:
    """A case envcheck is known to miss (`known_miss`: why, and whose change it waits for) is a strict xfail:
    it stays recorded, and the day it passes the test fails until the mark is taken off."""
    if case.get("known_miss"):
        return pytest.param(case, id=case["id"], marks=pytest.mark.xfail(strict=True, reason=case["known_miss"]))
    return pytest.param(case, id=case["id"])


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_envcheck_plans_the_reported_machine_right(case):
    assert misses(case) == [], (case["url"], case["argv"])


def test_the_fixture_is_whole():
    """Every case names its report, the machine, what the thread found and a primary source."""
    assert len(CASES) >= 80
    assert len([c for c in CASES if c.get("set") == "round3"]) >= 25
    assert len([c for c in CASES if c.get("set") == "round4"]) >= 25
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert len({c["url"] for c in CASES}) == len(CASES)
    for c in CASES:
        assert c["url"].startswith("https://github.com/"), c["id"]
        assert c["machine"] and c["thread"] and c["argv"], c["id"]
        assert c["expect"] and c["primary"], c["id"]


def test_a_wrong_expectation_is_caught():
    """The checker fails on a deliberately wrong answer for a reported machine (GTX 1050, R09)."""
    case = next(c for c in CASES if c["id"] == "R09")
    wrong = {**case, "expect": {"backend": "rocm", "rejects": ["2.8.0+cu126"], "accepts": ["2.8.0+cu128"]}}
    found = misses(wrong)
    assert any(m.startswith("backend cuda") for m in found)
    assert any(m.startswith("accepts 2.8.0+cu126") for m in found)
    assert "no accepted 2.8.0+cu128" in found


@pytest.mark.parametrize("driver, given", [
    ("32.0.22029.9039", True),   # OrsoEric/HOWTO-7900XTX-Win-ROCM#4: "Adrenalin Edition 32.0.22029.9039 for WSL2"
    ("31.0.24027.1012", True),   # the same numbering one year earlier (Win32_VideoController.DriverVersion)
    ("24.10.21.01", False),      # AMD's own four-part name of a WSL driver release ("24.10.21.01 for WSL 2")
])
def test_amd_windows_driver_in_the_forms_people_read_it(driver, given):
    """Device Manager's driver-store number is taken, not compared with an Adrenalin floor, and named in the
    plan's assumptions; a four-part Adrenalin release is compared as a release."""
    from tests.conftest import run_cli

    res = run_cli(["plan", "--gpu", "7900xtx", "--wsl", "--driver", driver, "--python", "3.10", "--json"])
    assert res.code == 0, res.err
    plan = res.json()
    assert plan["machine"].get("amd_driver") == (None if given else driver)
    said = [a for a in plan["assumptions"] if "Adrenalin" in a]
    assert bool(said and driver in said[0]) == given, said


def test_the_cuda_version_nvidia_smi_prints_is_read_as_the_drivers_cuda():
    """Reports often give nvidia-smi's "CUDA Version" for the driver (pytorch/pytorch#95121 "cuda version 12",
    #50032 "CUDA 11.2", rohitg00/ai-engineering-from-scratch#192 "CUDA Driver: 12.0"): no NVIDIA driver is
    numbered below R100, so --driver 12.8 is that CUDA — cu130 needs more, cu12x runs."""
    from tests.conftest import run_cli

    plan = run_cli(["plan", "--gpu", "RTX 4090", "--driver", "12.8", "--json"]).json()
    assert plan["machine"].get("cuda_driver_max") == "12.8" and not plan["machine"].get("nvidia_driver")
    cu130 = [c for c in plan["candidates"] if c["variant"] == "cu130"]
    assert cu130 and not any(c["accepted"] for c in cu130)
    assert any("12.8" in r["message"] for r in cu130[0]["reasons"] if r["code"] == "driver")
    assert any(c["accepted"] for c in plan["candidates"] if c["variant"] == "cu128")


def main() -> int:
    """Print the score table (Markdown): right / wrong / refused per report."""
    counts: Dict[str, int] = {}
    print("| id | report | envcheck flags | verdict | detail |")
    print("|---|---|---|---|---|")
    for c in CASES:
        wrong = misses(c)
        verdict = "right" if not wrong else ("refused" if wrong[0].startswith("refused") else "wrong")
        counts[verdict] = counts.get(verdict, 0) + 1
        report = c["url"].replace("https://github.com/", "").replace("/issues/", "#").replace("/pull/", "#")
        detail = "; ".join(wrong) or c.get("why", "")
        print(f"| {c['id']} | {report} | `{shlex.join(c['argv'])}` | {verdict} | {detail.replace('|', '/')} |")
    print()
    print(", ".join(f"{k}: {n}" for k, n in sorted(counts.items())), f"(of {len(CASES)})")
    for name in sorted({c["set"] for c in CASES if c.get("set")}):
        held = [c for c in CASES if c.get("set") == name]
        right = sum(not misses(c) for c in held)
        print(f"set {name} (held out when collected; its score before the fixes it led to is in the notes): "
              f"right now {right} of {len(held)}")
    known = [c["id"] for c in CASES if c.get("known_miss")]
    if known:
        print("known misses (strict xfail in the test):", ", ".join(known))
    return 0


if __name__ == "__main__":
    sys.exit(main())
