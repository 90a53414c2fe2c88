"""Companions have their own Python and platform lists (#10): never pin a torchvision/torchaudio that
has no wheel for the chosen Python/platform, and pick a Python all three serve.

Data: matrices/companions.toml, generated from PyPI's file lists. Public reports: torch 1.13 had cp311
wheels, torchvision 0.14 none (pytorch/vision#6841, #6842: pip fell back to torchvision 0.2.2.post3;
AUTOMATIC1111/stable-diffusion-webui#9835: "No matching distribution found for torchvision==0.14.1+cu117"
on Python 3.11.2 right after torch 1.13.1+cu117 cp311 was found; pytorch/pytorch#91543, malfet:
"only torch binary that builds for 3.11, not the torchvision").
"""

from __future__ import annotations

from envcheck.resolve import Request
from envcheck.resolve.plan import make_plan
from tests.conftest import plan_for


def req(spec):
    return Request(torch=Request.parse_torch(spec), torch_text=spec)


def test_torch_1_13_1_on_an_a100_is_planned_for_python_3_10(matrix, cli):
    tv = matrix.companions[("torchvision", "0.14.1")]
    assert "3.11" in matrix.release_by_version["1.13.1"].python["linux-x86_64"]
    assert tv.serves("linux-x86_64", "3.11") is False and tv.serves("linux-x86_64", "3.10") is True
    res = plan_for(matrix, req("1.13.1"), gpus=["A100"])
    assert res.chosen.python == "3.10"
    plan = make_plan(res, matrix)
    assert plan.pins["torchvision"].startswith("0.14.1") and plan.pins["torchaudio"].startswith("0.13.1")
    out = cli(["plan", "--torch", "1.13.1", "--gpu", "A100", "--json"]).json()["chosen"]
    assert out["python"] == "3.10" and out["torchvision"]


def test_a_given_python_without_companion_wheels_leaves_them_unpinned(matrix):
    res = plan_for(matrix, req("1.13.1"), gpus=["A100"], python="3.11")
    c = res.chosen
    assert set(c.fit.companions_missing) == {"torchvision", "torchaudio"}
    assert any(w.code == "companion" for w in c.warnings)
    plan = make_plan(res, matrix)
    assert list(plan.pins) == ["torch"]
    assert any("torchvision" in n and "not pinned" in n for n in plan.notes)


def test_every_pinned_companion_has_a_wheel(matrix):
    # over a spread of machines, no plan pins a companion release whose PyPI wheels miss the Python
    for torch, py in (("2.5.1", "3.13"), ("1.13.1", None), ("2.0.1", "3.11"), ("1.8.1", None)):
        res = plan_for(matrix, req(torch), gpus=["RTX 3090"], **({"python": py} if py else {}))
        plan = make_plan(res, matrix)
        for pkg in ("torchvision", "torchaudio"):
            if pkg in plan.pins:
                row = matrix.companions.get((pkg, plan.pins[pkg].split("+")[0]))
                assert row is None or row.serves(res.machine.platform, plan.python) is not False, (torch, pkg)
