"""breaker6: explain answers that contradicted the text they explain.

F2 — pip's check line `X V requires torch==Y+cu121, but you have torch Z which is incompatible.`
(family pip-resolution-conflict, widened in 599e054) got a fix installing CPU wheels (`…/whl/cpu
torch==Y+cpu`): the local label in the message names the build the user has or needs, so the fix is the
resolver's plan for that backend (`envcheck plan --torch Y --backend cu121`), never a CPU default.
Messages: breaker6 F2 (pip's ResolutionImpossible check line as printed in, e.g., pytorch/vision and
xformers install threads: "torchvision 0.16.0+cu121 requires torch==2.1.0+cu121, but you have torch 2.1.0",
facebookresearch/xformers "xformers 0.0.28.post1 requires torch==2.4.1+cu124, but you'll have torch 2.5.0",
vllm-project/vllm "vllm 0.6.3.post1 requires torch==2.4.0, but you have torch 2.4.0+cu121").
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli


def _fix(out: str) -> str:
    return next(line for line in out.splitlines() if line.strip().startswith("fix:"))


def _planned_pins(*flags: str) -> str:
    """`envcheck plan FLAGS --json`'s chosen torch, torchvision and torchaudio as pip pins."""
    r = run_cli(["plan", *flags, "--json"])
    pins = json.loads(r.out)["chosen"]["pins"]
    return " ".join(f"{k}=={pins[k]}" for k in ("torch", "torchvision", "torchaudio") if k in pins)


@pytest.mark.parametrize("text,torch,backend", [
    ("torchvision 0.16.0+cu121 requires torch==2.1.0+cu121, but you have torch 2.1.0 which is incompatible.",
     "2.1.0", "cu121"),
    ("[Bug]: xformers 0.0.28.post1 requires torch==2.4.1+cu124, but you'll have torch 2.5.0 which is incompatible.",
     "2.4.1", "cu124"),
    ("vllm 0.6.3.post1 requires torch==2.4.0, but you have torch 2.4.0+cu121 which is incompatible.", "2.4.0", "cu121"),
    ("torchaudio 2.5.1+rocm6.2 requires torch==2.5.1+rocm6.2, but you have torch 2.5.1 which is incompatible.",
     "2.5.1", "rocm6.2"),
    # a CPU label is respected the same way (the guard: no GPU build pushed on a CPU install)
    ("torchvision 0.16.0+cpu requires torch==2.1.0+cpu, but you have torch 2.1.0+cu121 which is incompatible.",
     "2.1.0", "cpu"),
])
def test_a_build_label_in_the_message_is_the_backend_the_fix_plans_for(text, torch, backend):
    r = run_cli(["explain", "--no-probe", "--os", "linux", "--", text])
    assert r.code == 0, (r.out, r.err)
    fix = _fix(r.out)
    assert "(pip-resolution-conflict)" in r.out
    assert f"whl/{backend} " in fix, fix
    assert _planned_pins("--os", "linux", "--torch", torch, "--backend", backend) in fix, fix
    assert f"`envcheck plan --torch {torch} --backend {backend}`" in fix, fix
    if backend != "cpu":
        assert "+cpu" not in fix and "whl/cpu" not in fix, fix


def test_a_message_without_a_label_still_gets_plans_default():
    r = run_cli(["explain", "--no-probe", "--os", "linux", "--",
                 "torchvision 0.16.0 requires torch==2.1.0, but you have torch 2.2.0 which is incompatible."])
    assert r.code == 0, (r.out, r.err)
    assert _planned_pins("--os", "linux", "--torch", "2.1.0") in _fix(r.out)
    assert "--backend" not in _fix(r.out)


# F3 + F8: every family that reads an architecture decides it with the data (cuda.toml [[arch]] and its
# `targets`; AMD's GPU rows, chips and the builds' gfx lists): past the newest on record → unknown (exit 1),
# below it but not on record → garbled (exit 1); real suffixed targets (sm_90a, compute_100a: NVIDIA's
# arch-specific "a" and family-specific "f" targets, LLVM NVPTX.td / CUDA 12.9) are read as their arch.
ARCH_NOT_COMPATIBLE = ("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability {} is not compatible with the current "
                       "PyTorch installation. The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 "
                       "sm_75 sm_80 sm_86 sm_90.")  # torch/cuda/__init__.py's warning (pytorch/pytorch#164342 form)
NVCC = "nvcc fatal   : Unsupported gpu architecture '{}'"  # NVIDIA/apex#1759, Dao-AILab/flash-attention builds
PTXAS = "ptxas fatal : Value '{}' is not defined for option 'gpu-name'"
HIP_NO_KERNEL = "RuntimeError: HIP error: no kernel image is available for execution on the device ({})"
TENSILE = ("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory "
           "for GPU arch : {}")


