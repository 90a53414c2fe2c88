"""newcomer4 F2 and F4: two `explain` answers that could not work.

F2: `ImportError: libtorch_cuda.so: cannot open shared object file` was told to reinstall torch — even
with facts of a CPU torch, whose wheel has no libtorch_cuda.so at all (torch/lib of a +cpu wheel holds
libtorch_cpu.so, libc10.so, … only). The classic cause is a CPU torch under an extension built for a
CUDA torch (public reports: AILab-CVC/YOLO-World#346 "PyTorch is not correctly installed", mmcv
prebuilt for cu113 under another torch in obss/sahi#382, open-mmlab/mmcv#2914).

F4: "driver too old (found version 11040)" with --gpu "RTX 3050 Laptop" said "upgrade to ≥ 455.23.04":
found version 11040 is CUDA 11.4, whose toolkit driver is 470.42.01 (NVIDIA CUDA toolkit release
notes, Table 3), so the user already has more than that. The target must be the driver plan's build
for the GPU needs, newer than what the message shows.
"""

from __future__ import annotations

import re

from tests.conftest import ROOT

MSG = "ImportError: libtorch_cuda.so: cannot open shared object file: No such file or directory"
CPU_FACTS = ROOT / "tests" / "fixtures" / "verify" / "cases" / "C10.json"  # a recorded torch 2.2.2+cpu


def _vk(v):
    return tuple(int(x) for x in v.split("."))


def test_libtorch_cuda_missing_is_never_a_reinstall_of_the_cpu_build(cli):
    for extra in ([], ["--facts", str(CPU_FACTS)]):
        r = cli(["explain", "--no-probe", *extra, MSG])
        assert r.code == 0, r
        assert "(torch-cuda-lib-missing)" in r.out and "(torch-lib-missing)" not in r.out, r.out
        assert "CPU-only torch" in r.out and "built for a CUDA torch" in r.out, r.out
        assert "/whl/cpu" not in r.out and "+cpu torchvision" not in r.out, r.out  # no CPU reinstall
    with_facts = cli(["explain", "--no-probe", "--facts", str(CPU_FACTS), MSG])
    assert "The installed torch 2.2.2+cpu is the CPU-only build" in with_facts.out, with_facts.out


def test_libtorch_cuda_missing_fix_is_plans_cuda_build_for_the_gpu(cli):
    r = cli(["explain", "--no-probe", "--gpu", "RTX 4090", MSG])
    plan = cli(["plan", "--gpu", "RTX 4090", "--json"])
    import json

    pins = json.loads(plan.out)["chosen"]["pins"]
    assert f"torch=={pins['torch']}" in r.out and "+cu" in pins["torch"], r.out  # one answer: plan's
    assert "rebuild the extension" in r.out, r.out


def test_other_torch_libraries_keep_their_family(cli):
    r = cli(["explain", "--no-probe", "ImportError: libtorch_cpu.so: cannot open shared object file: No such file"])
    assert "(torch-lib-missing)" in r.out and "(torch-cuda-lib-missing)" not in r.out, r.out


def test_driver_too_old_upgrade_target_is_newer_than_the_driver_the_message_shows(cli):
    r = cli(["explain", "--no-probe", "--gpu", "RTX 3050 Laptop",
             "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)"])
    target = re.search(r"Upgrade the NVIDIA driver to ≥ (\d+\.\d+(?:\.\d+)?)", r.out)
    assert target, r.out
    assert _vk(target.group(1)) > _vk("470.42.01"), r.out  # CUDA 11.4's toolkit driver: the user has that
    assert "455.23.04" not in r.out and "the first that drives the GeForce RTX 3050" not in r.out, r.out
    assert "cu118" in r.out  # the build this driver runs stays plan's answer
