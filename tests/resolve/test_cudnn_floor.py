"""A CUDA wheel whose bundled cuDNN has no code for the GPU (matrices/cuda.toml [[cudnn_floor]]).

NVIDIA's cuDNN 9.0.0 support matrix lists compute capability 5.0–9.0 for CUDA 11.8 and 12.x: Kepler (3.5,
3.7) is gone, while cuDNN 8.x for CUDA 11.x supported "SM 3.5 and later". PyTorch's cu118 wheels keep sm_37
in their own kernel list through 2.7.1 but bundle cuDNN 9.1.0.70 from 2.4 (8.7.0.84 up to 2.3.1).
Public reports: dailenson/SDT#25 (Tesla K80: CUDNN_STATUS_ARCH_MISMATCH, fixed by a CUDA 11.8 / cuDNN 8
build), nelson-liu/pytorch-manylinux-binaries#13 (K80, Python 3.12, 2.7.1+cu118 fails).
"""

from __future__ import annotations

import pytest

from tests.conftest import plan_for


def _accepted(res, version, variant):
    return [c for c in res.candidates if c.release.version == version and c.build.variant == variant
            and c.accepted]


def test_kepler_gets_the_last_cu118_wheel_with_cudnn_8(matrix):
    res = plan_for(matrix, gpus=["Tesla K80"], python="3.12")
    assert (res.chosen.release.version, res.chosen.build.variant) == ("2.3.1", "cu118")
    for version in ("2.4.0", "2.5.1", "2.7.1"):
        assert not _accepted(res, version, "cu118"), version
        rejected = [c for c in res.candidates if c.release.version == version and c.build.variant == "cu118"]
        assert rejected and all(any(r.code == "gpu-arch" and "cuDNN 9.1.0.70" in r.message
                                    and "CUDNN_STATUS_ARCH_MISMATCH" in r.message for r in c.reasons)
                                for c in rejected), version


def test_maxwell_keeps_cudnn_9_builds(matrix):
    """cuDNN 9 still supports 5.0: a GTX 970 (sm_52) is not touched by the floor."""
    res = plan_for(matrix, gpus=["GTX 970"])
    assert _accepted(res, "2.7.1", "cu118") and _accepted(res, "2.8.0", "cu126")
    assert not any("cuDNN" in r.message for c in res.candidates for r in c.reasons if c.build.variant == "cu126")


@pytest.mark.subprocess
def test_verify_fails_arch_compat_for_an_installed_cudnn_9_wheel_on_kepler(tmp_path):
    """Facts replayed as a Tesla K80 running torch 2.5.1+cu118 (recorded from the real CPU venv's collector,
    the device and build facts set as that CUDA torch reports them: its arch list names sm_37): arch_compat
    fails on the bundled cuDNN, and the fix is the plan's build (2.3.1+cu118, cuDNN 8)."""
    import copy
    import json

    from envcheck.matrix import load_matrix
    from tests.conftest import run_cli
    from tests.verify.conftest import given_or_new_torch_venv, venv_python

    py = venv_python(given_or_new_torch_venv(tmp_path / "venv"))
    doc = copy.deepcopy(run_cli(["verify", "--python", str(py), "--checks", "import_torch,arch_compat",
                                 "--json"]).json())
    f = doc["facts"]
    row = next(b for b in load_matrix().builds_for("2.5.1") if b.variant == "cu118" and "linux-x86_64" in b.platforms)
    f["runs"]["import_torch"]["data"]["version"] = "2.5.1+cu118"
    f["packages"]["torch"][0]["version"] = "2.5.1+cu118"
    f["runs"]["cuda_build"]["data"].update(
        cuda="11.8", arch_list=list(row.sm), is_available=True, device_count=1,
        devices=[{"index": 0, "name": "Tesla K80", "capability": [3, 7], "memory_mib": 11441}])
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    checks = {c["name"]: c for c in run_cli(["verify", "--facts", str(path), "--json"]).json()["checks"]}
    ac = checks["arch_compat"]
    assert ac["status"] == "fail", ac
    assert "cuDNN" in ac["detail"] and "9.1.0.70" in ac["detail"] and "sm_37" in ac["detail"], ac["detail"]
    assert "torch==2.3.1+cu118" in ac["fix"], ac["fix"]