def _finding(text: str):
    r = run_cli(["explain", "--no-probe", "--json", "--", text])
    doc = json.loads(r.out)
    return r.code, (doc["findings"] if isinstance(doc, dict) else doc)[0]


@pytest.mark.parametrize("message", [ARCH_NOT_COMPATIBLE, NVCC, PTXAS, HIP_NO_KERNEL, TENSILE])
@pytest.mark.parametrize("arch,word", [
    ("sm_999", "unknown"), ("sm_130", "unknown"), ("sm_85", "garbled"), ("sm_12a", "garbled"), ("sm_86a", "garbled"),
    ("gfx9999", "unknown"), ("gfx000", "garbled"),
    ("sm_120", None), ("sm_86", None), ("sm_90a", None), ("sm_100a", None), ("sm_120a", None), ("sm_121a", None),
    ("sm_120f", None), ("gfx1100", None), ("gfx90a", None),
])
def test_every_family_reading_an_architecture_decides_it_with_the_data(message, arch, word):
    vendor_of_message = "amd" if message in (HIP_NO_KERNEL, TENSILE) else "nvidia"
    if (arch.startswith("gfx")) != (vendor_of_message == "amd"):
        pytest.skip("the message names the other vendor's architectures")
    if message is NVCC:
        arch = arch.replace("sm_", "compute_")
    if message is PTXAS and arch == "sm_12a":
        pytest.skip("ptxas' pattern reads sm_ and two or three digits")
    code, finding = _finding(message.format(arch))
    assert finding.get("unknown", False) == (word == "unknown"), (arch, finding)
    assert finding.get("garbled", False) == (word == "garbled"), (arch, finding)
    assert code == (0 if word is None else 1), (arch, code, finding)
    text = finding["cause"] + finding["fix"]
    assert f"{arch} ({arch})" not in text, text  # the name doubled (breaker6 F3)
    if word == "unknown":
        assert "newer than every" in finding["cause"] and "envcheck matrix update" in finding["fix"]
    if word is None:
        assert "garbled" not in text and "not an NVIDIA architecture envcheck knows" not in text, text


# F9: pip-no-torch-distribution is about torch, torchvision and torchaudio as pip names them, not every
# package whose name starts with "torch" (breaker6 F9: torch-geometric, torchtext were "no torch wheel").
@pytest.mark.parametrize("name", ["torch-geometric", "torchtext==0.18", "torchdata", "torch_scatter",
                                  "torch-directml", "torchmetrics>=1.0"])
def test_no_torch_wheel_is_not_claimed_for_a_package_named_like_torch(name):
    r = run_cli(["explain", "--no-probe", "--json", "--", f"ERROR: No matching distribution found for {name}"])
    findings = json.loads(r.out)["findings"]
    assert "pip-no-torch-distribution" not in [f["rule"] for f in findings], findings


@pytest.mark.parametrize("name", ["torch", "torch==2.1.0+cu121", "torchvision==0.16.0", "torchaudio", "torch>=2.0,<3",
                                  "torch."])
def test_no_torch_wheel_still_reads_torch_itself(name):
    code, finding = _finding(f"ERROR: No matching distribution found for {name}")
    assert finding["rule"] == "pip-no-torch-distribution", finding
    assert code == 0


# F2's class: every family whose fix installs "the build plan picks" (install_fix: pip/uv found no wheel,
# a wheel that does not install, torch missing…) plans for the backend the message's label names when no GPU
# is known here, instead of a CPU default; with the machine's GPU known, the machine decides.
@pytest.mark.parametrize("text,family", [
    ("ERROR: Could not find a version that satisfies the requirement torch==1.11.0+cu113 (from versions: none)",
     "cuda"),  # pytorch/pytorch#75287-style pip line, as diagnoses.toml's own example
    ("ERROR: No matching distribution found for torch==2.5.1+rocm6.2", "rocm"),
    ("ERROR: torch-2.1.0+cu121-cp38-cp38-linux_x86_64.whl is not a supported wheel on this platform.", "cuda"),
])
def test_an_install_fix_plans_for_the_backend_the_message_names(text, family):
    r = run_cli(["explain", "--no-probe", "--os", "linux", "--", text])
    assert r.code == 0, (r.out, r.err)
    fix = _fix(r.out)
    assert _planned_pins("--os", "linux", "--backend", family) in fix, fix
    assert f"`envcheck plan --backend {family}`" in fix and "whl/cpu" not in fix, fix
    mine = run_cli(["explain", "--no-probe", "--os", "linux", "--gpu", "RTX 4090", "--", text])
    assert _planned_pins("--os", "linux", "--gpu", "RTX 4090") in _fix(mine.out), _fix(mine.out)
