"""A native ROCm plan says which host amdgpu kernel drivers its build's ROCm runs on, from data
(newcomer4 #6).

An MI250 node planned torch 2.14.1+rocm7.14 with the host's ROCm kernel driver silently assumed new
enough, where a CUDA plan always says 'NVIDIA driver not given … needs ≥ X'. A first fix wrote, in
code, 'needs the amdgpu kernel driver of ROCm X or newer (AMD's ROCm compatibility matrix)' — which
AMD's matrix does not say: AMD tests each kernel-mode driver with user space ±2 releases
(matrices/rocm-libs.toml [[kernel_driver]], from AMD's user and kernel-space support matrix and the
amdgpu docs). Now the line names the kernel drivers on record for the build's ROCm, or says that
no row lists it.
"""

from __future__ import annotations

import pytest

from tests.conftest import plan_for


def amd_line(res):
    lines = [a for a in res.assumptions if "amdgpu" in a or "AMD kernel" in a]
    assert len(lines) == 1, res.assumptions
    return lines[0]


@pytest.mark.parametrize("backend, drivers", [
    ("rocm6.2", "those of ROCm 6.0, ROCm 6.1, ROCm 6.2, ROCm 6.3"),   # KMD 6.0–6.3 rows list 6.2 user space
    ("rocm6.4", "those of ROCm 7.2 (amdgpu 30.30.x)"),                  # only amdgpu 30.30 lists 6.4 on record
    ("rocm5.7", "those of ROCm 5.5, ROCm 5.6, ROCm 5.7, ROCm 6.0, ROCm 6.1"),
])
def test_the_kernel_drivers_amd_tests_the_builds_rocm_on(matrix, backend, drivers):
    from envcheck.resolve import Request

    res = plan_for(matrix, Request(backend=backend), gpus=["MI250"], os="linux")
    line = amd_line(res)
    assert line.startswith("AMD kernel driver not given: ") and f"(on record: {drivers})" in line, line
    assert "or newer" not in line


def test_a_rocm_no_row_lists_says_so_instead_of_inventing_a_floor(matrix):
    """The newcomer's MI250 node: ROCm 7.14 is past every [[kernel_driver]] row on record."""
    line = amd_line(plan_for(matrix, gpus=["4x MI250"], distro="rhel8"))
    assert "+rocm7.14" in line and "does not list" in line and "ROCm 7.14" in line, line
    assert "or newer" not in line


def test_every_native_rocm_plan_carries_the_line_and_every_row_is_amds(matrix):
    from envcheck.resolve import Request

    variants = sorted({b.variant for b in matrix.builds if b.rocm and "linux-x86_64" in b.platforms
                       and b.channel == "pytorch" and b.variant.startswith("rocm")})
    assert len(variants) > 10
    for v in variants:
        res = plan_for(matrix, Request(backend=v), gpus=["MI250"], os="linux")
        if any(c.accepted for c in res.candidates):
            assert "on record: those of" in amd_line(res) or "does not list" in amd_line(res), v
    for k in matrix.kernel_drivers:
        assert k.confidence == "official" and k.rocm in k.user_space, k
        assert all(("rocm.docs.amd.com" in s) or s.startswith("ROCm/amdgpu-docs") for s in k.source), k
