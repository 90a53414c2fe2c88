"""The plan use case (envcheck.app.plan) without a command line: the same answer as `envcheck plan`,
and data rows' flag lists read without argparse."""

from __future__ import annotations

import json

import pytest

from envcheck.app.plan import PlanRequest, Target, plan, plan_json, request_from_flags
from envcheck.errors import UsageError
from tests.conftest import run_cli


def test_same_answer_as_the_command_line():
    args = ["--gpu", "RTX 4090", "--driver", "550.54", "--python", "3.12"]
    cli = run_cli(["plan", *args, "--json"])
    result = plan(PlanRequest(target=Target(gpus=[["RTX", "4090"]], driver="550.54", python="3.12")))
    assert result.exit_code == cli.code == 0
    printed = json.loads(cli.out)
    assert printed.pop("schema") == "envcheck.plan.v1"  # the command line stamps every --json document
    assert plan_json(result.resolution, result.plan, []) == printed


def test_data_row_flags_without_argparse():
    req = request_from_flags(["--gpu", "RTX 4090", "--backend", "cu130", "--torch", "2.14.1", "--python=3.11",
                              "--wsl", "--os", "Linux", "--mirror", "https://m.example/whl"], "ci_target x")
    assert req.target.gpus == [["RTX 4090"]] and req.target.wsl and req.target.os == "linux"
    assert (req.backend, req.torch, req.target.python, list(req.mirrors)) == ("cu130", "2.14.1", "3.11",
                                                                              ["https://m.example/whl"])
    result = plan(req)
    assert result.plan is not None and result.plan.candidate.build.variant == "cu130"


@pytest.mark.parametrize("flags, message", [
    (["--output", "x"], "'--output' is not an `envcheck plan` flag"),
    (["--torch"], "--torch needs a value"),
    (["--torch", "--wsl"], "--torch needs a value"),
    (["--python", "3.11", "--python", "3.12"], "--python given twice"),
])
def test_bad_data_row_flags_name_the_row(flags, message):
    with pytest.raises(UsageError, match="ci_target y: " + message.replace("`", ".").replace("'", ".")):
        request_from_flags(flags, "ci_target y")


@pytest.mark.parametrize("values, expected", [
    # breaker5 F0: lscpu's APU name after a discrete GPU; joined, the `w/` split kept only the 780M
    (["RTX 4090", "AMD Ryzen 9 7940HS w/ Radeon 780M Graphics"], ["RTX 4090", "AMD Ryzen 9 7940HS w/ Radeon 780M Graphics"]),
    (["H100", "A100", "AMD Ryzen 9 7940HS w/ Radeon 780M Graphics"],
     ["H100", "A100", "AMD Ryzen 9 7940HS w/ Radeon 780M Graphics"]),
    # joined, the `(gfx1100)` suffix read the whole text as one AMD GPU
    (["RTX 4090", "RX 7900 XTX (gfx1100)"], ["RTX 4090", "RX 7900 XTX (gfx1100)"]),
    (["RTX", "4090"], ["RTX 4090"]),  # unquoted words of one name are still one GPU
    (["a100", "h100"], ["a100", "h100"]),
])
def test_every_gpu_of_one_flag_is_kept(values, expected):
    from envcheck.app.plan import gpu_names
    from envcheck.matrix import load_matrix

    assert gpu_names(load_matrix(), [values]) == expected


APU = "AMD Ryzen 9 7940HS w/ Radeon 780M Graphics"  # lscpu's model name on a Ryzen 7040 laptop (breaker5 F0)


@pytest.mark.parametrize("words, expected", [
    # several names as unquoted words (breaker5 F0, left by hfix7): joined, the APU's `w/` split kept only the 780M
    (f"H100 {APU}", ["H100", APU]),
    (f"RTX 4090 {APU}", ["RTX 4090", APU]),
    (f"{APU} H100", [APU, "H100"]),
    ("RTX 4090 RX 7900 XTX (gfx1100)", ["RTX 4090", "RX 7900 XTX (gfx1100)"]),  # a (gfxN) suffix read the whole
    ("RTX 4090 AMD Radeon Graphics (gfx1100)", ["RTX 4090", "AMD Radeon Graphics (gfx1100)"]),
    ("H100 80GB A100", ["H100 80GB", "A100"]),  # a memory size dropped what followed it
    ("RTX 4090 H100", ["RTX 4090", "H100"]),  # was "unknown GPU 'RTX'"
    ("2x A100 H100", ["2x A100", "H100"]),
    ("GTX 780 H100", ["GTX 780", "H100"]),  # a name only the PCI ID database knows
    # one name as tools print it stays one GPU
    (APU, [APU]),
    ("RTX 4090", ["RTX 4090"]),
    ("GPU 0: NVIDIA H100 80GB HBM3", ["GPU 0: NVIDIA H100 80GB HBM3"]),  # nvidia-smi -L
    ("AMD Instinct MI300X (gfx942:sramecc+:xnack-)", ["AMD Instinct MI300X (gfx942:sramecc+:xnack-)"]),  # collect_env
    ("AMD Instinct MI250X/MI250 (gfx90a:sramecc+:xnack-)", ["AMD Instinct MI250X/MI250 (gfx90a:sramecc+:xnack-)"]),
    ("NVIDIA GeForce RTX 4090 Laptop GPU", ["NVIDIA GeForce RTX 4090 Laptop GPU"]),
    ("Intel(R) Arc(TM) 140V GPU (16GB)", ["Intel(R) Arc(TM) 140V GPU (16GB)"]),
])
def test_several_gpus_as_unquoted_words_are_each_kept(words, expected):
    from envcheck.app.plan import gpu_names
    from envcheck.matrix import load_matrix

    assert gpu_names(load_matrix(), [words.split()]) == expected


@pytest.mark.parametrize("words, unknown", [("RTX 4090 Foo", "'Foo'"), ("A100 Foo", "'Foo'"), ("Foo Bar", "'Foo Bar'")])
def test_unquoted_words_that_name_no_gpu_name_the_unknown_part(words, unknown):
    from envcheck.app.plan import gpu_names
    from envcheck.errors import UnknownGpuError
    from envcheck.matrix import load_matrix

    with pytest.raises(UnknownGpuError, match=f"unknown GPU {unknown}"):
        gpu_names(load_matrix(), [words.split()])


def test_an_unquoted_gpu_before_an_apu_is_planned_for():
    cli = run_cli(["plan", "--gpu", *f"H100 {APU}".split(), "--json"])
    assert cli.code == 0, cli.err
    gpus = [g["name"] for g in json.loads(cli.out)["machine"]["gpus"]]
    assert len(gpus) == 2 and any("H100" in g for g in gpus) and any("780M" in g for g in gpus), gpus


def test_a_quoted_gpu_is_never_dropped_on_the_command_line():
    cli = run_cli(["plan", "--gpu", "RTX 4090", "AMD Ryzen 9 7940HS w/ Radeon 780M Graphics", "--json"])
    assert cli.code == 0, cli.err
    gpus = [g["name"] for g in json.loads(cli.out)["machine"]["gpus"]]
    assert len(gpus) == 2 and any("4090" in g for g in gpus) and any("780M" in g for g in gpus), gpus
