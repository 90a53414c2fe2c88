"""Machine files and matrix files spell names the same way (one set of patterns,
envcheck/matrix/patterns.py): a machine file accepts ``sm_90a`` as the matrix does (issue #9)."""

from __future__ import annotations

import pytest

from envcheck.errors import DataFileError
from envcheck.machine.io import machine_from_dict
from envcheck.matrix import load as matrix_load
from envcheck.matrix import patterns


def machine(arch, vendor="nvidia"):
    return {"os": "linux", "arch": "x86_64",
            "gpus": [{"vendor": vendor, "name": "a GPU", "arch": arch}]}


def test_one_set_of_patterns():
    for name in ("SM_RE", "PTX_RE", "GFX_RE", "PY_RE"):
        assert getattr(matrix_load, name) is getattr(patterns, name)


@pytest.mark.parametrize("typed, gpu_arch", [("sm_90a", "sm_90"), ("sm_100f", "sm_100"), ("sm_89", "sm_89")])
def test_arch_specific_targets_name_the_gpu_they_belong_to(typed, gpu_arch):
    assert patterns.SM_RE.fullmatch(typed)  # the matrix accepts it in a kernel list
    m = machine_from_dict(machine(typed))
    assert m.gpus[0].arch == gpu_arch


@pytest.mark.parametrize("arch, vendor", [("sm_9", "nvidia"), ("ampere", "nvidia"), ("gfx11-generic", "amd"),
                                          ("gfx1100-generic", "amd"), ("sm_90", "amd")])
def test_what_no_gpu_is_called(arch, vendor):
    with pytest.raises(DataFileError, match=r"gpus\[0\]\.arch"):
        machine_from_dict(machine(arch, vendor))


def test_plan_for_an_sm_90a_machine_file(cli, tmp_path):
    f = tmp_path / "h100.toml"
    f.write_text('schema = 1\n[machine]\nos = "linux"\narch = "x86_64"\nnvidia_driver = "570.124.06"\n'
                 '[[machine.gpus]]\nvendor = "nvidia"\nname = "NVIDIA H100 80GB HBM3"\narch = "sm_90a"\n')
    r = cli(["plan", "--machine", str(f), "--json"])
    assert r.code == 0, r.err
    assert r.json()["machine"]["gpus"][0]["arch"] == "sm_90"
