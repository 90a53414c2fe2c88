"""diagnose() on hand-made facts: the arch, driver, numeric, lock and companion judgements."""

from __future__ import annotations

import pytest

from envcheck.verify.diagnose import diagnose, lock_differences
from envcheck.verify.context import Context
from envcheck.verify.facts import facts_from_dict
from envcheck.lock import lock_from_dict
from tests.conftest import plan_for


def facts(torch="2.7.0+cu128", cuda="12.8", arch=(), devices=(), driver=None, runs=None, **extra):
    build = {"cuda": cuda, "hip": None, "errors": {}, "arch_list": list(arch), "devices": list(devices),
             "driver": driver or {}}
    doc = {"schema": 1, "python": {"version": "3.12.3", "executable": "/env/bin/python"},
           "platform": {"os": "linux", "arch": "x86_64", "glibc": "2.39", "wsl": False},
           "runs": {"import_torch": {"outcome": "ok", "data": {"version": torch, "cuda": cuda, "file": "/env/site/torch/__init__.py"}},
                    "cuda_build": {"outcome": "ok", "data": build}, **(runs or {})}}
    doc.update(extra)
    return facts_from_dict(doc)


def one(matrix, f, name, lock=None):
    (c,) = diagnose(f, lock, None, matrix, [name])
    return c


def gpu(cap, name="GPU"):
    return {"index": 0, "name": name, "capability": list(cap), "memory_mib": 24000}


@pytest.mark.parametrize("cap, arch, status, words", [
    ((8, 6), ["sm_80", "sm_86", "sm_90"], "pass", "sm_86"),
    ((8, 9), ["sm_80", "sm_90"], "pass", "sm_80"),                   # same major, lower minor cubin
    ((12, 0), ["sm_80", "sm_90", "compute_90"], "warn", "PTX compute_90"),
    ((7, 5), ["sm_80", "sm_90"], "fail", "nothing in it runs on sm_75"),
    ((12, 0), ["sm_50", "sm_90"], "fail", "nothing in it runs on sm_120"),
])
def test_arch_compat(matrix, cap, arch, status, words):
    c = one(matrix, facts(arch=arch, devices=[gpu(cap)]), "arch_compat")
    assert c.status == status
    assert words in c.detail


def test_arch_compat_amd(matrix):
    dev = {"index": 0, "name": "AMD Radeon RX 5700 XT", "capability": [10, 1], "gcn_arch": "gfx1010:xnack-"}
    f = facts(torch="2.5.1+rocm6.2", cuda=None, arch=["gfx900", "gfx1030", "gfx1100"], devices=[dev])
    f.data["runs"]["cuda_build"]["data"]["hip"] = "6.2.41133"
    c = one(matrix, f, "arch_compat")
    assert c.status == "fail"
    assert "gfx1010" in c.detail and "an AMD target runs only code built for it" in c.detail


