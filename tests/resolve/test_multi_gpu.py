"""Several GPUs, several vendors (#10): one wheel drives one vendor's GPUs; integrated GPUs never
block a plan; --gpu order says which GPU to plan for.

Public reports: an iGPU next to nothing else is not served by ROCm wheels (ROCm/legacy-rocm-build#2216,
Ryzen 5600G); gfx1103 (Radeon 780M) is in no official ROCm build (matrices/gpus-amd.toml sources)."""

from __future__ import annotations

from tests.conftest import plan_for


def test_rtx_3060_with_a_radeon_780m_gets_the_cuda_build(matrix):
    res = plan_for(matrix, gpus=["RTX 3060", "Radeon 780M"])
    assert res.status == "ok" and res.chosen.build.backend == "cuda"
    (igpu,) = res.machine.unserved_gpus
    assert igpu.integrated and igpu.arch == "gfx1103"
    assert any("780M" in a and "unused" in a for a in res.assumptions)


def test_the_integrated_gpu_never_blocks_whatever_the_order(matrix):
    res = plan_for(matrix, gpus=["Radeon 780M", "RTX 3060"])
    assert res.chosen.build.backend == "cuda"


def test_two_discrete_vendors_plan_for_the_first_named(matrix):
    amd = plan_for(matrix, gpus=["RX 7600", "RTX 3060"])
    assert amd.chosen.build.backend == "rocm" and "gfx1102" in amd.chosen.build.gfx
    assert any("RTX 3060" in a and "unused" in a for a in amd.assumptions)
    nv = plan_for(matrix, gpus=["RTX 3060", "RX 7600"])
    assert nv.chosen.build.backend == "cuda"


def test_cli_done_when(cli):
    r = cli(["plan", "--gpu", "RTX 3060", "Radeon 780M", "--json"])
    assert r.code == 0 and r.json()["chosen"]["variant"].startswith("cu")
