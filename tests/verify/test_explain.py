"""`envcheck explain`: the messages the issue lists → cause and fix; unknown text → exit 1."""

from __future__ import annotations

import io
import json

import pytest

MESSAGES = [
    # (pasted text, rule, words in the cause, words in the fix)
    ("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
     "PyTorch installation.", "arch-not-compatible", ["sm_120", "NVIDIA GeForce RTX 5090"],
     ["`envcheck plan` picks for this machine, which carries sm_120", "The first release with code for sm_120 is "
      "torch 2.7.0+cu128"]),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040).", "driver-too-old",
     ["supports CUDA up to 11.4", "found version 11040"], ["Upgrade the NVIDIA driver", "+cu118", "CUDA ≤ 11.4"]),
    ("ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by /x/libtorch_cpu.so)",
     "glibc-too-old", ["libtorch_cpu.so needs glibc ≥ 2.28"], ["cannot be upgraded inside", "container"]),
    ("RuntimeError: operator torchvision::nms does not exist", "torchvision-op-missing",
     ["built for another torch release"], ["uninstall", "same index"]),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "no-kernel-image",
     ["found no cubin or PTX"], ["envcheck plan --gpu"]),
    ("RuntimeError: Dynamo is not supported on Python 3.12+", "dynamo-python",
     ["Python 3.12 needs torch ≥ 2.4.0"], ["torch ≥ 2.4.0", "--python 3.12 --compile"]),
    ("OSError: libcudnn.so.9: cannot open shared object file: No such file or directory", "libcudnn-missing",
     ["libcudnn.so.9", "nvidia-cudnn-cu"], ["LD_LIBRARY_PATH"]),
]


@pytest.mark.parametrize("text, rule, cause_words, fix_words", MESSAGES, ids=[m[1] for m in MESSAGES])
def test_issue_messages(cli, text, rule, cause_words, fix_words):
    r = cli(["explain", "--json", text])
    assert r.code == 0, r.err
    found = {f["rule"]: f for f in r.json()["findings"]}
    assert rule in found
    f = found[rule]
    for w in cause_words:
        assert w in f["cause"], (w, f["cause"])
    for w in fix_words:
        assert w in f["fix"], (w, f["fix"])
    assert "{" not in f["cause"]
    assert f["source"]


def test_glibc_on_a_newer_host_says_the_error_is_from_elsewhere(cli):
    r = cli(["explain", "--json", "version `GLIBC_2.17' not found"])
    (f,) = r.json()["findings"]
    assert "which is new enough" in f["cause"]


def test_unknown_text(cli):
    r = cli(["explain", "everything is fine"])
    assert r.code == 1
    assert "no rule explains this text ('everything is fine')" in r.err


def test_reads_a_traceback_from_stdin(cli, monkeypatch):
    tb = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
          "    model.cuda()\nAssertionError: Torch not compiled with CUDA enabled\n")
    monkeypatch.setattr("sys.stdin", io.StringIO(tb))
    r = cli(["explain", "-"])
    assert r.code == 0
    assert "(cpu-only-build)" in r.out
    assert "CPU-only build" in r.out


def test_saved_facts_make_it_specific(cli):
    from tests.verify.conftest import CASES

    r = cli(["explain", "--json", "--facts", str(CASES / "C01.json"),
             "CUDA error: no kernel image is available for execution on the device"])
    (f,) = r.json()["findings"]
    assert "torch 2.6.0+cu126" in f["cause"]
    assert "NVIDIA GeForce RTX 5090 D, sm_120" in f["cause"]
    assert "sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90" in f["cause"]
    assert "+cu128" in f["fix"] and "this driver (570.124.04) is enough" in f["fix"]


