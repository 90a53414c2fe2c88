"""The one Facts → Machine converter and the one CPU-architecture alias table (#9).

The facts files are rebuilt from public reports (their ``_source``); the expected machine facts
are read off those reports by hand, not computed like the code.
"""

from __future__ import annotations

import pytest

from envcheck.machine.arch import cpu_arch, platform_arch
from envcheck.machine.model import GpuDevice, Machine
from envcheck.verify.facts import Facts, load_facts
from envcheck.verify.machine import machine_from_facts
from tests.verify.conftest import CASES


def test_c01_rtx_5090_d_report_becomes_its_machine():
    # https://github.com/pytorch/pytorch/issues/150733: RTX 5090 D (12.0), driver 570.124.04,
    # Ubuntu 24.10 (glibc 2.40), Python 3.12.9
    m = machine_from_facts(load_facts(CASES / "C01.json"))
    assert (m.os, m.arch, m.platform, m.python, m.glibc) == ("linux", "x86_64", "linux-x86_64", "3.12", "2.40")
    assert [(g.vendor, g.arch) for g in m.gpus] == [("nvidia", "sm_120")]
    assert m.nvidia_driver == "570.124.04"
    assert m.how["nvidia_driver"].startswith("the verified interpreter")


def test_collected_facts_beat_the_saved_machine_and_hints_fill_gaps():
    base = Machine(os="linux", python="3.10", glibc="2.31", nvidia_driver="535.54.03",
                   gpus=[GpuDevice("nvidia", "Tesla T4", "sm_75")])
    facts = Facts({"schema": 1, "python": {"version": "3.11.4", "bits": 64},
                   "platform": {"os": "linux", "arch": "aarch64", "glibc": "2.35"}, "runs": {}})
    m = machine_from_facts(facts, base, {"cuda_driver_max": "12.2"})
    assert (m.python, m.glibc, m.arch, m.platform) == ("3.11", "2.35", "aarch64", "linux-aarch64")
    assert m.nvidia_driver == "535.54.03" and m.cuda_driver_max == "12.2"
    assert [g.arch for g in m.gpus] == ["sm_75"]  # no devices collected: the saved machine's GPU
    assert m.how["cuda_driver_max"] == "the explained text"


def test_a_gpu_named_only_by_the_explained_text(matrix):
    m = machine_from_facts(Facts(), None, {"gpu_arch": "sm_120"}, matrix)
    assert [(g.vendor, g.arch) for g in m.gpus] == [("nvidia", "sm_120")]
    assert "RTX" in m.gpus[0].name or "Blackwell" in m.gpus[0].name or m.gpus[0].name.startswith(("NVIDIA", "GeForce"))


@pytest.mark.parametrize("word, name", [
    # platform.machine() as Python's docs and PEP 508 list it: Windows AMD64/ARM64, Linux x86_64/aarch64,
    # macOS arm64, 32-bit x86 i686
    ("AMD64", "x86_64"), ("x86_64", "x86_64"), ("x64", "x86_64"), ("aarch64", "aarch64"),
    ("ARM64", "arm64"), ("i686", "x86"), ("Win32", "x86"),
])
def test_cpu_arch_aliases_are_one_table(word, name):
    assert cpu_arch(word) == name


def test_platform_spelling_per_os():
    assert platform_arch("linux", "arm64") == "aarch64"
    assert platform_arch("macos", "aarch64") == "arm64"
    assert platform_arch("windows", "aarch64") == "arm64"
    assert cpu_arch("sparc64") is None


def test_facts_saying_amd64_plan_like_x86_64(matrix):
    facts = Facts({"schema": 1, "python": {"version": "3.12.1", "bits": 64},
                   "platform": {"os": "windows", "arch": "AMD64"}, "runs": {}})
    assert machine_from_facts(facts).platform == "windows-x86_64"
