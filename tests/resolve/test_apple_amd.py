"""macOS x86_64 with an AMD GPU runs MPS on the last x86_64 macOS wheels (torch ≤ 2.2.2) (#10).

Sources: Apple's "Accelerated PyTorch training on Mac" (https://developer.apple.com/metal/pytorch/ —
Apple silicon or AMD GPUs); Lightning-AI/pytorch-lightning#17707 (Mac Pro 2020, 2× Radeon Pro W6900X,
Ventura 13.4: torch.backends.mps.is_available() True); pytorch/pytorch#100879 (MPS needs macOS 12.3+).
"""

from __future__ import annotations

from tests.conftest import plan_for


def test_intel_mac_with_an_amd_gpu_gets_an_mps_build(matrix):
    res = plan_for(matrix, os="macos", arch="x86_64", gpus=["RX 6900 XT"])
    c = res.chosen
    assert c is not None and c.build.mps and c.release.version == "2.2.2"
    assert not any(r.code == "backend" for r in c.warnings)


def test_mps_on_an_amd_mac_needs_macos_12_3(matrix):
    res = plan_for(matrix, os="macos", arch="x86_64", gpus=["RX 6900 XT"], macos="12.1")
    assert res.chosen is None
    assert any("12.3" in r.message for x in res.candidates for r in x.reasons if r.code == "macos")


def test_linux_amd_still_needs_rocm(matrix):
    res = plan_for(matrix, gpus=["RX 6900 XT"])
    assert res.chosen is None or res.chosen.build.backend == "rocm"