def test_wsl_facts_pick_the_wsl_rule(cli, tmp_path):
    facts = {"schema": 1, "platform": {"os": "linux", "wsl": True}, "runs": {}}
    p = tmp_path / "f.json"
    p.write_text(json.dumps(facts))
    text = "Error: libcuda.so: cannot open shared object file: No such file or directory"
    wsl = cli(["explain", "--json", "--facts", str(p), text]).json()["findings"]
    assert [f["rule"] for f in wsl] == ["libcuda-missing-wsl"]
    native = cli(["explain", "--json", text]).json()["findings"]  # this machine is not WSL
    assert [f["rule"] for f in native] == ["libcuda-missing"]


def test_nothing_to_explain(cli, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("   \n"))
    r = cli(["explain", "-"])
    assert r.code == 2
    assert "nothing to explain" in r.err


def test_glibc_error_from_an_older_machine_plans_for_that_machine(cli):
    """This machine's glibc is new enough, so the error came from an older one: the fix must pick
    wheels that machine can load (glibc < 2.28), not wheels for this one."""
    r = cli(["explain", "ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by "
                        "/home/u/.venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)"])
    assert r.code == 0, r.err
    if "which is new enough" in r.out:  # this machine's glibc ≥ 2.28 (true here: Debian 12)
        assert "glibc ≤ 2.27" in r.out and "older than 2.28" in r.out


def test_the_arch_list_in_the_message_is_a_fact(cli):
    """newcomer M5: torch's full warning names the build's arch list; explain must use it, not call
    it unknown. Text from pytorch/pytorch#45028 (GeForce RTX 3080, torch 1.6 cu102)."""
    text = ("GeForce RTX 3080 with CUDA capability sm_86 is not compatible with the current PyTorch installation.\n"
            "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_61 sm_70 sm_75 compute_37.\n")
    r = cli(["explain", "--json", "--no-probe", text])
    (f,) = [f for f in r.json()["findings"] if f["rule"] == "arch-not-compatible"]
    assert "unknown here" not in f["cause"]
    assert "sm_37, sm_50, sm_60, sm_61, sm_70, sm_75, compute_37" in f["cause"], f["cause"]


def test_a_driver_below_full_support_is_enough_only_under_minor_version_compat(cli):
    """newcomer M6: no floor below R570 may be shown for an RTX 5090 (sm_120; a 525 driver drives no
    Blackwell GPU). 570.86.10, sm_120's first driver, reports CUDA 12.8, so the cu128 build it picks
    runs with full support (newcomer6 #2: 12.8 GA's driver is 570.26; 570.124.06 is only what 12.8
    Update 1 bundles). A driver older than the picked build's CUDA (550.54.14 = CUDA 12.4 for a cu126
    build, whose first driver is 12.6 GA's 560.28.03) is enough only under minor-version compatibility."""
    text = "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation."
    r = cli(["explain", "--json", "--no-probe", "--driver", "570.86.10", text])
    (f,) = [f for f in r.json()["findings"] if f["rule"] == "arch-not-compatible"]
    assert "525.60.13" not in f["fix"], f["fix"]
    assert "this driver (570.86.10) is enough." in f["fix"], f["fix"]
    text = "NVIDIA GeForce RTX 4090 with CUDA capability sm_89 is not compatible with the current PyTorch installation."
    r = cli(["explain", "--json", "--no-probe", "--driver", "550.54.14", text])
    (f,) = [f for f in r.json()["findings"] if f["rule"] == "arch-not-compatible"]
    assert "is enough only under minor-version compatibility" in f["fix"], f["fix"]
    assert "full support from 560.28.03" in f["fix"], f["fix"]


def test_the_headline_is_the_pasted_line_not_a_fragment(cli):
    """newcomer L6: the GLIBC message's headline was "GLIBC_2.28' not found" (stray quote, library
    dropped). Message as in pytorch/pytorch#150724 (CentOS 7 / glibc 2.17)."""
    text = "ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found"
    r = cli(["explain", "--no-probe", text])
    assert r.code == 0
    assert r.out.splitlines()[0].startswith(text + "  (glibc-too-old)"), r.out.splitlines()[0]
