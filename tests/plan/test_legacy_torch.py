"""torch 1.8–1.12 (#10): people reproduce 2020–2022 papers.

Sources: the download.pytorch.org/whl/torch/ listing (../shared/data) for which files exist, PyPI's
file lists, pytorch/builder release branches for the arch lists; pytorch/pytorch#45028 ("GeForce RTX
3080 with CUDA capability sm_86 is not compatible…": CUDA 11.1 added sm_86, so cu111 is the first
build an RTX 3080 runs natively); lucidrains/deep-daze#203 (1.12.0+cu102 prints "supports CUDA
capabilities sm_37 sm_50 sm_60 sm_70", an RTX 3080 Ti fails on it).
"""

from __future__ import annotations

from envcheck.resolve import Request
from tests.conftest import plan_for


def req(spec):
    return Request(torch=Request.parse_torch(spec), torch_text=spec)


def test_torch_1_8_1_for_an_rtx_3080_is_cu111(matrix, cli):
    res = plan_for(matrix, req("1.8.1"), gpus=["RTX 3080"])
    c = res.chosen
    assert (c.release.version, c.build.variant) == ("1.8.1", "cu111")
    assert "sm_86" in c.build.sm
    # cu101/cu102 carry sm_37..sm_70 only (deep-daze#203's list): rejected for sm_86
    cu102 = [x for x in res.candidates if x.build.variant == "cu102" and x.release.version == "1.8.1"]
    assert cu102 and all("gpu-arch" in {r.code for r in x.reasons} for x in cu102)
    r = cli(["plan", "--torch", "1.8.1", "--gpu", "RTX 3080", "--json"])
    assert r.json()["chosen"]["variant"] == "cu111"


def test_1_12_pypi_linux_wheel_is_cu102_and_paired(matrix):
    rel = matrix.release_by_version["1.12.1"]
    assert (rel.torchvision, rel.torchaudio) == ("0.13.1", "0.12.1")
    assert rel.pypi["linux-x86_64"] == "cu102"
    res = plan_for(matrix, req("1.12.1"), gpus=["V100"], python="3.10")
    assert res.chosen is not None and res.chosen.build.cuda


def test_torchaudio_before_0_10_is_pinned_without_a_cuda_label(matrix):
    from envcheck.resolve.plan import make_plan

    plan = make_plan(plan_for(matrix, req("1.9.0"), gpus=["RTX 3090"]), matrix)
    assert plan.pins["torchaudio"] == "0.9.0" and plan.pins["torchvision"].endswith("+" + plan.build.variant)


def test_rocm_4_2_wheels_of_1_10_do_not_serve_rdna2(matrix):
    # builder release/1.10 build_docker.sh: gfx90a;gfx1030 only from ROCm 4.3; 1.10 shipped ROCm 4.0.1-4.2
    res = plan_for(matrix, req("1.10.0"), gpus=["RX 6900 XT"])
    assert res.chosen is None
    res = plan_for(matrix, req("1.12.1"), gpus=["RX 6900 XT"])
    assert res.chosen is not None and "gfx1030" in res.chosen.build.gfx
