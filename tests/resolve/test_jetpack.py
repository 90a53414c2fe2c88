"""Jetson: the JetPack generation follows the L4T release / Ubuntu (#10), stated as an assumption when
not given; companions pinned only where the channel publishes them.

Public report: pinokiocomputer/pinokio#1027 — Jetson AGX Orin on JetPack 5.1.2 (L4T R35.4.1): `pip install
torch` gave a CPU wheel, NVIDIA's JetPack 5 wheel URL was the way; a JetPack 6 (Jetson AI Lab) wheel does
not run there. Data: matrices/platforms.toml [[jetpack]] (dusty-nv/jetson-containers l4t_version.py).
"""

from __future__ import annotations

from dataclasses import replace

from envcheck.resolve import Request, resolve
from envcheck.resolve.plan import make_plan
from tests.conftest import plan_for


def test_ubuntu_20_04_jetson_gets_a_jetpack_5_build_without_guessed_companions(matrix):
    res = plan_for(matrix, gpus=["jetson orin"], distro="ubuntu20.04")
    c = res.chosen
    gen = matrix.jetpack_of_channel(c.build.channel)
    assert c.build.tegra and gen.major == "5"
    jp6 = [x for x in res.candidates if x.build.tegra and matrix.jetpack_of_channel(x.build.channel).major == "6"]
    assert jp6 and all(any("JetPack 6" in r.message and r.code == "tegra" for r in x.reasons) for x in jp6)
    plan = make_plan(res, matrix)
    assert list(plan.pins) == ["torch"]  # NVIDIA's JetPack 5 folders carry torch only


def test_jetpack_4_boards_get_nvidias_last_jetpack_4_wheel_and_only_on_its_python(matrix):
    """cavedweller509/LMDeploy-Jetson#7 (cases.json P27): a Jetson Nano (JetPack 4.6, Python 3.6) got only
    "build from source"; NVIDIA's JetPack 4.6.1 folder serves it torch 1.11.0a0 (cp36). The same wheel serves
    the TX2 and a Xavier on JetPack 4; another Python, or an Orin (never JetPack 4), gets no Jetson build."""
    for gpu, arch in (("Jetson Nano", "sm_53"), ("Jetson TX2", "sm_62"), ("Jetson Xavier NX", "sm_72")):
        res = plan_for(matrix, gpus=[gpu], distro="ubuntu18.04")
        c = res.chosen
        assert c is not None and c.build.tegra and c.build.channel == "nvidia-jp/v461", (gpu, c)
        assert matrix.jetpack_of_channel(c.build.channel).major == "4" and arch in c.build.sm
        assert c.python == "3.6" and make_plan(res, matrix).pins["torch"] == "1.11.0a0+17540c5+nv22.01"
    nano38 = plan_for(matrix, gpus=["Jetson Nano"], distro="ubuntu18.04", python="3.8")
    assert nano38.chosen is None
    jp4 = next(x for x in nano38.candidates if x.build.channel == "nvidia-jp/v461")
    assert any(r.code == "python" for r in jp4.reasons), jp4.reasons
    orin = plan_for(matrix, gpus=["Jetson AGX Orin"], distro="ubuntu18.04")
    assert orin.chosen is None or orin.chosen.build.channel != "nvidia-jp/v461"


def test_jetpack_from_probe_beats_the_distro(matrix):
    base = plan_for(matrix, gpus=["jetson orin"]).machine
    res = resolve(replace(base, jetpack="6.2"), Request(), matrix)
    assert matrix.jetpack_of_channel(res.chosen.build.channel).major == "6"
    assert not any(a.startswith("JetPack not given") for a in res.assumptions)


def test_unknown_jetpack_is_an_assumption(matrix):
    res = plan_for(matrix, gpus=["jetson orin"])
    gen = matrix.jetpack_of_channel(res.chosen.build.channel)
    assert any(a.startswith(f"JetPack not given: planned for JetPack {gen.major}") for a in res.assumptions)


def _recipe(matrix, **machine):
    from envcheck.resolve.recipe import build_recipe

    res = plan_for(matrix, **machine)
    return res, build_recipe(make_plan(res, matrix), matrix)


def test_every_jetson_plan_names_jetpack_not_a_desktop_driver(matrix):
    """The driver of a Jetson comes with its JetPack (L4T BSP): no recipe for any Jetson on record tells
    the user to fetch an NVIDIA driver from nvidia.com/drivers or to check it with nvidia-smi, which
    JetPack 5/6 do not ship (newcomer M1: 'NVIDIA Linux driver >= (the newest)' for an AGX Orin)."""
    jetsons = [g.name for g in matrix.gpus if g.vendor == "nvidia" and g.segment == "embedded"]
    assert len(jetsons) >= 6, jetsons
    planned = 0
    for name in jetsons:
        for distro in ("ubuntu20.04", "ubuntu22.04", None):
            try:
                res, steps = _recipe(matrix, gpus=[name], **({"distro": distro} if distro else {}))
            except Exception:  # noqa: BLE001 - a Jetson no build serves (Nano, TX2) has no recipe
                continue
            if res.chosen is None or res.chosen.build.backend != "cuda":
                continue
            planned += 1
            keys = [s.key for s in steps]
            assert "jetpack" in keys and "nvidia-driver" not in keys, (name, distro, keys)
            host = next(s for s in steps if s.key == "jetpack")
            assert "nvidia-smi" not in host.check and "(the newest)" not in host.title, (name, host)
            gen = (matrix.jetpack_of_channel(res.chosen.build.channel)
                   or matrix.jetpack_of_machine(None, distro))
            if gen is not None:
                assert f"JetPack {gen.major} " in host.title and f"^# R{gen.l4t} " in host.check
    assert planned >= 6


def test_a_desktop_gpu_plan_keeps_the_driver_step(matrix):
    _, steps = _recipe(matrix, gpus=["RTX 4090"])
    keys = [s.key for s in steps]
    assert "nvidia-driver" in keys and "jetpack" not in keys


def test_a_jetson_driver_is_not_measured_on_the_desktop_scale(matrix):
    """Jetson AGX Thor runs JetPack 7, whose BSP driver reports 580.00 (vllm-project/vllm#34470: torch
    2.10.0+cu130 works there); the desktop CUDA 13 floors (580.65.06 / 580.95.05) must not reject it,
    and the plan names no desktop driver (breaker3 F2: 'no PyTorch build fits' with --driver 580.00)."""
    for name in ("Jetson AGX Thor", "Jetson T4000"):
        res = plan_for(matrix, gpus=[name], driver="580.00")
        assert res.chosen is not None and res.chosen.build.cuda.startswith("13."), (name, res.chosen)
        assert not any(r.code == "driver" for r in res.chosen.reasons), res.chosen.reasons
        _, steps = _recipe(matrix, gpus=[name])
        host = next(s for s in steps if s.key == "jetpack")
        assert host.title.startswith("JetPack 7 (Jetson Linux L4T R38"), host.title


def test_verify_does_not_fail_a_working_thor_on_its_driver():
    from tests.conftest import ROOT, run_cli

    facts = ROOT / "tests" / "fixtures" / "verify" / "cases" / "thor-jetpack7.json"
    r = run_cli(["verify", "--facts", str(facts), "--no-config", "--json"])
    checks = {c["name"]: c for c in r.json()["checks"]}
    assert checks["driver"]["status"] == "skip" and "JetPack" in checks["driver"]["detail"], checks["driver"]
    assert checks["arch_compat"]["status"] == "pass" and r.code == 0, (r.code, r.out[-2000:])
