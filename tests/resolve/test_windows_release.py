"""Native Windows and WSL plans for one NVIDIA GPU pick the same torch release (newcomer4 #7).

PyTorch ships its Windows CUDA wheels for the same releases and CUDA variants as the Linux ones,
with the same kernel lists (Windows cu126 adds sm_61). A Windows RTX 5090 used to get 2.11.0 while
WSL got 2.14.1: the Windows rows of 2.12–2.14 were ``unverified`` ("assumed for this release"),
so rule 1 of the ranking (a complete, verified set first) passed them over — 146 of 148 NVIDIA GPUs
were planned three releases older on Windows. The rows now cite PyTorch's own Windows arch table at
revisions after the 2.12 branch cut (matrices/torch-builds.toml); the resolver alone decides.
"""

from __future__ import annotations

import pytest

from tests.conftest import plan_for


def _release(res):
    best = next((c for c in res.candidates if c.accepted), None)
    return (best.release.version, best.build.variant) if best else (res.status, "")


def test_windows_and_wsl_plans_pick_the_same_release_for_every_nvidia_gpu(matrix):
    gpus = [g for g in matrix.gpus if g.vendor == "nvidia" and not g.host_os and not g.host_arch]
    assert len(gpus) > 100
    differ = []
    for g in gpus:
        native = _release(plan_for(matrix, gpus=[g.name], os="windows"))
        wsl = _release(plan_for(matrix, gpus=[g.name], wsl=True))
        if native[0] != wsl[0]:
            differ.append(f"{g.name}: windows {native}, wsl {wsl}")
    assert not differ, f"{len(differ)} of {len(gpus)} differ, e.g. " + "; ".join(differ[:5])


@pytest.mark.parametrize("gpu", ["RTX 5090", "GTX 1080 Ti"])
def test_windows_plan_is_the_newest_release_with_a_complete_set(cli, gpu):
    """What the newcomer ran: the headline names 2.14.1, the 'or' line only the unverified 2.15.0."""
    res = cli(["plan", "--gpu", gpu, "--os", "windows"])
    assert res.code == 0, res.err
    assert "torch 2.14.1+" in res.out
    or_line = res.out.split("    or ", 1)[1].split("\n\n", 1)[0] if "    or " in res.out else ""
    assert not any(v in or_line for v in ("2.12", "2.13", "2.14")), or_line
