"""newcomer5 #4 and #5: two `explain` answers about what the pasted text itself says.

#5: a traceback naming "NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120" got a second finding
calling the GPU "GeForce RTX 5090, sm_120" — the first sm_120 GPU on record, not the one the text
names. The GPU the text names is read by its most specific name (the longest name or alias on
record found as whole words). Public reports with these exact warnings: Comfy-Org/ComfyUI#7127 and
lllyasviel/FramePack#805 (RTX 5070 Ti), lllyasviel/Fooocus#3953 (RTX 5070), pytorch/pytorch#150733
(RTX 5090 D).

#4: "GLIBC_2.28 not found" explained without this machine's glibc (``--no-probe``, ``--gpu V100``) gave
a literal `envcheck plan --glibc X.Y` placeholder and no build. The message says the machine that
raised it has a glibc older than 2.28, so the fix is plan's answer for glibc 2.27: for a V100,
torch 2.6.0+cu124 — PyTorch 2.6's release notes: only its cu126 / aarch64 / ROCm / XPU builds moved to
manylinux_2_28, 2.7 moved all (pytorch/pytorch#150724 is the public report of this message).
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
    assert r.code == 0 and "for this GPU (sm_120)" in r.out, r.out
    assert "RTX 5090" not in r.out, r.out  # not the first sm_120 GPU on record


GLIBC = ("ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by "
         "/opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_python.so)")


def _fix(out):
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("fix:") and "glibc" in ln)
    return line


@pytest.mark.parametrize("extra,variant", [(["--no-probe"], "cpu"), (["--no-probe", "--gpu", "V100"], "cu124")])
def test_glibc_fix_names_a_build_without_this_machines_glibc(cli, extra, variant):
    r = cli(["explain", *extra, GLIBC])
    assert r.code == 0, r
    fix = _fix(r.out)
    assert "X.Y" not in r.out, fix
    flags = " --gpu 'NVIDIA V100'" if "--gpu" in extra else ""
    assert "glibc older than 2.28" in fix and f"`envcheck plan --glibc 2.27{flags}`" in fix, fix
    assert f"torch==2.6.0+{variant}" in fix, fix  # plan --glibc 2.27's pick: the last manylinux2014 wheels
    assert ("CPU-only" in fix) == (variant == "cpu"), fix  # a CPU pick says so, and how to get a GPU one


def test_glibc_fix_is_plans_answer_for_that_glibc(cli):
    """One answer everywhere: the build the fix names is the one `plan --glibc 2.27 --gpu V100` picks."""
    plan = cli(["plan", "--glibc", "2.27", "--gpu", "V100", "--os", "linux", "--json"])
    pins = plan.json()["chosen"]["pins"]
    fix = _fix(cli(["explain", "--no-probe", "--gpu", "V100", GLIBC]).out)
    assert all(f"{pkg}=={v}" in fix for pkg, v in pins.items()), (pins, fix)
