"""newcomer5 #4 and #5: two `explain` answers about what the pasted text itself says.

#5: a traceback naming "NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120" got a second finding
calling the GPU "GeForce RTX 5090, sm_120" — the first sm_120 GPU on record, not the one the text
names. The GPU the text names is read by its most specific name (the longest name or alias on
record found as whole words). Public reports with these exact warnings: Comfy-Org/ComfyUI#7127 and
lllyasviel/FramePack#805 (RTX 5070 Ti), lllyasviel/Fooocus#3953 (RTX 5070), pytorch/pytorch#150733
(RTX 5090 D).
"""

from __future__ import annotations

import pytest

WARNING = ("UserWarning:\n{name} with CUDA capability {sm} is not compatible with the current PyTorch installation.\n"
           "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
           "If you want to use the {name} GPU with PyTorch, please check the instructions at "
           "https://pytorch.org/get-started/locally/\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")


@pytest.mark.parametrize("printed,sm,expected", [
    ("NVIDIA GeForce RTX 5070 Ti", "sm_120", "GeForce RTX 5070 Ti"),          # ComfyUI#7127, FramePack#805
    ("NVIDIA GeForce RTX 5070", "sm_120", "GeForce RTX 5070"),                # Fooocus#3953
    ("NVIDIA GeForce RTX 5070 Ti Laptop GPU", "sm_120", "GeForce RTX 5070 Ti Laptop GPU"),
    ("GeForce RTX 5090 D", "sm_120", "GeForce RTX 5090 D"),                   # pytorch#150733
    ("NVIDIA GeForce RTX 4070 Ti SUPER", "sm_89", "GeForce RTX 4070 Ti SUPER"),
])
def test_the_gpu_is_the_one_the_text_names(cli, printed, sm, expected):
    r = cli(["explain", "--no-probe", WARNING.format(name=printed, sm=sm)])
    assert r.code == 0, r
    assert "no cubin or PTX" in r.out, r.out
    assert f"for this GPU ({expected}, {sm})" in r.out, r.out


def test_a_text_that_names_no_gpu_still_reads_the_arch(cli):
    r = cli(["explain", "--no-probe", "CUDA error: no kernel image is available for execution on the device\n"
             "GPU with CUDA capability sm_120 is not compatible with the current PyTorch installation."])
    assert r.code == 0 and ", sm_120)" in r.out, r.out
