"""newcomer M4: a torch before 2.0 has no torch.compile (PyTorch 2.0 release notes: "torch.compile is
the main API for PyTorch 2.0"); a plan that did not ask for --compile must not warn about it (the
warning counted under --strict), nor give torch.compile as the reason for its Python choice."""

from __future__ import annotations

from envcheck.resolve import Request
from tests.conftest import plan_for


def _req(compile_=False):
    return Request(torch=Request.parse_torch("1.13.1"), torch_text="1.13.1", compile=compile_)


def test_no_compile_caveat_unless_asked(matrix):
    res = plan_for(matrix, _req(), gpus=["A100"])
    assert res.chosen is not None
    assert not [w for w in res.chosen.warnings if w.code == "compile"]
    why = next(a for a in res.assumptions if a.startswith("Python not given"))
    assert "torch.compile" not in why, why


def test_asked_for_compile_it_is_a_reason(matrix):
    res = plan_for(matrix, _req(compile_=True), gpus=["A100"])
    assert res.chosen is None
    assert any(r.code == "compile" and "no torch.compile" in r.message for c in res.rejected for r in c.reasons
               if c.release.version == "1.13.1")


def test_a_compile_release_still_names_torch_compile_in_the_reason(matrix):
    res = plan_for(matrix, Request(torch=Request.parse_torch("2.4.1"), torch_text="2.4.1"), gpus=["A100"])
    why = next(a for a in res.assumptions if a.startswith("Python not given"))
    assert "torch.compile supports" in why, why
