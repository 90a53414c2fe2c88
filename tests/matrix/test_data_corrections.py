"""Data corrections of #10, each with the primary source it rests on (checked against the rows)."""

from __future__ import annotations


def rows(matrix, version, variant, platform):
    return [b for b in matrix.builds_for(version) if b.variant == variant and platform in b.platforms
            and b.channel == "pytorch"]


def test_torch_2_11_0_pairs_with_torchaudio_2_11_0(matrix):
    # torchaudio 2.11.0: same-day cp310–cp314t wheels (companions.toml from PyPI's file list)
    assert matrix.release_by_version["2.11.0"].torchaudio == "2.11.0"
    assert matrix.companions[("torchaudio", "2.11.0")].serves("linux-x86_64", "3.14t")


def test_2_13_0_cu130_claims_no_ptx(matrix):
    # release builds strip +PTX (pytorch/pytorch#157516, #175567, #188925); 2.14.1+cu130 read: no compute_120
    for plat in ("linux-x86_64", "linux-aarch64"):
        for b in rows(matrix, "2.13.0", "cu130", plat):
            assert b.ptx == (), (plat, b.ptx)


def test_gfx1103_in_2_13_rocm(matrix):
    # pytorch/pytorch#179653 (April 2026, before the 2.13 branch) added gfx1103 to the wheel arch list
    got = [b for b in matrix.builds_for("2.13.0") if b.rocm and not b.wsl]
    assert got and all("gfx1103" in b.gfx for b in got)


def test_rx_9070_gre_has_12_gb_and_is_not_official(matrix):
    g = matrix.find_gpu("RX 9070 GRE")
    assert g.memory_mib == 12288 and g.confidence != "official"


def test_cuda_13_0_3_toolkit_row(matrix):
    assert matrix.toolkit("13.0.3") is not None
    pins = {r.version for r in matrix.releases if (r.pypi_pins or {}).get("cuda_toolkit") == "13.0.3"}
    assert pins == {"2.13.0", "2.14.0", "2.14.1"}


def test_2_13_0_cpu_rows_list_no_python_the_release_lacks(matrix):
    rel = matrix.release_by_version["2.13.0"]
    for b in matrix.builds_for("2.13.0"):
        if b.python is None:
            continue
        for plat in b.platforms:
            if plat.startswith("linux") and b.variant == "cpu":
                assert not {"3.15", "3.15t"} & set(b.python) - set(rel.python.get(plat, ())), (plat, b.python)


def test_community_and_third_party_facts_are_not_official(matrix):
    # press/community/third-party copies are not `official` (#10)
    assert matrix.channels["jetson-ai-lab/jp6/cu126"].confidence == "community"
    for b in matrix.builds:
        if b.variant == "xpu" and any("astral-sh/uv#17380" in n for n in (b.note,)):
            assert b.confidence != "official", b.torch
        if "jetson-ai-lab" in b.channel:
            assert b.confidence != "official", (b.torch, b.channel)
    for a in matrix.archs.values():
        if "Driver keys: community" in a.note:
            assert a.confidence == "community", a.sm


# --- #10 follow-up (h10): kernel lists re-read from the wheels, ROCm gfx lists from wheel readings ---

#: ``torch._C._cuda_getArchFlags()`` as stored in torch/lib/libtorch_python.so of the PyPI wheels
#: (cp312 manylinux_2_28 files of each release, read 2026-12 with tools/wheel_arch_flags.py)
PYPI_WHEEL_ARCH_FLAGS = {
    ("2.6.0", "cu124", "linux-x86_64"): "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
    ("2.7.1", "cu126", "linux-x86_64"): "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
    ("2.8.0", "cu128", "linux-x86_64"): "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
    ("2.10.0", "cu128", "linux-x86_64"): "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
    ("2.11.0", "cu130", "linux-aarch64"): "sm_80 sm_90 sm_100 sm_110 sm_120",
    ("2.13.0", "cu130", "linux-x86_64"): "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
    ("2.13.0", "cu130", "linux-aarch64"): "sm_80 sm_90 sm_100 sm_110 sm_120",
    ("2.15.0", "cu132", "linux-x86_64"): "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
    ("2.15.0", "cu132", "linux-aarch64"): "sm_80 sm_90 sm_100 sm_110 sm_120",
}


