"""breaker5 F3: `explain` fixes that contradicted `plan` for the same --gpu / --os / --wsl.

One answer everywhere: a fix that recommends a build is the resolver's for the machine given, and a
message that cannot come from that machine's GPU says so instead of planning for another GPU.
- triton-arch-unsupported (ptxas: sm_120; triton-lang/triton#8539) with `--gpu 'RX 7900 XTX'` told the
  user to install a CUDA build while `plan` picks ROCm.
- hip-illegal-state (InvokeAI#5738) with `--gpu 'RTX 4090'` gave a ROCm fix and a CUDA fix at once.
- On Windows / under WSL the ROCm families said "no build has code for gfx1100/gfx1103" (the blocker
  is the OS: plan picks rocm7.14 on Linux) and suggested a `plan` command without --os/--wsl, which
  then answered for Linux.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

PTXAS = "RuntimeError: Internal Triton PTX codegen error: ptxas fatal : Value 'sm_120' is not defined for option 'gpu-name'"
ILLEGAL = "RuntimeError: HIP error: the operation cannot be performed in the present state"  # InvokeAI#5738
INVALID = "RuntimeError: HIP error: invalid device function"  # pytorch/pytorch#132570


def _fix(r):
    return next(line for line in r.out.splitlines() if line.strip().startswith("fix:"))


def _plan_variant(cli, *machine):
    r = cli(["plan", *machine, "--json"])
    chosen = r.json()["chosen"]
    return chosen["pins"]["torch"] if chosen else None


@pytest.mark.parametrize("gpu,text", [("RX 7900 XTX", PTXAS), ("RTX 4090", PTXAS), ("RTX 4090", ILLEGAL),
                                      ("H100", INVALID)])
def test_a_message_of_another_gpu_recommends_no_build_of_its_own(cli, gpu, text):
    r = cli(["explain", "--no-probe", "--gpu", gpu, "--", text])
    assert r.code == 0, r.err
    fix = _fix(r)
    assert "this machine's GPU is the" in fix and "no build is recommended" in fix, fix
    assert "torch==" not in fix, fix  # neither a CUDA nor a ROCm install for a GPU the machine lacks
    assert "`envcheck plan --gpu " in fix


def test_the_machines_own_gpu_still_gets_plans_build(cli):
    r = cli(["explain", "--no-probe", "--gpu", "RTX 5090", "--", PTXAS])
    assert r.code == 0, r.err
    want = _plan_variant(cli, "--gpu", "RTX 5090")
    assert want and f"torch=={want}" in _fix(r), (_fix(r), want)
    r = cli(["explain", "--no-probe", "--gpu", "RX 7900 XTX", "--", INVALID])
    want = _plan_variant(cli, "--gpu", "RX 7900 XTX")
    assert want and "rocm" in want and f"torch=={want}" in _fix(r), (_fix(r), want)


@pytest.mark.parametrize("gpu,flags,text", [
    ("RX 7900 XTX", ["--os", "windows"], ILLEGAL),
    ("AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", ["--wsl"], INVALID),
    ("AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", ["--os", "windows"], INVALID),
])
def test_on_windows_and_wsl_the_blocker_is_the_platform_and_the_command_keeps_it(cli, gpu, flags, text):
    assert _plan_variant(cli, "--gpu", gpu, *flags) is None  # plan: nothing official runs here
    assert "rocm" in _plan_variant(cli, "--gpu", gpu)  # … while Linux has a build with code for the GPU
    r = cli(["explain", "--no-probe", "--gpu", gpu, *flags, "--", text])
    assert r.code == 0, r.err
    fix = _fix(r)
    assert "none for gfx" not in fix, fix  # not "no build has code for this GPU"
    assert "do not run here" in fix and ("Windows" in fix or "WSL" in fix), fix
    assert " ".join(flags) + " --explain`" in fix, fix


# gpu-no-bf16: "this GPU lacks bf16" only for a GPU below compute capability 8.0 (the
# bf16_min_compute_capability limit: torch.cuda.is_bf16_supported's rule); the README's evidence line
# writes the call without the backtick the pattern used to require.
BF16 = ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle, opa, opb, m, n, k, "
        "&falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, CUDA_R_32F, "
        "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`")  # pytorch/pytorch#57773 (a GTX 1080 Ti)


def _cause(r):
    return next(line for line in r.out.splitlines() if line.strip().startswith("cause:"))


@pytest.mark.parametrize("gpu", ["RTX 4090", "H100", "A100"])
def test_a_bf16_capable_gpu_is_not_told_it_lacks_bf16(cli, gpu):
    r = cli(["explain", "--no-probe", "--gpu", gpu, "--", BF16])
    assert r.code == 0 and "(gpu-no-bf16)" in r.out, r.out
    assert "lacks" not in _cause(r) and "runs bfloat16 natively" in _cause(r), _cause(r)
    assert "is_bf16_supported()` is true)" in _fix(r)


def test_an_amd_gpu_is_not_given_the_nvidia_story(cli):
    r = cli(["explain", "--no-probe", "--gpu", "RX 7900 XTX", "--", BF16])
    assert r.code == 0 and "(gpu-no-bf16)" in r.out, r.out
    assert "this machine's GPU is the AMD Radeon RX 7900 XTX" in _cause(r) and "lacks" not in _cause(r), _cause(r)


@pytest.mark.parametrize("gpu", ["GTX 1080 Ti", "Tesla M40", "V100", "T4"])
def test_a_gpu_below_compute_capability_8_lacks_bf16(cli, gpu):
    r = cli(["explain", "--no-probe", "--gpu", gpu, "--", BF16])
    assert r.code == 0 and "(gpu-no-bf16)" in r.out, r.out
    assert "on this GPU (" in _cause(r) and "adds bf16 to a GPU that lacks it" in _cause(r), _cause(r)
    assert "float16" in _fix(r)


def test_the_readmes_evidence_form_without_a_backtick_is_recognised(cli):
    r = cli(["explain", "--no-probe", "--",
             "CUBLAS_STATUS_NOT_SUPPORTED when calling cublasGemmEx(handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda)"])
    assert r.code == 0 and "(gpu-no-bf16)" in r.out, r.out


def test_triton_on_windows_names_no_triton_that_windows_wheels_lack_nor_a_linux_export(cli):
    r = cli(["explain", "--no-probe", "--gpu", "RTX 5090", "--os", "windows", "--", PTXAS])
    assert r.code == 0, r.err
    fix = _fix(r)
    assert "pip installs it with torch" not in fix and "export TRITON_PTXAS_PATH" not in fix, fix
    assert "triton-windows" in fix
    linux = _fix(cli(["explain", "--no-probe", "--gpu", "RTX 5090", "--", PTXAS]))
    assert "export TRITON_PTXAS_PATH" in linux  # Linux keeps its advice
    other = _fix(cli(["explain", "--no-probe", "--gpu", "RTX 4090", "--", PTXAS]))
    assert "Triton paired with plan's torch" not in other, other  # no plan's-Triton claim for another GPU


PTXAS_OF = "ptxas fatal   : Value '{}' is not defined for option 'gpu-name'"  # Triton's ptxas (triton-lang/triton#8539)


@pytest.mark.parametrize("arch, code, word", [
    ("sm_999", 1, "unknown"),   # past the newest architecture on record: the data is too old, not the text
    ("sm_130", 1, "unknown"),
    ("sm_85", 1, "garbled"),    # below the newest, and none on record: no such architecture
    ("sm_120", 0, None),        # a real one is explained
    ("sm_121", 0, None),
])
def test_an_architecture_the_data_does_not_know_is_said_so_with_exit_1(arch, code, word):
    """breaker5 F3 (left by hfix8): `ptxas … 'sm_999'` was explained (exit 0) as if it were a GPU."""
    r = run_cli(["explain", "--no-probe", "--json", "--", PTXAS_OF.format(arch)])
    assert r.code == code, (r.code, r.out, r.err)
    doc = json.loads(r.out)
    finding = (doc["findings"] if isinstance(doc, dict) else doc)[0]
    assert finding.get("unknown", False) == (word == "unknown")
    assert finding.get("garbled", False) == (word == "garbled")
    if word == "unknown":
        assert "newer than every NVIDIA architecture" in finding["cause"] and "envcheck matrix update" in finding["fix"]
        assert "garbled" not in finding["cause"]
    if word is None:
        assert "not an NVIDIA architecture envcheck knows" not in finding["fix"]
