"""hexplain4 (round N, /work/notes/hexplain4-eval.md): what the new and widened families answer beyond
their family id, which tests/verify/test_reports.py checks for every report.

- torch's run-time NVRTC loads (`Error in dlopen or dlsym: libcaffe2_nvrtc.so`, `failed to open
  libnvrtc-builtins.so.X.Y`) come from a CUDA build: not "a CPU-only torch" (pytorch#31554 got that).
- pip's check after installing (`X V requires torch==Y, but you have torch Z which is incompatible.`)
  is the same conflict as ResolutionImpossible, and its fix pins torch with the pair plan makes.
- A `torch==X.Y.Z` that PyPI never had (a README's 1.15.0 for 1.5.0) is named as such.
- A HIP message on an NVIDIA machine: the ROCm build installed there by mistake is named."""

from __future__ import annotations

import pytest


def finding(cli, text, *flags):
    r = cli(["explain", "--no-probe", "--json", *flags, text])
    assert r.code == 0, r.err
    doc = r.json()
    return (doc if isinstance(doc, list) else doc["findings"])[0]


@pytest.mark.parametrize("text", [
    "RuntimeError: Error in dlopen or dlsym: libcaffe2_nvrtc.so: cannot open shared object file: No such file or directory",
    "nvrtc: error: failed to open libnvrtc-builtins.so.11.7.\nMake sure that libnvrtc-builtins.so.11.7 is installed correctly.",
])
def test_nvrtc_loaded_at_run_time_is_a_cuda_build_not_a_cpu_one(cli, text):
    f = finding(cli, text)
    assert f["rule"] == "nvrtc-lib-missing", f["rule"]
    assert "not a CPU-only torch" in f["cause"] and "+cpu" not in f["fix"], f


def test_a_missing_libcaffe2_nvrtc_at_import_stays_the_cuda_only_library(cli):
    f = finding(cli, "ImportError: libcaffe2_nvrtc.so: cannot open shared object file: No such file or directory")
    assert f["rule"] == "torch-cuda-lib-missing"


def test_pips_check_after_install_is_the_torch_pin_conflict(cli):
    f = finding(cli, "torchvision 0.18.0 requires torch==2.3.0, but you have torch 2.2.1 which is incompatible.")
    assert f["rule"] == "pip-resolution-conflict"
    assert "torchvision 0.18.0 requires torch==2.3.0" in f["cause"]
    assert "torch==2.3.0" in f["fix"] and "torchvision==0.18.0" in f["fix"], f["fix"]  # plan's pair for 2.3.0


def test_a_torch_release_pypi_never_had_is_named(cli):
    f = finding(cli, "ERROR: No matching distribution found for torch==1.15.0")
    assert "There is no torch 1.15.0 on PyPI" in f["cause"] and "from 1.13.1 to 2.0.0" in f["cause"], f["cause"]
    f = finding(cli, "ERROR: No matching distribution found for torch==2.1.0")
    assert "There is no torch" not in f["cause"]  # a real release: the Python or platform is the reason


def test_docker_without_the_quoted_driver_name(cli):
    f = finding(cli, "docker: Error response from daemon: could not select device driver with capabilities: [[gpu]].")
    assert f["rule"] == "docker-no-gpu-runtime"


@pytest.mark.parametrize("text", ["hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
                                  "RuntimeError: No HIP GPUs are available"])
def test_a_hip_message_on_an_nvidia_machine_names_the_rocm_build_installed_there(cli, text):
    f = finding(cli, text, "--gpu", "RTX 3050 Laptop")
    assert "ROCm build" in f["cause"] + f["fix"]
    assert "torch installed here is a ROCm build" in f["fix"] or "NVIDIA's, the ROCm build was installed" in f["cause"], f
