"""Parsers of probe, fed with real recorded text (sources in each test)."""

from __future__ import annotations

import pytest

from envcheck.probe.amd import gfx_arch, parse_amd_smi_static, parse_properties, parse_rocminfo
from envcheck.probe.host import parse_os_release
from envcheck.probe.nvidia import parse_cuda_banner, parse_proc_version, parse_query, parse_smi_xml, sm_arch
from tests.probe.replay import FIXTURES, MACHINES


@pytest.mark.parametrize("cc, arch", [("8.9", "sm_89"), ("8.6", "sm_86"), ("7.5", "sm_75"), ("9.0", "sm_90"),
                                      ("10.0", "sm_100"), ("12.0", "sm_120"), ("6.1", "sm_61")])
def test_compute_capability_to_arch(cc, arch):
    assert sm_arch(cc) == arch


@pytest.mark.parametrize("bad", ["", "[N/A]", "8", "8.9.1", "sm_89", "eight.nine"])
def test_compute_capability_garbage_is_none(bad):
    assert sm_arch(bad) is None


# gfx_target_version → LLVM target. Encoding verified against ROCm's own decoder:
# ROCm/ROCR-Runtime:libhsakmt/src/libhsakmt.h@c7785a6d defines HSA_GET_GFX_VERSION_MAJOR(v) = (v/10000)%100,
# _MINOR(v) = (v/100)%100, _STEP(v) = v%100; libhsakmt/tests/kfdtest/scripts/run_kfdtest.sh prints the name
# with "gfx%d%x%x". Known pairs: 110000 (RX 7900 XTX, tinygrad's recorded KFD properties), 90402 (MI300X,
# ROCm/rocm-cli#343), 90010 (MI200 = gfx90a), 100300 (RX 6800/6900 = gfx1030), 120001 (RX 9070 = gfx1201).
@pytest.mark.parametrize("value, arch", [(110000, "gfx1100"), (90402, "gfx942"), (90010, "gfx90a"),
                                         (100300, "gfx1030"), (120001, "gfx1201"), (90012, "gfx90c"),
                                         (110501, "gfx1151"), (90000, "gfx900"), (90006, "gfx906")])
def test_gfx_target_version_decodes(value, arch):
    assert gfx_arch(value) == arch


@pytest.mark.parametrize("value", [0, None, 9999, 91234, 111600])
def test_gfx_target_version_nonsense_is_none(value):
    assert gfx_arch(value) is None


def test_query_csv_two_gpus():
    text = (MACHINES / "nvidia-2x-a5000" / "nvidia-smi-query.csv").read_text()
    rows, bad = parse_query(text)
    assert bad == []
    assert [r["index"] for r in rows] == ["0", "1"]
    assert rows[1]["uuid"] == "GPU-12345678-aaaa-bbbb-cccc-0123456789cd"
    assert rows[0]["memory.total"] == "24564"
    assert rows[0]["mig.mode.current"] is None  # "[N/A]"


def test_query_csv_with_header_and_other_fields_is_not_parsed():
    # triton-inference-server/server#8070: a real csv of a different query (5 fields, with header)
    text = ("compute_cap, compute_mode, driver_version, name, index\n"
            "7.0, Default, 570.86.15, NVIDIA TITAN V, 0\n"
            "8.9, Default, 570.86.15, NVIDIA RTX 5880 Ada Generation, 1\n")
    rows, bad = parse_query(text)
    assert rows == [] and len(bad) == 3


def test_cuda_version_from_banner():
    text = (MACHINES / "wsl2-nvidia-quadro" / "nvidia-smi.txt").read_text()
    assert parse_cuda_banner(text) == ("12.0", "")


def test_cuda_version_err_in_banner_is_reported():
    text = (MACHINES / "wsl2-nvidia-quadro" / "nvidia-smi-cuda-err.txt").read_text()
    value, why = parse_cuda_banner(text)
    assert value is None and why == "it printed 'CUDA Version: ERR!'"


