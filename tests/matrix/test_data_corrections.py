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