def test_pypi_variant_rows_match_the_wheels_kernel_list(matrix):
    for (version, variant, plat), flags in PYPI_WHEEL_ARCH_FLAGS.items():
        got = rows(matrix, version, variant, plat)
        assert got, (version, variant, plat)
        for b in got:
            assert b.sm == tuple(flags.split()) and b.ptx == (), (version, variant, plat, b.sm, b.ptx)
            assert b.confidence in ("official", "copy"), (version, variant, plat)
            assert any(s.startswith("wheel:torch-" + version) for s in b.source), b.source


def test_cuda_toolkit_is_the_runtime_the_wheel_pins(matrix):
    # Requires-Dist: cuda-toolkit[...]==X in the PyPI wheels' METADATA (2.13/2.14 pin 13.0.3, which has no
    # driver row in NVIDIA's table: their rows keep 13.0.2 and are `copy`)
    for version, tk in (("2.11.0", "13.0.2"), ("2.12.1", "13.0.2"), ("2.15.0", "13.2.2")):
        variant = "cu132" if version == "2.15.0" else "cu130"
        for b in rows(matrix, version, variant, "linux-x86_64"):
            assert b.cuda == tk, (version, b.cuda)


# 2.7.1+rocm6.3 / +rocm6.2.4: torch.cuda.get_arch_list() printed in astral-sh/uv#14086;
# rocm7.2 (2.11.0): printed in astral-sh/uv#18730
ROCM_WHEEL_GFX = {
    ("2.7.1", "rocm6.3"): "gfx900 gfx906 gfx908 gfx90a gfx942 gfx1030 gfx1100 gfx1101 gfx1102 gfx1200 gfx1201",
    ("2.7.1", "rocm6.2.4"): "gfx900 gfx906 gfx908 gfx90a gfx942 gfx1030 gfx1100 gfx1101 gfx1102 gfx1200 gfx1201",
    ("2.11.0", "rocm7.2"): "gfx900 gfx906 gfx908 gfx90a gfx942 gfx1030 gfx1100 gfx1101 gfx1102 gfx1200 gfx1201 "
                           "gfx950 gfx1150 gfx1151",
}


def test_rocm_rows_read_off_wheels_are_verified(matrix):
    for (version, variant), gfx in ROCM_WHEEL_GFX.items():
        got = rows(matrix, version, variant, "linux-x86_64")
        assert got, (version, variant)
        for b in got:
            assert sorted(b.gfx) == sorted(gfx.split()) and b.confidence == "copy", (version, variant, b.gfx)


def test_7900xtx_and_mi300x_default_is_a_verified_rocm_7_set(matrix):
    # was 2.5.1+rocm6.2 while every 2.6+ ROCm row was unverified, then 2.11.0 (the newest list read off a
    # wheel); 2.14.1 is now the newest release whose list is sourced (tests/matrix/test_rocm_gfx_sources.py);
    # the 2.15 list is still unverified, so it does not win without --prefer newest
    from tests.conftest import plan_for

    for gpu in ("RX 7900 XTX", "MI300X"):
        c = plan_for(matrix, gpus=[gpu], os="linux").chosen
        assert (c.release.version, c.build.variant) == ("2.14.1", "rocm7.14"), (gpu, c.release.version)
        assert c.build.confidence != "unverified"


# cuDNN of the 1.8-1.12 wheels: the archives pytorch/builder's release branches install
# (common/install_cuda.sh, windows/internal/cuda_install.bat; "Use cudnn 8.2 for cuda 11.3", pytorch/builder#724;
# "bump cudnn to 8.3.2.44 for CUDA11.3", pytorch/builder#1000 on the 1.12 branch)
LEGACY_CUDNN = {
    ("1.8.1", "cu101", "linux-x86_64"): "7.6.3.30",
    ("1.8.1", "cu101", "windows-x86_64"): "7.6.4.38",
    ("1.8.1", "cu111", "linux-x86_64"): "8.0.5.39",
    ("1.9.0", "cu102", "linux-x86_64"): "7.6.5.32",
    ("1.10.2", "cu113", "linux-x86_64"): "8.2.0.53",
    ("1.11.0", "cu115", "windows-x86_64"): "8.3.2.44",
    ("1.12.1", "cu113", "linux-x86_64"): "8.3.2.44",
    ("1.12.1", "cu116", "windows-x86_64"): "8.3.2.44",
}


