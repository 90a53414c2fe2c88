"""Regressions from trying to break `plan` (a tester's findings): no tracebacks, right exit codes,
no impossible machines, nothing of the user's clobbered."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import pytest

from envcheck.matrix import default_matrix_dir
from tests.conftest import plan_for


def envcheck(*args, **kw):
    return subprocess.run([sys.executable, "-m", "envcheck", *args], capture_output=True, text=True, **kw)


def test_non_utf8_machine_file(cli, tmp_path):
    f = tmp_path / "g.toml"
    f.write_bytes(b"\xff\xfe" + os.urandom(200))
    r = cli(["plan", "--machine", str(f)])
    assert r.code == 2 and "UTF-8" in r.err and "Traceback" not in r.err


def test_non_utf8_matrix_file(cli, tmp_path):
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    (d / "cuda.toml").write_bytes(b"\xff" * 100)
    for args in (["plan", "--gpu", "A100"], ["gpus", "a100"], ["matrix", "show"]):
        r = cli([*args, "--matrices", str(d)])
        assert r.code == 2 and "cuda.toml" in r.err and "UTF-8" in r.err, args
    v = cli(["matrix", "validate", "--matrices", str(d)])
    assert v.code == 1 and "cuda.toml" in v.out


def test_empty_matrix_folder(cli, tmp_path):
    r = cli(["plan", "--gpu", "A100", "--matrices", str(tmp_path)])
    assert r.code == 2 and "no *.toml" in r.err


@pytest.mark.subprocess
def test_closed_stdout_does_not_crash():
    r = subprocess.run([sys.executable, "-m", "envcheck", "plan", "--gpu", "A100", "--os", "linux"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, close_fds=True,
                       preexec_fn=lambda: os.close(1))
    assert "Traceback" not in r.stderr
    # the plan cannot be printed: an error like `> /dev/full`, not a silent exit 0 (breaker F17)
    assert r.returncode == 1 and "cannot write the output" in r.stderr, r.stderr


@pytest.mark.subprocess
def test_broken_pipe_keeps_the_exit_code():
    p = subprocess.Popen(f"{sys.executable} -m envcheck plan --gpu 'RX 5700 XT' | head -1; exit ${{PIPESTATUS[0]}}",
                         shell=True, executable="/bin/bash", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    assert p.returncode == 1, err
    assert "Traceback" not in err and len(out.splitlines()) == 1


def test_force_never_replaces_a_device_or_fifo(cli, tmp_path):
    fifo = tmp_path / "requirements.txt"
    os.mkfifo(fifo)
    r = cli(["plan", "--gpu", "A100", "-o", str(tmp_path), "--force", "--format", "pip"])
    assert r.code == 2 and "not a regular file" in r.err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("args, words", [
    (["--gpu", "Apple M3", "--os", "linux"], ["Apple", "Macs"]),
    (["--macos", "14.5", "--os", "linux"], ["--macos", "--os macos"]),
    (["--gpu", "GB10", "--arch", "x86_64"], ["aarch64"]),
    (["--torch", "1.7"], ["1.8.0", "no torch release"]),
    (["--torch", "2.7.0+cu128"], ["--backend"]),
    (["--backend", "cu999"], ["cu128"]),
    (["-o", ""], ["-o"]),
    (["--mirror", "https://m/whl#frag"], ["#fragment"]),
    (["--mirror", "https://m/wh l"], ["spaces"]),
    (["--python", "３.１２"], ["--python"]),
])
@pytest.mark.subprocess
def test_impossible_or_malformed_is_exit_2(cli, args, words):
    r = cli(["plan", *args])
    assert r.code == 2, (args, r.err)
    for w in words:
        assert w in r.err, (w, r.err)


def test_superchips_and_jetsons_imply_their_cpu(matrix):
    assert plan_for(matrix, gpus=["DGX Spark"]).machine.platform == "linux-aarch64"
    assert plan_for(matrix, gpus=["GH200"]).machine.platform == "linux-aarch64"


def test_gpu_by_count_and_by_architecture(matrix):
    assert len(plan_for(matrix, gpus=["2x A100"]).machine.gpus) == 2
    res = plan_for(matrix, gpus=["sm_120"], driver="570.124.06")
    assert res.machine.gpus[0].arch == "sm_120" and "sm_120" in res.chosen.build.sm
    amd = plan_for(matrix, gpus=["gfx1100"], wsl=True)
    assert amd.chosen.build.wsl


def test_32_bit_python_with_a_gpu_is_no_build_not_a_source_build(matrix):
    res = plan_for(matrix, gpus=["A100"], python="3.12-32")
    assert res.status == "no_build"
    assert not any("TORCH_CUDA_ARCH_LIST" in a for a in res.alternatives)


def test_windows_with_a_radeon_points_to_wsl(matrix):
    res = plan_for(matrix, gpus=["7900xtx"], os="windows")
    assert any("--wsl" in a for a in res.alternatives)


def test_format_without_output_prints_the_file(cli):
    r = cli(["plan", "--gpu", "A100", "--format", "pip"])
    assert r.code == 0 and r.out.startswith("# torch") and "--index-url" in r.out


@pytest.mark.parametrize("flags", [dict(gpus=["jetson orin"], python="3.10"),
                                   dict(gpus=["RTX 4080 Laptop"], os="windows", driver="551.86")])
def test_no_literal_none_in_rendered_files(matrix, flags):
    from envcheck.render import parse_formats, render
    from envcheck.resolve.plan import make_plan

    plan = make_plan(plan_for(matrix, **flags), matrix)
    for name, text in render(plan, parse_formats("all")).items():  # pylock reads the network: tests/integrations
        assert "None" not in text.replace("NoneType", ""), name


def test_a_matrix_folder_without_torch_builds_is_bad_input(tmp_path):
    """breaker F17: `plan --matrices DIR` where DIR holds TOML files but no torch release/build said
    "no PyTorch build fits this machine (0 candidates checked)", exit 1 — the folder is the problem."""
    import shutil

    from tests.conftest import ROOT, run_cli

    shutil.copy(ROOT / "matrices" / "cuda.toml", tmp_path / "cuda.toml")
    r = run_cli(["plan", "--matrices", str(tmp_path), "--backend", "cpu"])
    assert r.code == 2 and r.err.count("\n") == 1 and "holds no torch release or build" in r.err, r.err


@pytest.mark.parametrize("argv, key", [
    (["--gpu", "7900xtx", "--wsl", "--driver", "570.124.06"], "amd_driver"),    # an NVIDIA number for AMD
    (["--gpu", "RTX 4090", "--driver", "25.3.1"], "nvidia_driver"),              # an Adrenalin number for NVIDIA
    (["--gpu", "RTX 4090", "--driver", "570.124.06.1.2"], "nvidia_driver"),
    (["--gpu", "RTX 4090", "--driver", "99999999999999999999.1"], None),
    (["--gpu", "Jetson AGX Orin", "--wsl"], "wsl"),                               # a Jetson is never a WSL guest
    (["--gpu", "0x H100"], "a count of 0"),                                        # was one H100
])
def test_a_driver_of_the_other_vendor_or_a_jetson_under_wsl_is_bad_input(argv, key):
    """breaker3 F10: these planned (the NVIDIA number as 'the newest Adrenalin ever', a Linux Jetson
    under WSL) or said 'no build fits' (exit 1) instead of naming the bad value."""
    from tests.conftest import run_cli

    r = run_cli(["plan", *argv, "--no-config"])
    assert r.code == 2 and "Traceback" not in r.err, (argv, r.code, r.err)
    if key:
        assert key in r.err, r.err
