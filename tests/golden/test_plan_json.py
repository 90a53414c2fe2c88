"""``envcheck plan --json`` for 30 assorted machines, byte for byte (see tests/golden/golden.py).

A restructuring commit must leave these files unchanged. A commit that changes answers on purpose
regenerates them (``ENVCHECK_UPDATE_GOLDEN=1 pytest tests/golden``) and says why in its message;
the diff of ``tests/golden/plan/*.json`` is then the review of what changed for whom.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.golden.cases import PLAN_CASES
from tests.golden.golden import UPDATE_ENV, compact, dumps, expand, load, updating

HERE = Path(__file__).resolve().parent / "plan"


def test_thirty_assorted_machines():
    assert len(PLAN_CASES) == 30
    assert len({tuple(v) for v in PLAN_CASES.values()}) == 30


@pytest.mark.parametrize("name", sorted(PLAN_CASES))
def test_plan_json_is_byte_identical(name):
    args = PLAN_CASES[name]
    res = run_cli(["plan", *args, "--json"])
    assert res.code in (0, 1), res.err
    path = HERE / f"{name}.json"
    golden = compact(args, res.code, json.loads(res.out))
    # the golden form loses nothing: it rebuilds the exact bytes printed
    assert json.dumps(expand(golden), indent=2) + "\n" == res.out
    if updating():
        HERE.mkdir(exist_ok=True)
        path.write_text(dumps(golden), encoding="utf-8")
    assert path.exists(), f"no golden file {path}; create it with {UPDATE_ENV}=1"
    want = load(path)
    assert want["args"] == args, f"{path} was made for other flags; regenerate with {UPDATE_ENV}=1"
    expected = json.dumps(expand(want), indent=2) + "\n"
    if res.out != expected or res.code != want["exit"]:
        diff = "".join(difflib.unified_diff(dumps(want).splitlines(True), dumps(golden).splitlines(True),
                                            str(path), "now", n=1))
        pytest.fail(f"plan {' '.join(args)} changed (exit {want['exit']} -> {res.code}); if deliberate, "
                    f"regenerate with {UPDATE_ENV}=1 and say why in the commit:\n{diff[:6000]}")
