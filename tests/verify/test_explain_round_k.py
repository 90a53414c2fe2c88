"""hexplain3 (round K, /work/notes/hexplain3-eval.md): what the new and widened families answer beyond
their family id, which tests/verify/test_reports.py checks for every report.

- A compiler the build carries (NVRTC, Triton's ptxas) must know the GPU: the first release that would
  do is the first whose CUDA targets it (sm_89: CUDA 11.8, NVIDIA's feature list), not the first with a
  cubin for it (1.8.0+cu111 runs sm_86 cubins on an RTX 4090, but its NVRTC is CUDA 11.1's).
- xpu-not-compiled on an unknown machine proposes the XPU build only for an Intel GPU and asks for the
  GPU; on a known NVIDIA machine it is plan's CUDA build, never XPU.
- hip-illegal-state's fix is plan's ROCm build for the AMD GPU named."""

from __future__ import annotations

NVRTC = "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)"
XPU = "AssertionError: Torch not compiled with XPU enabled"


def findings(cli, text, *flags):
    r = cli(["explain", "--no-probe", "--json", *flags, text])
    assert r.code == 0, r.err
    doc = r.json()
    return doc if isinstance(doc, list) else doc["findings"]


def finding(cli, text, *flags):
    return findings(cli, text, *flags)[0]


def test_nvrtc_first_release_is_the_first_whose_cuda_knows_the_gpu(cli):
    f = finding(cli, NVRTC, "--gpu", "RTX 4090")
    assert f["rule"] == "nvrtc-arch-unsupported"
    assert "1.8.0+cu111" not in f["fix"], f["fix"]
    assert "(11.8 or newer)" in f["fix"] and "+cu118" in f["fix"], f["fix"]


def test_triton_ptxas_names_the_base_arch_and_its_cuda_floor(cli):
    f = finding(cli, "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'")
    assert f["rule"] == "triton-arch-unsupported"
    assert "sm_121 is compute capability 12.1" in f["cause"], f["cause"]
    assert "carries sm_121" in f["fix"] and "TRITON_PTXAS_PATH" in f["fix"], f["fix"]
    f = finding(cli, "ptxas fatal : Value 'sm_89' is not defined for option 'gpu-name'")
    assert "CUDA 11.8" in f["cause"] and "1.8.0+cu111" not in f["fix"], f


def test_xpu_not_compiled_asks_for_the_gpu_when_the_machine_is_unknown(cli):
    f = finding(cli, XPU)
    assert f["rule"] == "xpu-not-compiled"
    assert "With an Intel GPU" in f["fix"] and "--gpu" in f["fix"], f["fix"]
    assert not f["fix"].startswith("Install the XPU build"), f["fix"]


def test_xpu_not_compiled_on_nvidia_is_plans_cuda_build(cli):
    f = finding(cli, XPU, "--gpu", "RTX 4090")
    assert "whl/xpu" not in f["fix"] and "+cu" in f["fix"], f["fix"]
    f = finding(cli, XPU, "--gpu", "Arc A770")
    assert f["fix"].startswith("Install the XPU build") and "whl/xpu" in f["fix"], f["fix"]


def test_hip_illegal_state_fix_is_the_rocm_build_for_the_gpu(cli):
    f = finding(cli, "RuntimeError: HIP error: the operation cannot be performed in the present state",
                "--gpu", "RX 7900 XTX")
    assert f["rule"] == "hip-illegal-state"
    assert "+rocm" in f["fix"] and "dmesg" in f["fix"], f["fix"]


def test_cudnn_loader_naming_libcuda_is_the_driver_not_cudnn(cli):
    """cuDNN's loader names the library it could not load first and the real missing one after
    `Error:` — libcuda.so is the driver's (SadTalker#323), so libcudnn-missing must not claim it."""
    both = findings(cli, "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: "
                    "cannot open shared object file: No such file or directory")
    assert [f["rule"] for f in both] == ["libcuda-missing"]
    alone = findings(cli, "Error: Could not load library libcudnn_cnn_infer.so.8")
    assert [f["rule"] for f in alone] == ["libcudnn-missing"]


def test_a_foreign_mkl_is_named_with_the_symbol_it_lacks(cli):
    """pytorch#7758: an /opt/intel MKL on LD_LIBRARY_PATH shadows the environment's own (round M)."""
    f = finding(cli, "ImportError: /opt/intel/compilers_and_libraries_2018.1.163/linux/mkl/lib/intel64_lin/"
                     "libmkl_gf_lp64.so: undefined symbol: mkl_lapack_ao_zgetrf")
    assert f["rule"] == "mkl-symbol-mismatch"
    assert "mkl_lapack_ao_zgetrf" in f["cause"] and "LD_LIBRARY_PATH" in f["fix"], f
