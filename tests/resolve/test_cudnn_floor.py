"""A CUDA wheel whose bundled cuDNN has no code for the GPU (matrices/cuda.toml [[cudnn_floor]]).

NVIDIA's cuDNN 9.0.0 support matrix lists compute capability 5.0–9.0 for CUDA 11.8 and 12.x: Kepler (3.5,
3.7) is gone, while cuDNN 8.x for CUDA 11.x supported "SM 3.5 and later". PyTorch's cu118 wheels keep sm_37
in their own kernel list through 2.7.1 but bundle cuDNN 9.1.0.70 from 2.4 (8.7.0.84 up to 2.3.1).
Public reports: dailenson/SDT#25 (Tesla K80: CUDNN_STATUS_ARCH_MISMATCH, fixed by a CUDA 11.8 / cuDNN 8
build), nelson-liu/pytorch-manylinux-binaries#13 (K80, Python 3.12, 2.7.1+cu118 fails).
"""

from __future__ import annotations

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
