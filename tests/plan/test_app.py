"""The plan use case (envcheck.app.plan) without a command line: the same answer as `envcheck plan`,
and data rows' flag lists read without argparse."""

from __future__ import annotations

import json
import re

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


# breaker6 F1/F6/F7: unquoted words are one GPU only when together they are one name; several only when
# they split completely into names; no word is ever dropped. Each of these once came out as ONE GPU: the
# joined text was accepted because something inside it (a codename, a PCI id, a `(gfxN)` suffix, a Ryzen
# CPU model) names a GPU, and the rest was dropped without a word.
@pytest.mark.parametrize("words, expected", [
    ("Navi 31 MI300X", ["Navi 31", "MI300X"]),  # was "AMD Navi 31 MI300X (gfx1100)": the MI300X gone
    ("GA100 H100", ["GA100", "H100"]),  # was "NVIDIA GA100 H100 (sm_80)"
    ("10de:2684 H100", ["10de:2684", "H100"]),  # was the RTX 4090 alone
    ("10de:2684 10de:20b0", ["10de:2684", "10de:20b0"]),
    # lscpu's model name of a Ryzen 7000/9000 desktop CPU, then a discrete GPU: the GPU was dropped
    ("AMD Ryzen 9 9950X 16-Core Processor RTX 4090", ["AMD Ryzen 9 9950X 16-Core Processor", "RTX 4090"]),
    ("AMD Ryzen 7 7700X 8-Core Processor RX 7900 XTX", ["AMD Ryzen 7 7700X 8-Core Processor", "RX 7900 XTX"]),
    ("AMD Ryzen 7 7700X 8-Core Processor A100", ["AMD Ryzen 7 7700X 8-Core Processor", "A100"]),
    ("H100 Navi 31", ["H100", "Navi 31"]), ("Navi 31 H100", ["Navi 31", "H100"]),  # the order never matters
    # one device with two product names (amdgpu.ids) is one GPU: it counted as two (F6)
    ("AMD Instinct MI250X / MI250", ["AMD Instinct MI250X / MI250"]),
    ("AMD Radeon RX 6700S / 6800S", ["AMD Radeon RX 6700S / 6800S"]),
    ("AMD Ryzen 5 5600G with Radeon Graphics", ["AMD Ryzen 5 5600G with Radeon Graphics"]),  # lscpu, an APU
    ("AMD Ryzen 5 2400G with Radeon Vega Graphics H100", ["AMD Ryzen 5 2400G with Radeon Vega Graphics", "H100"]),
    ("AMD Ryzen 5 5600G with Radeon Graphics RTX 4090", ["AMD Ryzen 5 5600G with Radeon Graphics", "RTX 4090"]),
    ("Navi 44 XTX", ["Navi 44 XTX"]),  # a codename with its variant
])
def test_unquoted_words_split_only_into_whole_names(words, expected):
    from envcheck.app.plan import gpu_names
    from envcheck.matrix import load_matrix

    assert gpu_names(load_matrix(), [words.split()]) == expected


@pytest.mark.parametrize("words, unknown", [
    ("H100 Foo (gfx1100)", "'Foo (gfx1100)'"),  # was an "AMD GPU (gfx1100)" ROCm plan, the H100 gone, exit 0
    ("Foo (gfx1100)", "'Foo (gfx1100)'"),  # quoted, an unknown name before its target is that target's GPU
    ("H100 / A100", "'/'"),  # two architectures: not one device's two names
    ("H100 AMD", "'AMD'"),  # a vendor word after the model was dropped
    ("RTX 4090 Foo Bar H100", "'Foo Bar'"),
])
def test_unquoted_words_left_over_are_named_with_the_quoted_form(words, unknown):
    from envcheck.app.plan import gpu_names
    from envcheck.errors import UnknownGpuError
    from envcheck.matrix import load_matrix

    with pytest.raises(UnknownGpuError, match=re.escape(f"unknown GPU {unknown} (in --gpu ")) as e:
        gpu_names(load_matrix(), [words.split()])
    assert "--gpu 'NAME A' --gpu 'NAME B'" in str(e.value)


def test_words_that_split_two_ways_are_refused():
    """'M1 Pro' 'W6600' or 'M1' 'Pro W6600': both names on record; envcheck does not pick one."""
    from envcheck.app.plan import gpu_names
    from envcheck.matrix import load_matrix

    with pytest.raises(UsageError, match="name GPUs in two ways") as e:
        gpu_names(load_matrix(), [["M1", "Pro", "W6600"]])
    assert "'M1 Pro' W6600" in str(e.value) and "M1 'Pro W6600'" in str(e.value) and "--gpu 'NAME A'" in str(e.value)


def test_a_quoted_gpu_keeps_the_forms_tools_print():
    """One value holding spaces is read as tools print it, as before: an unknown name before its (gfxN)."""
    from envcheck.app.plan import gpu_names
    from envcheck.matrix import load_matrix

    assert gpu_names(load_matrix(), [["H100", "Foo (gfx1100)"]]) == ["H100", "Foo (gfx1100)"]


def test_too_many_unquoted_words_are_refused_at_once():
    """F7: the split's work grew as the cube of the word count (120 words: 31 s); it is bounded."""
    from envcheck.app.plan import MAX_GPU_WORDS, gpu_names
    from envcheck.matrix import load_matrix

    words = ("RTX 4090 H100 80GB A100 w/ Radeon 780M (gfx1100) Graphics " * 12).split()
    assert len(words) > MAX_GPU_WORDS
    with pytest.raises(UsageError, match=f"{len(words)} unquoted words; at most {MAX_GPU_WORDS}.*--gpu 'NAME A'"):
        gpu_names(load_matrix(), [words])
    assert gpu_names(load_matrix(), [("H100 " * MAX_GPU_WORDS).split()]) == ["H100"] * MAX_GPU_WORDS


@pytest.mark.parametrize("words, archs", [
    ("H100 Foo (gfx1100)", None),
    ("Navi 31 MI300X", ["gfx1100", "gfx942"]),
    ("AMD Ryzen 9 9950X 16-Core Processor RTX 4090", ["gfx1036", "sm_89"]),
])
def test_unquoted_words_on_the_command_line(words, archs):
    cli = run_cli(["plan", "--gpu", *words.split(), "--os", "linux", "--python", "3.12", "--json"])
    if archs is None:
        assert cli.code == 2 and json.loads(cli.out)["error"].startswith("unknown GPU 'Foo (gfx1100)'"), cli.out
        return
    assert cli.code == 0, cli.err
    plan_ = json.loads(cli.out)
    assert [g["arch"] for g in plan_["machine"]["gpus"]] == archs
    if "sm_89" in archs:  # the RTX 4090 is planned for (the iGPU beside it stays unused)
        assert plan_["chosen"]["variant"].startswith("cu")
