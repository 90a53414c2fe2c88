"""environment.yml and pixi.toml ask for the driver THEIR build needs, not the pip plan's (newcomer6 #3).

The conda route is resolved on conda-forge's own terms (envcheck.resolve.conda): on a GTX 1080 Ti with
driver 580.65.06 the pip plan is a cu126 wheel, conda-forge's newest pytorch that still targets Pascal
is a cuda-version 12.9 build, and cuda-version 12.9 is fully supported only from the 12.9 GA driver
575.51.03 (NVIDIA release notes, "CUDA Toolkit and Corresponding Driver Versions"). With driver
570.124.06 (CUDA 12.8) conda's cuda-version 12.9 runs under CUDA 12.x minor-version compatibility
(>= 525.60.13, NVIDIA's CUDA Compatibility guide), so that is the floor the recipe asks for and checks,
as it does for a pip plan the resolver accepted under minor-version compatibility (newcomer4 F1).

The expected driver is read here from matrices/cuda.toml with tomllib and from the cuda-version the
file itself pins — not from the plan object.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from envcheck.matrix.model import vkey
from envcheck.render import render
from envcheck.resolve.plan import make_plan
from tests.conftest import plan_for

CUDA_TOML = tomllib.loads((Path(__file__).resolve().parents[2] / "matrices" / "cuda.toml").read_text())


def _expected(cuda_version: str, driver, gpu_arch: str) -> str:
    mm = vkey(cuda_version).release[:2]
    full = next(t["driver_linux"] for t in CUDA_TOML["toolkit"] if vkey(t["version"]).release[:2] == mm)
    floor = next(f["floor_linux"] for f in CUDA_TOML["family"] if f["major"] == mm[0])
    low = next((a.get("driver_min_linux") for a in CUDA_TOML["arch"] if a["sm"] == gpu_arch), None)
    if low:  # a driver below the GPU's own first driver drives nothing
        full, floor = max(full, low, key=vkey), max(floor, low, key=vkey)
    if driver and vkey(driver) < vkey(full):
        return floor
    return full


def _driver_step(text: str):
    want = re.search(r"nvidia-driver: NVIDIA Linux driver >= (\S+)", text)
    check = re.search(r"printf '%s\\n%s\\n' '([^']+)'", text)
    assert want and check, text
    return want.group(1), check.group(1)


@pytest.mark.parametrize("gpu,arch,driver", [
    ("GTX 1080 Ti", "sm_61", "580.65.06"),
    ("RTX 4090", "sm_89", "570.124.06"),
    ("RTX 4090", "sm_89", "580.65.06"),
    ("RTX 4090", "sm_89", "560.28.03"),
    ("H100", "sm_90", None),
])
def test_conda_and_pixi_driver_step_is_their_own_builds(matrix, gpu, arch, driver):
    flags = {"driver": driver} if driver else {}
    plan = make_plan(plan_for(matrix, gpus=[gpu], python="3.12", **flags), matrix)
    files = render(plan, ["conda", "pixi", "pip"])
    env, pixi = files["environment.yml"], files["pixi.toml"]
    cv = re.search(r"cuda-version=(\d+\.\d+)", env).group(1)
    assert re.search(rf'cuda-version = "{re.escape(cv)}\.\*"', pixi), pixi
    expect = _expected(cv, driver, arch)
    for name, text in (("environment.yml", env), ("pixi.toml", pixi)):
        want, check = _driver_step(text)
        assert (want, check) == (expect, expect), (name, cv, want, check, expect)
    # the pip file keeps the pip plan's own driver (its build's CUDA)
    pip_cuda = ".".join(plan.build.cuda.split(".")[:2])
    want, check = _driver_step(files["requirements.txt"])
    assert check == _expected(pip_cuda, driver, arch), (pip_cuda, check)


def test_the_newcomer_case_pins_cuda_13_and_asks_for_a_cuda_13_driver(matrix):
    plan = make_plan(plan_for(matrix, gpus=["RTX 4090"], driver="580.65.06"), matrix)
    files = render(plan, ["conda", "pixi"])
    for text in files.values():
        assert "cuda-version" in text
        want, check = _driver_step(text)
        assert vkey(check) >= vkey("580"), (want, check)  # a 560-579 driver runs no CUDA 13 build


def test_a_jetson_conda_environment_names_no_desktop_driver(matrix):
    # a Jetson's driver comes with JetPack (the resolver's check_driver skips it); the conda route too
    plan = make_plan(plan_for(matrix, gpus=["jetson orin"]), matrix)
    for text in render(plan, ["conda", "pixi"]).values():
        assert "needs an NVIDIA" not in text and "nvidia-driver:" not in text, text[:600]
