"""gfx906 (Radeon VII, Radeon PRO VII, Instinct MI50/MI60) on torch's ROCm 6.4+ wheels.

The wheels still list gfx906 in their own kernels, but the rocBLAS they bundle ships no Tensile
kernels for it, so the first matmul aborts: "rocBLAS error: Cannot read …/TensileLibrary.dat: No such
file or directory for GPU arch : gfx906" — ROCm/legacy-rocm-build#4625 ("The rocblas of 6.4.0 release
doesn't ship TensileLibrary files for gfx906 … rocm 6.3 worked fine"), unslothai/unsloth#7354 ("rocm6.4+/7.x
torch wheels no longer run on it … the rocm6.3 index is the last wheel family that supports the arch"),
pytorch/pytorch#179865 (the TensileLibrary files inside a rocm7.2 wheel: no gfx906). The rule is data
(matrices/rocm-libs.toml); tests/resolve/test_rocm_blas_gap.py checks a few names and the targets it does
not touch. Here: every gfx906 name on record, a release that has both builds, and `verify` of an
installed 6.4 wheel (its arch list names gfx906, so arch_compat passed it).
"""

from __future__ import annotations

import copy
import json

import pytest

from envcheck.matrix.model import vkey
from envcheck.resolve import Request
from envcheck.resolve.plan import make_plan
from tests.conftest import plan_for, run_cli


def gfx906_names(matrix):
    names = [g.name for g in matrix.gpus_with_arch("gfx906")]
    assert {"AMD Radeon VII", "AMD Instinct MI50", "AMD Instinct MI60"} <= set(names), names
    return names + ["gfx906"]


def test_every_gfx906_gpu_gets_the_last_rocm_6_3_build(matrix):
    for name in gfx906_names(matrix):
        res = plan_for(matrix, gpus=[name])
        p = make_plan(res, matrix)
        assert p is not None, name
        # the reports: rocm6.3 is the last wheel family with gfx906 kernels in its rocBLAS
        assert p.build.variant == "rocm6.3" and p.release.version == "2.9.1", (name, p.title)
        for c in res.candidates:
            b = c.build
            if b.channel == "pytorch" and b.rocm and vkey(b.rocm) >= vkey("6.4") and "gfx906" in b.gfx:
                assert not c.accepted, (name, c.build.variant)
                msgs = [r.message for r in c.reasons if r.code == "gpu-arch"]
                assert any("rocBLAS" in m and "TensileLibrary.dat" in m for m in msgs), (name, msgs)


def test_a_release_with_both_builds_takes_rocm_6_3(matrix):
    """torch 2.8.0 ships rocm6.3 and rocm6.4: the Radeon VII gets 6.3."""
    req = Request(torch=Request.parse_torch("==2.8.0"), torch_text="2.8.0")
    p = make_plan(plan_for(matrix, req, gpus=["Radeon VII"]), matrix)
    assert p is not None and p.build.variant == "rocm6.3", p and p.title


@pytest.mark.subprocess
def test_verify_fails_arch_compat_for_an_installed_rocm_6_4_wheel(tmp_path):
    """Facts replayed as a Radeon VII running torch 2.9.1+rocm6.4 (recorded from the real CPU venv's
    collector, the device and build facts set as a ROCm torch reports them): arch_compat fails
    although the arch list names gfx906, and the fix is the plan's rocm6.3 build."""

    from envcheck.matrix import load_matrix
    from tests.verify.conftest import given_or_new_torch_venv, venv_python

    py = venv_python(given_or_new_torch_venv(tmp_path / "venv"))
    r = run_cli(["verify", "--python", str(py), "--checks", "import_torch,arch_compat", "--json"])
    doc = copy.deepcopy(r.json())
    f = doc["facts"]
    row = next(b for b in load_matrix().builds_for("2.9.1") if b.variant == "rocm6.4")
    f["runs"]["import_torch"]["data"]["version"] = "2.9.1+rocm6.4"
    f["packages"]["torch"][0]["version"] = "2.9.1+rocm6.4"
    build = f["runs"]["cuda_build"]["data"]
    build.update(hip="6.4.43482", arch_list=list(row.gfx), is_available=True, device_count=1,
                 devices=[{"index": 0, "name": "AMD Radeon VII", "gcn_arch": "gfx906:sramecc-:xnack-",
                           "memory_mib": 16368}])
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    v = run_cli(["verify", "--facts", str(path), "--json"])
    checks = {c["name"]: c for c in v.json()["checks"]}
    ac = checks["arch_compat"]
    assert ac["status"] == "fail", ac
    assert "rocBLAS" in ac["detail"] and "gfx906" in ac["detail"] and "TensileLibrary.dat" in ac["detail"], ac["detail"]
    assert "torch==2.9.1+rocm6.3" in ac["fix"] and "whl/rocm6.3" in ac["fix"], ac["fix"]
