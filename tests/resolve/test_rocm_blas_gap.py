"""gfx900/gfx906 on ROCm >= 6.4 wheels: torch lists the target, the bundled rocBLAS has no Tensile library for it.

Public reports: ROCm/legacy-rocm-build#4625 (ROCm 6.4.0's rocBLAS ships TensileLibrary files for
gfx908/90a/942/1030/1100/1101/1102/1200/1201 only; "rocm 6.3 worked fine"), pytorch/pytorch#179865 (a 2.12
rocm7.2 wheel on a Vega 56, gfx900: "rocBLAS error: Cannot read …/torch/lib/rocblas/library/TensileLibrary.dat
… for GPU arch : gfx900", abort). torchruntime plans Vega 20 on rocm5.7 and Vega 10 on rocm5.2 for the same
reason; uv's table (read off torch's arch list) sends both to rocm7.2. The rule is data (matrices/rocm-libs.toml).
"""

from __future__ import annotations

import pytest

from envcheck.matrix.model import vkey
from tests.conftest import plan_for


@pytest.mark.parametrize("gpu", ["MI50", "Radeon VII", "RX Vega 64", "gfx906", "gfx900"])
def test_vega_gets_a_wheel_built_on_rocm_6_3_or_older(matrix, gpu):
    res = plan_for(matrix, gpus=[gpu])
    c = res.chosen
    assert c is not None and c.build.backend == "rocm", res.status
    assert vkey(c.build.rocm) < vkey("6.4"), c.build.variant
    # the 2.14.1+rocm7.2 wheel still lists the target, and is rejected for the BLAS gap, with the abort quoted
    newest = [x for x in res.candidates if x.release.version == "2.14.1" and x.build.variant == "rocm7.2"]
    assert newest and all(not x.accepted for x in newest)
    text = " ".join(r.message for x in newest for r in x.reasons if r.code == "gpu-arch")
    assert "TensileLibrary.dat" in text and "ROCm 6.4+" in text


@pytest.mark.parametrize("gpu, newer_than", [("MI100", "6.4"), ("7900xtx", "7.0"), ("MI300X", "7.0")])
def test_other_targets_keep_the_newest_rocm(matrix, gpu, newer_than):
    c = plan_for(matrix, gpus=[gpu]).chosen
    assert c is not None and vkey(c.build.rocm) >= vkey(newer_than), c.build.variant


def test_a_rocm_6_4_wheel_is_refused_when_asked_for(matrix):
    from envcheck.resolve import Request

    res = plan_for(matrix, Request(backend="rocm6.4"), gpus=["MI50"])
    assert res.chosen is None
    assert any("Tensile" in r.message for x in res.candidates for r in x.reasons)
