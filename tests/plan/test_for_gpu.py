"""Which GPU a multi-vendor plan is for (#10 follow-up): ``--for-gpu N|NAME``.

One wheel drives one vendor's GPUs. Without the flag the rule is documented and stays: integrated
GPUs never win over a discrete one, and of several vendors the first GPU's (``--gpu`` or probe
order). unslothai/unsloth#9829 shows why order alone must not be the only handle: on a mixed host
"enumeration order alone let a Ryzen APU choose a wheel family" with no kernels for the card.
Machines: issue #10's RTX 3060 + Radeon 780M, and an RTX 4090 + RX 7900 XTX workstation.
"""

from __future__ import annotations

import pytest

from envcheck.errors import UsageError
from tests.conftest import plan_for


def test_without_the_flag_the_first_discrete_vendor_wins(matrix):
    res = plan_for(matrix, gpus=["RX 7900 XTX", "RTX 4090"], os="linux")
    assert res.chosen.build.backend == "rocm"
    assert [g.name for g in res.machine.unserved_gpus] == ["GeForce RTX 4090"]
    igpu_first = plan_for(matrix, gpus=["Radeon 780M", "RTX 3060"], os="linux")
    assert igpu_first.chosen.build.backend == "cuda"  # the iGPU never wins by order


@pytest.mark.parametrize("choice", ["2", "RTX 4090", "rtx4090", "nvidia", "sm_89"])
def test_for_gpu_picks_the_vendor_by_position_name_vendor_or_arch(matrix, choice):
    res = plan_for(matrix, gpus=["RX 7900 XTX", "RTX 4090"], os="linux", for_gpu=choice)
    assert res.chosen.build.backend == "cuda"
    assert [g.name for g in res.machine.served_gpus] == ["GeForce RTX 4090"]
    unused = [a for a in res.assumptions if "stays unused" in a]
    assert len(unused) == 1 and "Radeon RX 7900 XTX" in unused[0] and f"--for-gpu {choice}" in unused[0]


def test_for_gpu_can_choose_an_integrated_gpu_beside_a_discrete_one(matrix):
    res = plan_for(matrix, gpus=["RTX 3060", "Radeon 780M"], os="linux", for_gpu="Radeon 780M")
    assert [g.arch for g in res.machine.served_gpus] == ["gfx1103"]
    assert [g.name for g in res.machine.unserved_gpus] == ["GeForce RTX 3060"]
    rocm = [x for x in res.candidates if x.build.backend == "rocm" and not x.build.wsl]
    assert rocm and all(x.build.backend != "cuda" for x in [res.chosen] if x)


def test_bad_choices_are_usage_errors(matrix, cli):
    with pytest.raises(UsageError):
        plan_for(matrix, gpus=["RTX 3060"], for_gpu="3")
    with pytest.raises(UsageError):
        plan_for(matrix, gpus=["RTX 3060"], for_gpu="H100")
    r = cli(["plan", "--gpu", "RTX 3060", "--for-gpu", "0"])
    assert r.code == 2 and "--for-gpu 0" in r.err and "Traceback" not in r.err
    r = cli(["plan", "--gpu", "RTX 3060", "Radeon 780M", "--for-gpu", "2", "--json"])
    assert r.code in (0, 1) and r.json()["machine"]["plan_gpu"] == 1
