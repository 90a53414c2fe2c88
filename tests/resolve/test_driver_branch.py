"""A GPU's last driver branch caps the driver a plan may ask for (newcomer H4), and every driver
floor shown is the higher of the CUDA floor and the GPU's own (newcomer M6).

Public facts these tests stand on (also the sources of matrices/cuda.toml [[arch]] rows):
* Kepler (sm_35/sm_37, Tesla K80) is driven only up to R470: NVIDIA's data-center "CUDA and
  architecture matrix" (docs.nvidia.com/datacenter/tesla/drivers/#cuda-arch-matrix, "Last Driver
  Support R470", cited in NixOS/nixpkgs#142565 "R470 is the last version supporting the kepler
  architecture"); Debian's nvidia-tesla-470-driver: "The (Tesla) 470 drivers are the last driver
  series supporting GPUs based on the Kepler architecture".
* Maxwell/Pascal/Volta: NVIDIA's Unix graphics feature deprecation schedule
  (forums.developer.nvidia.com/t/unix-graphics-feature-deprecation-schedule/60588): "The release 580
  series will be the last to support GPUs based on the Maxwell, Pascal, and Volta architectures";
  595.71.05 logs "supported through the NVIDIA 580.xx Legacy drivers" (NixOS/nixos-hardware#1880).
* CUDA 11.x runs under minor-version compatibility from 450.80.02 (NVIDIA CUDA compatibility guide),
  so a cu118 build runs on an R470 driver without full support (CUDA 11.8's toolkit driver is 520.61.05).
* Blackwell (sm_120, RTX 5090) is driven from R570 (570.86.10); a 525 driver runs CUDA 12.8 code under
  minor-version compatibility on older GPUs, never on a Blackwell one.
"""

from __future__ import annotations

from envcheck.resolve import Request
from envcheck.resolve.plan import make_plan
from envcheck.render.common import driver_line
from envcheck.resolve.recipe import placeholders
from envcheck.resolve.rules import driver_branch
from tests.conftest import plan_for


TORCH_27 = Request(torch=Request.parse_torch("2.7"), torch_text="2.7")


def _driver_notes(c):
    return [w.message for w in c.warnings if w.code == "driver"]


def test_k80_is_never_told_to_install_a_driver_past_r470(matrix):
    res = plan_for(matrix, gpus=["K80"])
    c = res.chosen
    assert c is not None and c.build.backend == "cuda"
    plan = make_plan(res, matrix)
    d = plan.driver
    assert d["last_branch"] == "470"
    # what the user is told to install stays on R470
    need = placeholders(plan, matrix)["driver_min"]
    assert driver_branch(need.split()[0]) <= 470, need
    assert "R470" in need and "470.xx" in need
    line = driver_line(plan)
    assert "≥ 520.61.05" not in line.split("(full support")[0], line
    assert "minor-version compatibility" in line
    assert any("stay on 470.xx" in m for m in _driver_notes(c))
    # the chosen build's floor is on the branch, under minor-version compatibility
    assert c.fit.driver == "minor" and driver_branch(c.fit.driver_floor) <= 470


def test_a_build_whose_every_floor_is_past_the_last_branch_is_rejected(matrix):
    # CUDA 12.x needs ≥ 525.60.13 even under minor-version compatibility: past R470
    res = plan_for(matrix, gpus=["K80"])
    cu12 = [c for c in res.rejected if c.build.cuda and c.build.cuda.startswith("12.") and not c.build.tegra
            and not any(r.code in ("os", "arch", "torch") for r in c.reasons)]
    assert cu12
    assert all(any(r.code == "driver" and "R470" in r.message for r in c.reasons) for c in cu12)
    # and with a driver given the answer is the same build (one answer)
    with_drv = plan_for(matrix, gpus=["K80"], driver="470.256.02")
    assert with_drv.chosen is not None
    assert (with_drv.chosen.release.version, with_drv.chosen.build.variant) == (
        res.chosen.release.version, res.chosen.build.variant)


def test_pascal_volta_builds_past_r580_run_only_under_minor_version_compat(matrix):
    # a cu132 build (toolkit driver 595.x) on a V100: R580 is the last branch, the 13.x floor 580.65.06 is on it
    res = plan_for(matrix, gpus=["V100"])
    cu132 = [c for c in res.candidates if c.build.variant == "cu132"]
    assert cu132
    for c in cu132:
        assert c.fit.driver_last_branch == "580"
        assert any("stay on 580.xx" in r.message for r in c.warnings + c.reasons if r.code == "driver")


def test_blackwell_floor_is_the_gpu_floor_not_the_cuda_12_one(matrix):
    res = plan_for(matrix, TORCH_27, gpus=["RTX 5090"])
    plan = make_plan(res, matrix)
    floor = plan.driver.get("floor") or plan.driver.get("full")
    assert floor is not None and driver_branch(floor) >= 570, plan.driver
    assert "525.60.13" not in driver_line(plan)
    assert not any("525.60.13" in a for a in res.assumptions)


def test_a_turing_gpu_keeps_the_cuda_floors(matrix):
    # no last branch, GPU floor below CUDA's: nothing changes (the class fix must not over-reach)
    res = plan_for(matrix, TORCH_27, gpus=["T4"])
    plan = make_plan(res, matrix)
    assert "last_branch" not in plan.driver
    assert plan.driver.get("floor") == "525.60.13"


def test_a_driver_known_only_by_its_cuda_cannot_drive_a_newer_gpu(matrix):
    """"The NVIDIA driver on your system is too old (found version 12040)" tells only the CUDA the
    driver supports (12.4: an R550 driver, older than CUDA 12.5's 555.42.02 toolkit driver). Such a
    driver drives no Blackwell GPU (first driver 570.86.10), so no CUDA build fits an RTX 5090 there —
    it used to plan torch 2.10.0+cu128 under minor-version compatibility (newcomer3 #2) — while an
    Ampere GPU (driven since R455) still gets a build."""
    from dataclasses import replace

    from envcheck.resolve import resolve

    for gpu, fits in (("RTX 5090", False), ("RTX 5080", False), ("RTX 3090", True), ("A100", True)):
        base = plan_for(matrix, gpus=[gpu]).machine
        res = resolve(replace(base, cuda_driver_max="12.4"), Request(backend="cuda"), matrix)
        assert (res.chosen is not None) == fits, (gpu, res.chosen)
        if not fits:
            why = [r.message for c in res.candidates if c.build.backend == "cuda" for r in c.reasons
                   if r.code == "driver" and "supports CUDA ≤ 12.4" in r.message and "cannot drive" in r.message]
            assert why and "570.86.10" in why[0], why[:1]


def test_explain_asks_for_the_gpus_first_driver_not_a_build(cli):
    r = cli(["explain", "--no-probe", "--gpu", "RTX 5090",
             "RuntimeError: The NVIDIA driver on your system is too old (found version 12040)."])
    # the target is the driver plan's build for the GPU needs (newcomer4 F4), never below Blackwell's
    # first driver 570.86.10; no build runs on a CUDA 12.4 driver for it, so nothing to pip install
    import re

    target = re.search(r"Upgrade the NVIDIA driver to ≥ (\d+\.\d+(?:\.\d+)?)", r.out)
    assert target and tuple(map(int, target.group(1).split("."))) >= (570, 86, 10), r.out
    assert "plan's build for this GPU" in r.out and "pip install" not in r.out, r.out
