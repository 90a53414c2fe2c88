"""newcomer M16: when nothing fits because of what the user asked for (--torch, --backend), say what
lifting that limit gives — from the resolver itself.

Facts: sm_120 (RTX 5090) code first shipped in torch 2.7.0's CUDA 12.8 wheels (PyTorch 2.7 release
blog, pytorch/pytorch.github.io#1989: "PyTorch 2.7 introduces support for NVIDIA's new Blackwell GPU
architecture and ships pre-built wheels for CUDA 12.8"; triton-lang/triton#6778: "torch 2.7.0 is
released and supports all the blackwell architectures"); an NVIDIA GPU is driven only by CUDA builds
(ROCm builds carry AMD gfx code only).
"""

from __future__ import annotations

from envcheck.resolve import Request
from tests.conftest import plan_for


def test_a_gpu_too_new_for_the_asked_torch_names_the_first_release_that_fits(matrix):
    res = plan_for(matrix, Request(torch=Request.parse_torch("2.6"), torch_text="2.6"), gpus=["RTX 5090"])
    assert res.chosen is None
    (line,) = [a for a in res.alternatives if "--torch" in a]
    assert "sm_120" in line and "torch 2.7.0+cu128" in line, line
    free = plan_for(matrix, gpus=["RTX 5090"])
    assert f"without it the plan is torch {free.chosen.release.version}+{free.chosen.build.variant}" in line


def test_a_backend_that_cannot_drive_the_gpu_says_which_can(matrix):
    res = plan_for(matrix, Request(backend="rocm"), gpus=["RTX 4090"])
    assert res.chosen is None
    (line,) = [a for a in res.alternatives if "without --backend" in a]
    free = plan_for(matrix, gpus=["RTX 4090"])
    assert "needs CUDA" in line and f"{free.chosen.release.version}+{free.chosen.build.variant}" in line, line


def test_nothing_to_lift_adds_nothing(matrix):
    # no --torch/--backend given: no such sentence (and no recursion)
    res = plan_for(matrix, gpus=["Jetson Nano"])
    assert not [a for a in res.alternatives if "--torch" in a or "without --backend" in a]


def test_one_source_build_serves_every_nvidia_gpu(matrix):
    """newcomer M16: an RTX 5090 (sm_120) beside a GTX 1080 (sm_61) got two separate source builds; one
    build with TORCH_CUDA_ARCH_LIST="6.1;12.0" serves both (PyTorch's README: TORCH_CUDA_ARCH_LIST takes
    a ;-separated list of compute capabilities)."""
    res = plan_for(matrix, gpus=["RTX 5090", "GTX 1080"])
    if res.chosen is not None:
        return  # a wheel serves both: no source build offered
    lines = [a for a in res.alternatives if "TORCH_CUDA_ARCH_LIST" in a]
    assert len(lines) == 1 and 'TORCH_CUDA_ARCH_LIST="6.1;12.0"' in lines[0], lines


def test_each_gpu_alone_gets_the_resolvers_pick(matrix):
    """M16: or use one GPU only (the others hidden with CUDA_VISIBLE_DEVICES, CUDA's documented
    variable): the build named is the resolver's own pick for that GPU alone."""
    res = plan_for(matrix, gpus=["RTX 5090", "GTX 1080"])
    if res.chosen is not None:
        return
    for name, alone in (("GeForce RTX 5090", ["RTX 5090"]), ("GeForce GTX 1080", ["GTX 1080"])):
        pick = plan_for(matrix, gpus=alone).chosen
        (line,) = [a for a in res.alternatives if a.startswith(f"or use only the {name}:")]
        assert f"torch {pick.release.version}+{pick.build.variant} serves it" in line and "CUDA_VISIBLE_DEVICES" in line
