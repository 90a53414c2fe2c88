"""Nightly/dev versions (#10): `--torch 2.7.0.dev20250310` is planned from the nightly index with the
facts of the nearest release, and says so.

Public report: pytorch/pytorch#153928 — an RTX 5070 Ti on nightly "2.6.0.dev20241112+cu121" fails with
"sm_120 is not compatible" / "no kernel image" (malfet: "sm_120 is not supported by CUDA-12.1. You'll
need to use 12.8 + PyTorch-2.7.0").
"""

from __future__ import annotations

from envcheck.resolve import Request
from envcheck.resolve.plan import make_plan
from tests.conftest import plan_for


def nightly(spec, backend="auto"):
    return Request(torch=Request.parse_torch(spec), torch_text=spec, backend=backend)


def test_a_nightly_is_planned_from_the_nightly_index_with_a_caveat(matrix, cli):
    res = plan_for(matrix, nightly("2.7.0.dev20250310"), gpus=["RTX 5090"])
    c = res.chosen
    assert c.build.channel == "nightly" and c.release.version == "2.7.0.dev20250310"
    assert any(w.code == "unverified" and "2.7.0" in w.message for w in c.warnings)
    plan = make_plan(res, matrix)
    assert plan.index_url == f"https://download.pytorch.org/whl/nightly/{c.build.variant}"
    assert plan.pins == {"torch": f"2.7.0.dev20250310+{c.build.variant}"}
    r = cli(["plan", "--torch", "2.7.0.dev20250310", "--gpu", "RTX 5090", "--json"])
    assert r.code == 0 and r.json()["chosen"]["torch"] == "2.7.0.dev20250310"


def test_the_report_s_cu121_nightly_does_not_serve_sm_120(matrix):
    res = plan_for(matrix, nightly("2.6.0.dev20241112", "cu121"), gpus=["RTX 5070 Ti"])
    assert res.chosen is None
    assert any(r.code == "gpu-arch" for x in res.candidates if x.build.channel == "nightly" for r in x.reasons)
