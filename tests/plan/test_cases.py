"""The `plan` cases of ../shared/cases (public bug reports) that fall inside torch 1.13+.

C03 (torch 1.6–1.8) and C17's pytorch=1.9/1.10 predate the matrix (1.13+): only C17's rule for the
conda output is checked here (tests/plan/test_render.py).
"""

from __future__ import annotations

import pytest

from envcheck.resolve import Request
from envcheck.resolve.plan import make_plan
from tests.conftest import plan_for


def find(res, label):
    """The candidates for ``torch==X+variant`` (any Python)."""
    version, _, variant = label.split("==", 1)[1].partition("+")
    out = [c for c in res.candidates if c.release.version == version and c.build.variant == variant
           and res.machine.platform in c.build.platforms]
    assert out, f"{label} is not a candidate"
    return out


def messages(cands):
    return " ".join(r.message for c in cands for r in c.reasons)


def test_c04_driver_470_cannot_run_cuda_12(matrix, cases):
    case = cases["C04"]
    exp = case["expected"]
    res = plan_for(matrix, gpus=["RTX 3050 Laptop"], driver=case["inputs"]["driver"])
    for label in exp["rejects"]:
        cands = find(res, label)
        assert all(not c.accepted for c in cands), label
        text = messages(cands)
        for word in exp["reason_contains"]:
            assert word in text, (label, word, text)
    for label in exp["accepts"]:
        assert any(c.accepted for c in find(res, label)), label
    assert any(w in a for a in res.alternatives for w in exp["alternative_fix_contains"])


def test_c06_glibc_217_follow_up_plan(matrix, cases):
    exp = cases["C06"]["expected"]
    # the follow-up plan: glibc 2.17 (CentOS 7.9), Python 3.11, a CUDA build
    res = plan_for(matrix, glibc="2.17", python="3.11", request=Request(backend="cuda"))
    rejects = ["torch==2.7.0+cu126", "torch==2.7.0+cu118", "torch==2.8.0+cu128"]
    accepts = ["torch==2.5.1+cu121", "torch==2.5.1+cu118"]
    for label in rejects:
        cands = find(res, label)
        assert all("glibc" in {r.code for r in c.reasons} for c in cands), label
        text = messages(cands)
        assert "manylinux_2_28" in text and "2.17" in text
    for label in accepts:
        assert any(c.accepted for c in find(res, label)), label
    assert exp["failed_check"] == "import_torch"  # the verify half is tested in tests/verify


def test_c11_32_bit_windows_python(matrix, cases):
    exp = cases["C11"]["expected"]
    res = plan_for(matrix, os="windows", python="3.7-32")
    assert res.status == exp["plan_status"] == "no_build"
    assert res.accepted == []
    text = messages(res.candidates)
    for word in ("32-bit", "64-bit"):
        assert word in text


def test_c13_rx_5700_xt_no_official_build(matrix, cases):
    exp = cases["C13"]["expected"]
    res = plan_for(matrix, gpus=["RX 5700 XT"])
    assert res.status == exp["plan_status"] == "no_official_build"
    assert res.accepted == []
    cands = find(res, "torch==2.5.1+rocm6.2")
    assert all(not c.accepted for c in cands)
    assert "gfx1010" in messages(cands)
    assert res.fallback.build.backend == "cpu"


@pytest.mark.parametrize("python, rejects, accepts", [
    ("3.12", ["2.2.2", "2.3.1"], ["2.4.0"]),
    ("3.13", ["2.5.1"], ["2.6.0"]),
])
def test_c14_compile_needs_a_newer_torch_for_new_pythons(matrix, cases, python, rejects, accepts):
    assert cases["C14"]["expected"]["failed_check"] == "torch_compile"
    res = plan_for(matrix, python=python, request=Request(backend="cpu", compile=True))
    for v in rejects:
        cands = [c for c in res.candidates if c.release.version == v and c.build.backend == "cpu"
                 and "linux-x86_64" in c.build.platforms]
        assert cands and all("compile" in {r.code for r in c.reasons} for c in cands), v
    for v in accepts:
        assert any(c.accepted for c in res.candidates if c.release.version == v), v


def test_c14_without_compile_flag_it_is_a_warning_not_a_rejection(matrix):
    res = plan_for(matrix, python="3.12", request=Request(backend="cpu", torch=Request.parse_torch("2.2.2"),
                                                         torch_text="2.2.2"))
    assert res.chosen is not None
    assert any(w.code == "compile" for w in res.chosen.warnings)


def test_c10_windows_laptop_follow_up_plan(matrix, cases):
    from envcheck.render import render

    follow = cases["C10"]["expected"]["plan_followup"]
    res = plan_for(matrix, gpus=[follow["inputs"]["gpu"]], os=follow["inputs"]["os"], python="3.10",
                   driver=follow["inputs"]["driver"])
    plan = make_plan(res, matrix)
    text = render(plan, ["pip", "uv"])
    for want in follow["pip_spec_contains"]:
        assert want in text["requirements.txt"]
    marker = follow["uv_marker_must_match"]
    uv = text["pyproject.uv.toml"]
    for key, value in marker.items():
        assert f"{key} == '{value}'" in uv


def test_c20_docker_output_names_the_nvidia_container_toolkit(matrix, cases):
    from envcheck.render import render

    assert cases["C20"]["kind"] == "plan"
    res = plan_for(matrix, gpus=["RTX 3090"], driver="465.27")
    plan = make_plan(res, matrix)
    text = render(plan, ["docker"])["Dockerfile"]
    assert "nvidia-container-toolkit" in text
    assert "--gpus all" in text
    assert "could not select device driver" in text  # the daemon error, mapped to its fix
