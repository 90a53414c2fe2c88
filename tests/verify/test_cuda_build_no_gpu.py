"""A CUDA build on a machine without a GPU (a login node): torch 2.14.1+cu130 installed for real.

verify reads the build facts (arch list, cuDNN, NCCL) and skips the device checks, saying that no
NVIDIA driver is visible. Slow: the install pulls ~5.5 GB of wheels (`nox -s slow`).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(cuda_venv):
    from tests.conftest import run_cli

    return run_cli(["verify", "--python", str(cuda_venv), "--skip", "torch_compile", "--json"])


def test_build_facts_are_read(report, matrix):
    assert report.code == 0, report.out + report.err
    checks = {c["name"]: c for c in report.json()["checks"]}
    build = report.json()["facts"]["runs"]["cuda_build"]["data"]
    assert build["cuda"] == "13.0"
    row = next(b for b in matrix.builds_for("2.14.1") if b.variant == "cu130" and "linux-x86_64" in b.platforms)
    assert build["arch_list"] == list(row.sm) + list(row.ptx)
    assert build["cudnn"] // 10000 == int(row.cudnn.split(".")[0])
    assert build["nccl"] == row.nccl
    detail = checks["cuda_build"]["detail"]
    assert checks["cuda_build"]["status"] == "pass"
    assert "CUDA 13.0" in detail and f"NCCL {row.nccl}" in detail and "sm_120" in detail
    assert 'no NVIDIA driver is visible (torch: "Found no NVIDIA driver on your system")' in detail


def test_device_checks_skip_saying_why(report):
    checks = {c["name"]: c for c in report.json()["checks"]}
    assert checks["arch_compat"]["status"] == "skip"
    assert checks["arch_compat"]["detail"].startswith("no NVIDIA driver is visible")
    assert checks["driver"]["status"] == "skip"
    assert "no NVIDIA driver is visible" in checks["driver"]["detail"]
    assert checks["stream_sync"]["status"] == "skip"
    for name in ("allocation", "matmul", "cudnn_conv"):
        assert checks[name]["status"] == "pass"
        assert "CPU form only: no NVIDIA driver is visible" in checks[name]["detail"]