def test_legacy_cuda_rows_carry_the_builder_cudnn(matrix):
    for (version, variant, plat), cudnn in LEGACY_CUDNN.items():
        got = rows(matrix, version, variant, plat)
        assert got, (version, variant, plat)
        assert {b.cudnn for b in got} == {cudnn}, (version, variant, plat)
    # every CUDA row from 1.8 on names its cuDNN now (matrix validate is quiet for a reason)
    assert not [b.torch for b in matrix.builds if b.cuda and not b.cudnn]


def test_rocm_wheels_of_torch_1_8_and_1_9(matrix):
    # download.pytorch.org listing (shared data): 1.8.x +rocm3.10/+rocm4.0.1, 1.9.x +rocm4.0.1/4.1/4.2;
    # builder's build_rocm.sh bundles rocBLAS for gfx803/900/906/908, but torch's own kernels have no
    # gfx803: pytorch/pytorch#53738 (RX 480), ROCm/legacy-rocm-build#1471 (1.8.1+rocm4.0.1 on an RX 580)
    want = {"1.8.0": {"rocm3.10", "rocm4.0.1"}, "1.8.1": {"rocm3.10", "rocm4.0.1"},
            "1.9.0": {"rocm4.0.1", "rocm4.1", "rocm4.2"}, "1.9.1": {"rocm4.0.1", "rocm4.1", "rocm4.2"}}
    for version, variants in want.items():
        got = {b.variant: b for b in matrix.builds_for(version) if b.rocm}
        assert set(got) == variants, (version, sorted(got))
        for b in got.values():
            assert set(b.gfx) == {"gfx900", "gfx906", "gfx908"} and b.confidence != "unverified"


def test_radeon_vii_plans_a_rocm_build_of_torch_1_9(matrix):
    from envcheck.resolve import Request
    from tests.conftest import plan_for

    c = plan_for(matrix, Request(torch=Request.parse_torch("1.9.0"), torch_text="1.9.0"),
                 gpus=["Radeon VII"], os="linux").chosen
    assert c.build.backend == "rocm" and c.release.version == "1.9.0"


def test_rx_580_gets_no_rocm_wheel_of_1_8(matrix):
    # ROCm/legacy-rocm-build#1471: torch==1.8.1+rocm4.0.1 on a Radeon RX 580 -> hipErrorNoBinaryForGpu
    from envcheck.resolve import Request
    from tests.conftest import plan_for

    res = plan_for(matrix, Request(torch=Request.parse_torch("1.8.1"), torch_text="1.8.1"),
                   gpus=["RX 580"], os="linux")
    rocm = [x for x in res.candidates if x.build.backend == "rocm"]
    assert rocm and all("gpu-arch" in {r.code for r in x.reasons} for x in rocm)
    assert res.chosen is None or res.chosen.build.backend != "rocm"


def test_rtx_4090_default_is_the_newest_verified_complete_set(matrix):
    # 2.15.0's cu132 rows are read off its PyPI wheel now (official), but no torchvision release
    # pairs with 2.15.0 on PyPI yet (newest 0.29.x pins torch 2.14.x): the complete set stays 2.14.1;
    # --prefer newest takes 2.15.0+cu132, with no unverified caveat any more
    from envcheck.resolve import Request
    from tests.conftest import plan_for

    assert not matrix.release_by_version["2.15.0"].torchvision
    c = plan_for(matrix, gpus=["RTX 4090"], os="linux").chosen
    assert c.release.version == "2.14.1" and c.build.confidence != "unverified"
    n = plan_for(matrix, Request(prefer="newest"), gpus=["RTX 4090"], os="linux").chosen
    assert (n.release.version, n.build.variant) == ("2.15.0", "cu132")
    assert not [w for w in n.warnings if w.code == "unverified" and "kernel" in w.message]