def test_cuda_version_from_nvidia_smi_q_text():
    # `nvidia-smi -a` inside WSL2, NVIDIA/nvidia-container-toolkit#271
    text = "Driver Version                            : 510.06\nCUDA Version                              : 11.6\n"
    assert parse_cuda_banner(text) == ("11.6", "")


def test_cuda_version_and_driver_from_xml():
    text = (MACHINES / "nvidia-2x-a5000" / "nvidia-smi-q-x.xml").read_text()
    assert parse_smi_xml(text, "cuda_version") == "13.1"
    assert parse_smi_xml(text, "driver_version") == "590.44.01"


@pytest.mark.parametrize("text, version", [
    # proprietary module, dylanaraps/neofetch#876
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 15:16:01 PDT 2017\n"
     "GCC version:  gcc version 7.2.0 (Ubuntu 7.2.0-8ubuntu3) \n", "384.98"),
    # open module, nix-community/nixGL#121
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  525.60.11  Release Build  "
     "(archlinux-builder@localhost)  \nGCC version:  gcc version 12.2.0 (GCC) \n", "525.60.11"),
    # Jetson Orin NX, nix-community/nixGL#139 (the L4T release)
    ("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  35.3.1  Release Build  "
     "(buildbrain@mobile-u64-6289-d7000)  Sun Mar 19 08:09:33 PDT 2023\n", "35.3.1"),
    # uv's own cases: astral-sh/uv@26a9dd4b crates/uv-torch/src/accelerator.rs tests::proc_driver_nvidia_version
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build  (dvs-builder@U16-I3-D08-1-2)  "
     "Mon Dec 30 17:26:13 UTC 2024\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)", "550.144.03"),
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  375.74  Wed Jun 14 01:39:39 PDT 2017\n"
     "GCC version:  gcc version 5.4.0 20160609 (Ubuntu 5.4.0-6ubuntu1~16.04.4)", "375.74"),
])
def test_proc_driver_version(text, version):
    assert parse_proc_version(text) == version


def test_proc_driver_version_garbage():
    assert parse_proc_version("NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n") is None


def test_os_release_quotes_and_comments():
    fields = parse_os_release((FIXTURES / "os-release" / "rhel9").read_text())
    assert fields["ID"] == "rhel" and fields["VERSION_ID"] == "9.6"
    assert fields["PRETTY_NAME"] == "Red Hat Enterprise Linux 9.6 (Plow)"
    assert fields["REDHAT_BUGZILLA_PRODUCT_VERSION"] == "9.6"
    assert not any(k.startswith("#") for k in fields)


def test_kfd_properties():
    props = parse_properties((MACHINES / "mixed-3090-7900xtx" / "root/sys/class/kfd/kfd/topology/nodes/1/properties")
                             .read_text())
    assert props["gfx_target_version"] == 110000
    assert props["simd_count"] == 192 and props["cpu_cores_count"] == 0
    assert props["drm_render_minor"] == 128 and props["device_id"] == 0x744C
    assert props["unique_id"] == 11673270660693242239


def test_rocminfo_agents():
    agents = parse_rocminfo((MACHINES / "wsl2-radeon-7900xtx" / "rocminfo.txt").read_text())
    assert [a["Device Type"] for a in agents] == ["CPU", "GPU"]
    gpu = agents[1]
    assert gpu["Name"] == "gfx1100"  # not the ISA's amdgcn-amd-amdhsa--gfx1100 further down
    assert gpu["Marketing Name"] == "AMD Radeon RX 7900 XTX"
    assert gpu["Uuid"] == "GPU-4fe81514950cd6cd"
    assert gpu["pool_kb"] == "25149440"


def test_amd_smi_static():
    rows = parse_amd_smi_static((MACHINES / "amd-smi-mi350x" / "amd-smi-static.txt").read_text())
    assert rows == [{"gpu": "0", "MARKET_NAME": "AMD Instinct MI350X", "TARGET_GRAPHICS_VERSION": "gfx950"}]
