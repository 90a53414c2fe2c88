"""`--gpu` forms that were accepted too loosely (breaker4 F11), each as a class.

- an architecture alone is a GPU only when the data names it (cuda.toml [[arch]], the GPU rows,
  gpu-chips.toml's LLVM targets, the builds' gfx lists): `gfx9999` and `sm_99` planned for
  "AMD GPU (gfx9999)" / "NVIDIA GPU (sm_99)" and ended in "no build serves" (exit 1);
- an LLVM target ID names each feature once: `gfx1030:xnack+:xnack-` was taken silently;
- a name whose parenthesised target contradicts it: "AMD Instinct MI300X (gfx1100)" planned for gfx942;
- "AMD Radeon RX 7900 Series" was unknown (every RX 7900 is gfx1100: a data row now).
"""

from __future__ import annotations

import pytest

from envcheck.errors import UnknownGpuError, UsageError
from envcheck.machine.describe import apply_flags


@pytest.mark.parametrize("gpu, near", [("gfx9999", "gfx950"), ("sm_99", "sm_90"), ("gfx1999", "gfx950"),
                                       ("sm_130", "sm_120")])
def test_an_architecture_the_data_does_not_name_is_an_unknown_gpu(cli, gpu, near):
    r = cli(["plan", "--gpu", gpu])
    assert r.code == 2, (r.code, r.out)
    assert r.err.startswith(f"envcheck: error: unknown GPU '{gpu}'") and near in r.err, r.err


def test_every_architecture_the_data_names_is_taken_alone(matrix):
    for vendor in ("nvidia", "amd"):
        archs = matrix.known_archs(vendor)
        assert len(archs) > 20
        for arch in archs:
            (g,) = apply_flags(matrix, gpus=[arch]).gpus
            assert (g.vendor, g.arch) == (vendor, arch)


@pytest.mark.parametrize("gpu", ["gfx1030:xnack+:xnack-", "gfx942:sramecc+:sramecc+:sramecc+",
                                 "gfx90a:xnack-:sramecc+:xnack-", "amdgcn-amd-amdhsa--gfx90a:xnack+:xnack+"])
def test_a_target_feature_given_twice_is_bad_input(cli, gpu):
    r = cli(["plan", "--gpu", gpu])
    assert r.code == 2 and "is given" in r.err and "once" in r.err, r.err
    assert r.err.count("\n") == 1


@pytest.mark.parametrize("gpu", ["gfx90a:sramecc+:xnack-", "gfx942:xnack-", "amdgcn-amd-amdhsa--gfx1100"])
def test_each_feature_once_is_taken(matrix, gpu):
    assert apply_flags(matrix, gpus=[gpu]).gpus[0].vendor == "amd"


@pytest.mark.parametrize("gpu, name, arch, target", [
    ("AMD Instinct MI300X (gfx1100)", "AMD Instinct MI300X", "gfx942", "gfx1100"),
    ("NVIDIA GeForce RTX 4090 (gfx942)", "GeForce RTX 4090", "sm_89", "gfx942"),
    ("AMD Radeon RX 7900 XTX (gfx90a:sramecc+:xnack-)", "AMD Radeon RX 7900 XTX", "gfx1100", "gfx90a"),
])
def test_a_name_whose_target_in_parentheses_contradicts_it_is_bad_input(matrix, gpu, name, arch, target):
    with pytest.raises(UsageError) as err:
        apply_flags(matrix, gpus=[gpu])
    assert not isinstance(err.value, UnknownGpuError)
    assert f"the name is the {name} ({arch}), but the target in parentheses is {target}" in str(err.value)


@pytest.mark.parametrize("gpu, arch", [("AMD Instinct MI300X (gfx942:sramecc+:xnack-)", "gfx942"),
                                       ("AMD Radeon Graphics (gfx906:sramecc+:xnack-)", "gfx906"),
                                       ("AMD Radeon RX 7900 Series", "gfx1100"), ("7900 series", "gfx1100")])
def test_names_that_agree_or_name_a_series_with_one_target_are_taken(matrix, gpu, arch):
    assert apply_flags(matrix, gpus=[gpu]).gpus[0].arch == arch


@pytest.mark.parametrize("gpu, arch", [
    ("AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", "gfx1151"),          # Comfy-Org/ComfyUI#8211's title (report P23)
    ("AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", "gfx1103"),     # lscpu's model name of a Phoenix APU
])
def test_an_apu_as_lscpu_prints_it_is_its_gpu(matrix, gpu, arch):
    """'<CPU> w/ <GPU>' was an unknown GPU: the name after 'w/' is the APU's graphics."""
    (g,) = apply_flags(matrix, gpus=[gpu]).gpus
    assert (g.vendor, g.arch, g.integrated) == ("amd", arch, True)
