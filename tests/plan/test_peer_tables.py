"""Other tools' own test tables, run through `envcheck plan` (tests/fixtures/peers/cases.json).

The cases come from the test suites and tables of torchruntime (easydiffusion/torchruntime: GPU by PCI
name/id and OS → torch platform; device name → architecture), light-the-torch (pmeier/light-the-torch:
NVIDIA driver → compatible CUDA backends) and uv's ``--torch-backend`` (astral-sh/uv crates/uv-torch:
driver → CUDA indexes, AMD gfx → ROCm indexes). Each case names the other tool's repo, commit, file and
test, the envcheck flags for the same machine, the other tool's answer and what is right by primary
sources (NVIDIA, PyTorch, AMD, the PCI ID database) — written by hand, never computed by envcheck.

Scoring (``python -m tests.plan.test_peer_tables`` prints the table): ``agree`` — envcheck meets the
expectation and so does the other tool; ``other tool wrong`` — envcheck meets it, the other tool's answer
does not; ``envcheck wrong`` — envcheck misses it; ``not comparable`` — no common ground (fake ids,
torch-directml, a tool giving no answer).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from tests.conftest import run_cli

CASES_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "peers" / "cases.json"
CASES: List[Dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))["cases"]


def family(variant: str) -> str:
    for prefix, name in (("cu", "cuda"), ("rocm", "rocm"), ("xpu", "xpu")):
        if variant.startswith(prefix):
            return name
    return "cpu"


def runs_on(code: str, gpu: str) -> bool:
    """Whether kernels built for ``code`` run on a GPU of arch ``gpu``: NVIDIA's binary compatibility rule (a
    cubin for X.y runs on X.z, z >= y: CUDA C++ Programming Guide, "Binary Compatibility"); AMD targets exactly."""
    a, b = re.fullmatch(r"sm_(\d+)(\d)", code), re.fullmatch(r"sm_(\d+)(\d)", gpu)
    if a and b:
        return a.group(1) == b.group(1) and int(a.group(2)) <= int(b.group(2))
    return code == gpu


def misses(case: Dict[str, Any]) -> List[str]:
    """What envcheck's plan for ``case["argv"]`` gets wrong against ``case["expect"]`` (empty: right)."""
    exp = case["expect"]
    res = run_cli(["plan", *case["argv"], "--json"])
    if "exit" in exp:
        return [] if res.code == exp["exit"] else [f"exit {res.code}, expected {exp['exit']}: {res.err.strip()[:160]}"]
    if res.code == 2 or not res.out.strip():
        return [f"refused (exit {res.code}): {res.err.strip().splitlines()[0][:200] if res.err.strip() else ''}"]
    plan = res.json()
    out: List[str] = []
    chosen = plan.get("chosen")
    got_backend = family(chosen["variant"]) if chosen and plan.get("status") == "ok" else "none"
    if "backend" in exp and got_backend != exp["backend"]:
        label = f"{chosen['torch']}+{chosen['variant']}" if chosen else plan.get("status")
        out.append(f"backend {got_backend} ({label}), expected {exp['backend']}")
    gpus = plan["machine"].get("gpus") or []
    if "arch" in exp and [g.get("arch") for g in gpus] != exp["arch"]:
        out.append(f"arch {[g.get('arch') for g in gpus]}, expected {exp['arch']}")
    accepted = {(c["torch"], c["variant"]) for c in plan["candidates"] if c["accepted"]}
    for want in exp.get("accepts", []):
        torch, _, variant = want.rpartition("+")
        if not any(v == variant and (not torch or t == torch) for t, v in accepted):
            out.append(f"no accepted {want}")
    for bad in exp.get("rejects", []):
        torch, _, variant = bad.rpartition("+")
        hits = sorted(t for t, v in accepted if v == variant and (not torch or t == torch))
        if hits:
            out.append(f"accepts {bad} (torch {', '.join(hits[:3])})")
    if exp.get("covers"):
        listed = set(((chosen or {}).get("expect") or {}).get("arch_list") or [])
        lacking = [a for a in exp["covers"] if not any(runs_on(code, a) for code in listed)]
        if lacking:
            label = f"{chosen['torch']}+{chosen['variant']}" if chosen else f"no build ({plan.get('status')})"
            out.append(f"{label} has no code for {lacking}")
    if "fallback" in exp:
        fb = plan.get("fallback")
        if not fb or family(fb.get("variant", "")) != exp["fallback"]:
            out.append(f"fallback {fb and fb.get('variant')}, expected {exp['fallback']}")
    if "torch" in exp and (not chosen or chosen["torch"] != exp["torch"]):
        out.append(f"torch {chosen and chosen['torch']}, expected {exp['torch']}")
    if "hint" in exp:
        human = run_cli(["plan", *case["argv"]])
        if exp["hint"] not in human.out + human.err:
            out.append(f"the plan does not name {exp['hint']!r}")
    return out


def verdict(case: Dict[str, Any]) -> Tuple[str, List[str]]:
    if not case["comparable"]:
        return "not comparable", []
    wrong = misses(case)
    if wrong:
        return "envcheck wrong", wrong
    return ("agree" if case["other_ok"] else "other tool wrong"), []


@pytest.mark.parametrize("case", [c for c in CASES if c["comparable"]], ids=lambda c: c["id"])
def test_envcheck_meets_the_primary_answer(case):
    assert misses(case) == [], (case["source"], case["argv"])


def test_the_fixture_is_whole():
    """Every case names its source commit and, when comparable, a primary source or the reason."""
    assert len(CASES) >= 100
    assert len({c["id"] for c in CASES}) == len(CASES)
    for c in CASES:
        assert "@" in c["source"] and ":" in c["source"], c["id"]
        assert c["comparable"] or c["why"], c["id"]
        assert not c["comparable"] or c["expect"], c["id"]
        assert c["other_ok"] or c["why"], c["id"]


def test_a_wrong_expectation_is_caught():
    """The checker can fail: the same machine with a deliberately wrong expectation is reported."""
    case = next(c for c in CASES if c["id"] == "TR22")
    wrong = {**case, "expect": {"backend": "rocm", "arch": ["sm_86"], "rejects": ["cu128"]}}
    found = misses(wrong)
    assert any(m.startswith("backend cuda") for m in found)
    assert any(m.startswith("arch ['sm_75']") for m in found)
    assert any(m.startswith("accepts cu128") for m in found)


def main() -> int:
    """Print the score table (Markdown) for the notes."""
    counts: Dict[str, int] = {}
    print("| id | tool | envcheck flags | other tool | verdict | detail |")
    print("|---|---|---|---|---|---|")
    for c in CASES:
        v, wrong = verdict(c)
        counts[v] = counts.get(v, 0) + 1
        detail = "; ".join(wrong) or c["why"]
        print(f"| {c['id']} | {c['tool']} | `{shlex.join(c['argv'])}` | {c['other']} | {v} | {detail.replace('|', '/')} |")
    print()
    print(", ".join(f"{k}: {n}" for k, n in sorted(counts.items())), f"(of {len(CASES)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
