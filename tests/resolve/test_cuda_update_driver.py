"""A CUDA *update* release needs no newer driver than its major.minor's first (GA) driver (newcomer6 #2).

Public facts these tests stand on:
* Minor-version compatibility is for a toolkit *newer than the CUDA version the driver supports*:
  "use of CUDA Toolkit 12.9 with CUDA driver 570 (CUDA version 12.8) is supported through MVC"
  (NVIDIA's numba-cuda docs, https://nvidia.github.io/numba-cuda/user/minor_version_compatibility.html;
  NVIDIA's CUDA Compatibility guide, https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
* The CUDA version a driver supports and the runtime's version are both ``1000*major + 10*minor``
  (cuDriverGetVersion / cudaRuntimeGetVersion, https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART____VERSION.html):
  an update release (13.0 Update 2) reports 13000 like 13.0 GA, so a driver of CUDA 13.0 is not older.
* PTX: NVIDIA's cuda-python maps each PTX ISA version to the minimal driver CUDA *major.minor* that loads
  it (PTX ISA 9.0 -> 13.0, cuda.bindings.utils.get_minimal_required_cuda_ver_from_ptx_ver), so PTX from
  a 13.0.x nvcc JIT-compiles on a 13.0 driver.
* NVIDIA's release notes, "CUDA Toolkit and Corresponding Driver Versions": CUDA 13.0 GA >= 580.65.06,
  13.0 Update 2 >= 580.95.05 (the driver *bundled* with that update); 12.6 GA 560.28.03, 12.6 Update 3
  560.35.05; 12.8 GA 570.26; 12.9 GA 575.51.03; 13.2 GA 595.45.04.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from envcheck.machine.describe import apply_flags
from envcheck.matrix.model import vkey
from envcheck.resolve import Request
from envcheck.variants import driver_cuda
from tests.conftest import plan_for

CUDA = Request(backend="cuda")
MATRICES = Path(__file__).resolve().parents[2] / "matrices"


def _ga_drivers():
    """{"13.0": "580.65.06", …}: each CUDA major.minor's first toolkit row's Linux driver, read from
    cuda.toml directly (the rows, in the file's order, are GA before its updates)."""
    rows = tomllib.loads((MATRICES / "cuda.toml").read_text())["toolkit"]
    out = {}
    for row in rows:
        mm = ".".join(row["version"].split(".")[:2])
        out.setdefault(mm, row["driver_linux"])
    return out


def _cuda_builds(matrix):
    return sorted({b.cuda for r in matrix.releases for b in matrix.builds_for(r.version)
                   if b.backend == "cuda" and b.cuda and not b.tegra and "linux-x86_64" in b.platforms},
                  key=vkey)


@pytest.mark.parametrize("gpu,driver,variant,cuda", [
    ("RTX 4090", "580.65.06", "cu130", "13.0"),   # the newcomer's case: 13.0 GA driver, a 13.0.2 build
    ("RTX 4090", "560.28.03", "cu126", "12.6"),   # 12.6 GA driver, a 12.6.3 build
    ("H100", "570.26", "cu128", "12.8"),          # 12.8 GA driver, a 12.8.1 build
])
def test_the_ga_driver_fully_supports_the_update_build(matrix, gpu, driver, variant, cuda):
    res = plan_for(matrix, gpus=[gpu], driver=driver)
    builds = [c for c in res.candidates if c.build.variant == variant and c.build.cuda and not c.build.tegra
              and c.build.cuda != cuda + ".0"]
    assert builds, f"no {variant} build of an update release on record"
    for c in builds:
        assert c.fit.driver == "full", (c.build.cuda, c.fit.driver, [r.message for r in c.warnings])
        assert not any(r.code == "driver" for r in c.warnings + c.reasons), [r.message for r in c.warnings]
    # and variants, written from the same driver, names the same CUDA (one answer)
    assert driver_cuda(matrix, apply_flags(matrix, None, gpus=[gpu], driver=driver)) == cuda


def test_the_chosen_build_on_the_cuda_13_ga_driver_is_a_cuda_13_one(matrix):
    res = plan_for(matrix, gpus=["RTX 4090"], driver="580.65.06")
    assert res.chosen is not None
    assert res.chosen.build.cuda.startswith("13."), res.chosen.build.variant
    assert res.chosen.fit.driver_full == "580.65.06"


def test_every_cuda_build_is_fully_supported_from_its_minor_s_first_driver(matrix):
    """The class: for each CUDA build on record, the driver of its major.minor's first toolkit row is full
    support, the driver of the previous minor's first row is not, and variants agrees with both."""
    ga = _ga_drivers()
    minors = sorted(ga, key=vkey)
    checked = 0
    for cuda in _cuda_builds(matrix):
        mm = ".".join(cuda.split(".")[:2])
        need = ga.get(mm)
        if not need:
            continue  # NVIDIA lists no toolkit driver for this minor: the family floor rules
        res = plan_for(matrix, CUDA, driver=need)
        same = [c for c in res.candidates if c.build.cuda == cuda and not c.build.tegra]
        assert same
        assert {c.fit.driver for c in same} == {"full"}, (cuda, need, {c.fit.driver for c in same})
        assert driver_cuda(matrix, apply_flags(matrix, None, driver=need)) == mm
        prev = minors[minors.index(mm) - 1] if minors.index(mm) else None
        if prev and ga[prev] and vkey(ga[prev]) < vkey(need):
            older = plan_for(matrix, CUDA, driver=ga[prev])
            assert {c.fit.driver for c in older.candidates if c.build.cuda == cuda} <= {"minor", "fail"}, cuda
            assert driver_cuda(matrix, apply_flags(matrix, None, driver=ga[prev])) != mm
        checked += 1
    assert checked >= 15, checked
