"""PyTorch's own warnings for a GPU older than the build's arch list (torch/cuda/__init__.py
``_check_capability``): "PyTorch no longer supports this GPU because it is too old" and, from 2.8,
"Support for Maxwell and Pascal architectures is removed for CUDA 12.8+ builds" (pytorch#157517,
printed verbatim in pytorch/pytorch#158700). What every Pascal/Maxwell user sees after installing a
cu128+ wheel; explain recognised neither (breaker3 F7). The fix is plan's build for the GPU (one answer).
"""

from __future__ import annotations

import pytest

TOO_OLD = ("UserWarning: Found GPU0 NVIDIA GeForce GTX 1080 which is of cuda capability 6.1. PyTorch no longer "
           "supports this GPU because it is too old. The minimum cuda capability supported by this library is 7.0.")
REMOVED = ("UserWarning: \n                        Support for Maxwell and Pascal architectures is removed for CUDA "
           "12.8+ builds.\n                        Please see https://github.com/pytorch/pytorch/issues/157517\n"
           "                        Please install CUDA 12.6 builds if you require Maxwell or Pascal support.")


def _plan_line(cli, *flags):
    chosen = cli(["plan", "--json", *flags]).json()["chosen"]
    return (f"-m pip install --force-reinstall --index-url {chosen['index_url']} "
            + " ".join(f"{k}=={v}" for k, v in chosen["pins"].items()))


@pytest.mark.parametrize("text,family,flags", [
    (TOO_OLD, "gpu-too-old", []),  # the GPU and its capability come from the message itself
    (REMOVED, "maxwell-pascal-removed", ["--gpu", "GTX 1080"]),
    (TOO_OLD + "\n" + REMOVED, "gpu-too-old", ["--gpu", "GTX 1080"]),
])
def test_old_gpu_warning_explained_with_plans_build(cli, text, family, flags):
    r = cli(["explain", "--no-probe", "--json", *flags, text])
    assert r.code == 0, r.err
    findings = r.json()["findings"]
    assert findings[0]["rule"] == family, [f["rule"] for f in findings]
    line = _plan_line(cli, "--gpu", "GTX 1080")
    assert "cu126" in line  # the CUDA 12.6 build PyTorch itself points to for Pascal
    assert line in findings[0]["fix"], findings[0]["fix"]
    if TOO_OLD in text and REMOVED in text:  # both warnings: both families found, the same build in both fixes
        assert {f["rule"] for f in findings} >= {"gpu-too-old", "maxwell-pascal-removed"}
        assert all(line in f["fix"] for f in findings if f["rule"] in ("gpu-too-old", "maxwell-pascal-removed"))


def test_capability_in_the_message_names_the_gpu_arch(cli):
    r = cli(["explain", "--no-probe", "--json", TOO_OLD])
    f = r.json()["findings"][0]
    assert "6.1" in f["cause"] and "7.0" in f["cause"] and "sm_61" in f["fix"]