def test_arch_compat_without_a_device_says_why(matrix):
    f = facts(arch=["sm_80"], devices=[])
    f.data["runs"]["cuda_build"]["data"]["errors"]["init"] = (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU")
    c = one(matrix, f, "arch_compat")
    assert c.status == "skip"
    assert c.detail.startswith("no NVIDIA driver is visible")


@pytest.mark.parametrize("drv, status, words", [
    ("570.124.06", "pass", "≥ 570"),
    ("550.54.14", "warn", "minor-version compatibility"),
    ("470.86", "fail", "too old for CUDA 12.8"),
])
def test_driver(matrix, drv, status, words):
    c = one(matrix, facts(driver={"version": drv}), "driver")
    assert c.status == status, c
    assert words in c.detail
    if status == "fail":
        assert "Upgrade the NVIDIA driver to ≥ 570" in c.fix


def test_driver_from_cuda_max_only(matrix):
    c = one(matrix, facts(driver={"cuda_max": "11.4"}), "driver")
    assert c.status == "fail"
    assert "CUDA ≤ 11.4" in c.detail
    assert "+cu118" in c.fix


@pytest.mark.parametrize("rows, status, words", [
    ([{"device": "cpu", "dtype": "float32", "rel_error": 2e-7, "nonzero": True}], "pass", "cpu float32 2.0e-07"),
    ([{"device": "cuda:0", "dtype": "float16", "rel_error": 0.7, "nonzero": True}], "fail", "7.0e-01 > 0.01"),
    ([{"device": "cuda:0", "dtype": "float32", "rel_error": None, "nonzero": True}], "fail", "not finite"),
    ([{"device": "cuda:0", "dtype": "bfloat16", "rel_error": 1e-3, "nonzero": False}], "fail", "all zeros"),
    ([{"device": "cpu", "dtype": "float16", "unsupported": "not implemented for 'Half'"}], "pass", "unsupported"),
])
def test_matmul_tolerances(matrix, rows, status, words):
    f = facts(runs={"matmul": {"outcome": "ok", "data": {"results": rows}}})
    c = one(matrix, f, "matmul")
    assert c.status == status
    assert words in c.detail


LOCK = {"schema": 1, "build": {"torch": "2.7.0", "variant": "cu128"},
        "expect": {"torch_version": "2.7.0+cu128", "variant": "cu128", "cuda": "12.8", "cudnn": "9.7.1.26",
                   "cudnn_version": 90701, "nccl": "2.26.2", "arch_list": ["sm_80", "sm_90", "sm_120"],
                   "python": "3.12"},
        "pip": {"lines": ["--index-url https://download.pytorch.org/whl/cu128", "torch==2.7.0+cu128"]}}


def test_lock_matches(matrix):
    f = facts(arch=["sm_80", "sm_90", "sm_100", "sm_120"])
    f.data["runs"]["cuda_build"]["data"].update(cudnn=90701, nccl="2.26.2")
    c = one(matrix, f, "lock", lock_from_dict(LOCK))
    assert c.status == "pass", c


def test_lock_lists_every_difference(matrix):
    f = facts(torch="2.6.0+cu126", cuda="12.6", arch=["sm_80", "sm_90"])
    f.data["runs"]["cuda_build"]["data"].update(cudnn=90501, nccl="2.21.5")
    diffs = [m for m, *_ in lock_differences(Context(f, matrix), lock_from_dict(LOCK))]
    assert diffs == ["torch: lock 2.7.0+cu128, installed 2.6.0+cu126", "variant: lock cu128, installed cu126",
                     "CUDA: lock 12.8, torch.version.cuda 12.6", "cuDNN: lock 9.7.1.26 (90701), loaded 9.5.1",
                     "NCCL: lock 2.26.2, loaded 2.21.5", "arch list lacks sm_120 the lock expects"]
    c = one(matrix, f, "lock", lock_from_dict(LOCK))
    assert c.status == "fail"
    assert "`/env/bin/python -m pip install --force-reinstall torch==2.7.0+cu128 --index-url " \
           "https://download.pytorch.org/whl/cu128`" in c.fix


def test_cpu_build_on_a_gpu_machine(matrix):
    f = facts(torch="2.7.0+cpu", cuda=None, machine={"os": "linux", "arch": "x86_64", "nvidia_driver": "570.124.06",
                                                        "gpus": [{"vendor": "nvidia", "name": "RTX 4090", "arch": "sm_89"}]})
    c = one(matrix, f, "cuda_build")
    assert c.status == "fail"
    assert "CPU-only build (torch.version.cuda is None), but this machine has RTX 4090 (sm_89)" in c.detail
    # the fix is plan's choice for this machine (#10: one answer), with a way to stay on 2.7.0
    chosen = plan_for(matrix, gpus=["RTX 4090"], driver="570.124.06", python="3.12", glibc="2.39").chosen
    assert f"torch=={chosen.build.version_of(chosen.release.version)}" in c.fix
    assert "to stay on torch 2.7.0: " in c.fix and "torch==2.7.0+cu12" in c.fix and "`envcheck plan --torch 2.7.0`" in c.fix


def test_torchvision_that_pairs_with_another_torch_warns(matrix):
    f = facts(torch="2.7.0+cu128", runs={"torchvision_compat": {"outcome": "ok", "data": {
        "version": "0.23.0+cu128", "nms": [{"device": "cpu", "keep": [0, 2], "expected": [0, 2]}]}}})
    c = one(matrix, f, "torchvision_compat")
    assert c.status == "warn"
    assert "torchvision 0.23.0+cu128 is built for torch 2.8.0, but the torch loaded is 2.7.0+cu128" in c.detail


def test_wrong_nms_result_fails(matrix):
    f = facts(runs={"torchvision_compat": {"outcome": "ok", "data": {
        "version": "0.22.0", "nms": [{"device": "cuda:0", "keep": [0, 1, 2], "expected": [0, 2]}]}}})
    assert one(matrix, f, "torchvision_compat").status == "fail"


def test_distributed_hang_reported_by_the_worker(matrix):
    f = facts(runs={"distributed": {"outcome": "ok", "data": {
        "backend": "gloo", "world_size": 2, "start_method": "fork", "expected": 3.0, "hung_ranks": [1],
        "timeout": 48.0, "ranks": [{"rank": 0, "values": [3.0] * 4}, {"rank": 1, "exitcode": None}]}}})
    c = one(matrix, f, "distributed")
    assert c.status == "fail"
    assert "rank(s) [1] did not finish within 48 s" in c.detail
    assert "GLOO_SOCKET_IFNAME" in c.fix


def test_wsl_libhsa_bundled(matrix):
    f = facts(torch="2.6.0+rocm6.4.1.git1ded221d", cuda=None, runs={"wsl_libhsa": {"outcome": "ok", "data": {
        "libdir": "/env/site/torch/lib", "bundled": ["/env/site/torch/lib/libhsa-runtime64.so"]}}})
    c = one(matrix, f, "wsl_libhsa")
    assert c.status == "fail"
    assert "libhsa-runtime64.so" in c.fix and "rm " in c.fix


def test_a_kepler_gpu_is_never_told_to_upgrade_past_r470(matrix):
    """newcomer H4 in verify: a Tesla K80 (sm_37) on 470.256.02 running torch 2.5.1+cu118 runs it under CUDA
    11.x minor-version compatibility; full support needs 520.61.05, a branch that no longer drives Kepler
    (NVIDIA data-center CUDA/arch matrix: 'Last Driver Support R470'; Debian nvidia-tesla-470-driver)."""
    f = facts(torch="2.5.1+cu118", cuda="11.8", arch=["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
              devices=[gpu((3, 7), "Tesla K80")], driver={"version": "470.256.02"})
    c = one(matrix, f, "driver")
    assert c.status == "warn", c
    assert "Upgrade" not in (c.fix or "") and "R470" in c.fix, c.fix
    # a Turing GPU on the same driver is still told to upgrade
    f = facts(torch="2.5.1+cu118", cuda="11.8", devices=[gpu((7, 5), "Tesla T4")], driver={"version": "470.256.02"})
    assert "Upgrade the NVIDIA driver to ≥ 520.61.05" in one(matrix, f, "driver").fix


def test_a_kepler_gpu_below_the_floor_is_sent_to_r470_not_past_it(matrix):
    f = facts(torch="2.5.1+cu118", cuda="11.8", devices=[gpu((3, 7), "Tesla K80")], driver={"version": "440.33.01"})
    c = one(matrix, f, "driver")
    assert c.status == "fail"
    assert "≥ 450.80.02 on the R470 branch" in c.fix and "≥ 520.61.05" not in c.fix, c.fix
