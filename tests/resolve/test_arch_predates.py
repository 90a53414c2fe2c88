"""A CUDA build whose toolkit predates a GPU's architecture and reaches it only through PTX is
rejected, never ranked (breaker F16).

Public case: pytorch/pytorch#153944 — an RTX 5080 on Windows with torch 2.7.0+cu118 (arch list
"sm_37 … sm_90 compute_37"): "sm_120 is not compatible with the current PyTorch installation"; the
maintainer: "CUDA-11.8 does not support Blackwell GPUs, one needs to use 12.8". Also #146977,
#149845 (RTX 50 needs a cu128 build), NVIDIA's Blackwell compatibility guide (applications built
with CUDA ≤ 12.7 need their libraries rebuilt for Blackwell) and cuDNN's support matrix (each
architecture per CUDA build): the cuDNN/cuBLAS a cu118 build bundles have no code for sm_120,
whatever torch's own PTX JIT-compiles.
"""

from __future__ import annotations

import pytest

from envcheck.matrix.model import vkey
from tests.conftest import plan_for, run_cli

#: driver versions per OS, old to new (each a real release of its branch)
DRIVERS = {
    "linux": [None, "520.61.05", "525.60.13", "535.54.03", "550.54.14", "560.35.03", "570.124.06",
              "575.51.03", "580.65.06"],
    "windows": [None, "522.06", "528.33", "537.13", "551.61", "561.09", "572.16", "576.02", "580.88"],
}
FAMILIES = ("Ada", "Hopper", "Blackwell")


def _gpus(matrix, os_=None):
    """One GPU name per architecture of the families (Jetson parts left out: their own builds), of
    the GPUs that come in systems running ``os_`` (a GB200 is never in a Windows machine: host_os)."""
    out = {}
    for g in matrix.gpus:
        arch = matrix.nv_arch(g.arch) if g.vendor == "nvidia" else None
        if os_ is not None and g.host_os and os_ not in g.host_os:
            continue
        if arch and any(f in (arch.family or "") for f in FAMILIES) and "jetson" not in g.name.lower():
            out.setdefault(g.arch, g.name)
    return sorted(out.items())


def _ptx_only_predating(c, matrix, arch):
    row = matrix.nv_arch(arch)
    b = c.build
    if not (b.cuda and row and row.first_cuda and vkey(b.cuda) < vkey(row.first_cuda)):
        return False
    cap = row.compute_capability.split(".")
    return not any(sm.split("_")[1].rstrip("a")[:-1] == cap[0] for sm in b.sm)  # no same-major cubin


def test_the_class_covers_every_family(matrix):
    archs = {a for a, _ in _gpus(matrix)}
    assert {"sm_89", "sm_90", "sm_100", "sm_120"} <= archs, archs


@pytest.mark.parametrize("os_", ["linux", "windows"])
def test_no_ptx_only_build_from_a_predating_toolkit_is_ever_accepted(matrix, os_):
    checked = 0
    for arch, name in _gpus(matrix, os_):
        for driver in DRIVERS[os_]:
            res = plan_for(matrix, gpus=[name], driver=driver, os=os_)
            for c in res.accepted:
                assert not _ptx_only_predating(c, matrix, arch), (name, os_, driver, c.build.variant, c.release.version)
                checked += 1
            if res.chosen is not None:
                row = matrix.nv_arch(arch)
                major, minor = row.compute_capability.split(".")[:2]
                older_same_major = [a for a in matrix.archs.values() if a.compute_capability.split(".")[0] == major
                                    and int(a.compute_capability.split(".")[1]) < int(minor)]
                if not older_same_major:  # no same-major cubin can run it: only a toolkit that knows it
                    assert vkey(res.chosen.build.cuda) >= vkey(row.first_cuda), (name, os_, driver)
    assert checked > 100


@pytest.mark.parametrize("os_, gpu, driver", [("windows", "RTX 5090", "572.16"), ("windows", "RTX 5080", "576.02"),
                                              ("linux", "RTX 5090", "570.124.06"), ("windows", "H100", "537.13")])
def test_the_reported_machines_get_a_build_made_for_their_gpu(matrix, os_, gpu, driver):
    res = plan_for(matrix, gpus=[gpu], driver=driver, os=os_)
    c = res.chosen
    assert c is not None
    if "RTX 50" in gpu:  # pytorch/pytorch#153944: "one needs to use 12.8"
        assert vkey(c.build.cuda) >= vkey("12.8") and "sm_120" in c.build.sm, c.build.variant
        why = [r.message for x in res.rejected if x.build.variant == "cu118" for r in x.reasons if r.code == "gpu-arch"]
        assert why and all("CUDA ≥ 12.8" in w for w in why), why[:2]
        if os_ == "windows":  # the Windows cu118 rows carry compute_37 PTX: rejected for the libraries
            assert all("cuDNN/cuBLAS" in w for w in why if "PTX" in w) and any("PTX" in w for w in why), why[:2]
    else:
        assert vkey(c.build.cuda) >= vkey("11.8")


def test_explain_names_a_first_release_that_really_carries_the_arch():
    r = run_cli(["explain", "--no-probe", "--os", "windows", "--driver", "572.16",
                 "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the "
                 "current PyTorch installation."])
    assert "cu118" not in r.out and "1.8.0" not in r.out, r.out
    # torch 2.7.0 is the first release with sm_120 cubins (its cu128 build; pytorch/pytorch#149845)
    assert "The first release with code for sm_120 is torch 2.7.0+cu128" in r.out, r.out
