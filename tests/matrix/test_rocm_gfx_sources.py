"""ROCm gfx target lists of the torch 2.6-2.14 wheels, each checked against the public source it rests on.

The expected lists are written out literally from the sources, not computed like the code:
- 2.6: the 2.5.1+rocm6.2 wheel prints 7 targets (astral-sh/uv#14086); pytorch/pytorch#141667 "[ROCm] add gfx1101
  to wheels" merged 2024-12-04, before "Branch Cut for Release 2.6" (pytorch/pytorch#143085, 2024-12-12); gfx1102
  (#147761) and gfx1200/gfx1201 (#148562) merged in Feb/Mar 2025, after 2.6.0.
- pytorch/pytorch .ci/docker/libtorch/build.sh@19ace59c (2.9 era): base list of 11 targets, and
  "add gfx950 conditionally starting in ROCm 7.0"; pytorch/pytorch#167299 (2025-11-07) "unconditionally add
  gfx950, gfx115x to PYTORCH_ROCM_ARCH ... Removed the ROCm 7.0 version check" -> 2.8/2.9 (ROCm 6.3/6.4) have 11.
- astral-sh/uv#18730: torch.cuda.get_arch_list() of the 2.11 rocm7.2 wheel prints the 14 targets below.
- unslothai/unsloth#9829 (2026-08-31) read PYTORCH_ROCM_ARCH of .ci/docker/manywheel/build.sh per release branch:
  release/2.7 and release/2.12 have no gfx1103 and none of gfx1031-gfx1036.
- pytorch/pytorch#179653 "[ROCm] Add gfx1103 to wheel build arch list" (landed by 2026-04-17, per
  pytorch/pytorch#179788) -> after the 2.12 cut (13 Apr 2026), before the 2.13 cut (8 Jun 2026): branch cut dates
  from the release cadence table of pytorch/pytorch RELEASE.md (2.14: 10 Aug 2026; 2.15: 5 Oct 2026).
- 2.14 ships ROCm 7.2 + 7.14, a pair main built only between pytorch/pytorch#190276 (July 2026, rocm7.14 from
  TheRock wheels, "start with a common list and add as appropriate") and pytorch/pytorch#194919 (2026-08-26,
  [7.2, 7.14] -> [7.14, 10.0], "the gfx900/gfx906 additions ... are gone"); manywheel build.sh@027375bf in that
  window: common list of 13, + gfx900;gfx906 for the OS-package images (7.1/7.2) only.
"""

from __future__ import annotations

import pytest

from tests.conftest import plan_for

LIST_8 = "gfx900 gfx906 gfx908 gfx90a gfx942 gfx1030 gfx1100 gfx1101"
LIST_11 = "gfx900 gfx906 gfx908 gfx90a gfx942 gfx1030 gfx1100 gfx1101 gfx1102 gfx1200 gfx1201"
LIST_14 = LIST_11 + " gfx950 gfx1150 gfx1151"
LIST_15 = LIST_14 + " gfx1103"
COMMON_714 = "gfx908 gfx90a gfx942 gfx950 gfx1030 gfx1100 gfx1101 gfx1102 gfx1103 gfx1200 gfx1201 gfx1150 gfx1151"

SOURCED = {
    ("2.6.0", "rocm6.1"): LIST_8, ("2.6.0", "rocm6.2.4"): LIST_8,
    ("2.8.0", "rocm6.3"): LIST_11, ("2.8.0", "rocm6.4"): LIST_11,
    ("2.9.0", "rocm6.3"): LIST_11, ("2.9.1", "rocm6.4"): LIST_11,
    ("2.10.0", "rocm7.0"): LIST_14, ("2.10.0", "rocm7.1"): LIST_14,
    ("2.12.0", "rocm7.1"): LIST_14, ("2.12.1", "rocm7.2"): LIST_14,
    ("2.13.0", "rocm7.1"): LIST_15, ("2.13.0", "rocm7.2"): LIST_15,
    ("2.14.0", "rocm7.2"): LIST_15, ("2.14.1", "rocm7.14"): COMMON_714,
}


def _rows(matrix, version, variant):
    return [b for b in matrix.builds_for(version) if b.variant == variant and b.channel == "pytorch"
            and "linux-x86_64" in b.platforms]


@pytest.mark.parametrize(("version", "variant"), sorted(SOURCED))
def test_rocm_gfx_list_matches_its_source(matrix, version, variant):
    got = _rows(matrix, version, variant)
    assert got, (version, variant)
    for b in got:
        assert sorted(b.gfx) == sorted(SOURCED[version, variant].split()), (version, variant, b.gfx)
        # PyTorch's own text seen through a third party / tied to the release by dates: copy, never official
        assert b.confidence == "copy", (version, variant, b.confidence)
        assert b.note and any("#" in s for s in b.source), (version, variant)


def test_no_rdna2_sibling_of_gfx1030_in_any_sourced_list(matrix):
    # unslothai/unsloth#9829: release/2.7 and release/2.12 build.sh carry none of gfx1031-gfx1036
    for (version, variant) in SOURCED:
        for b in _rows(matrix, version, variant):
            assert not {"gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"} & set(b.gfx), version


def test_gfx950_first_in_rocm_7_wheels(matrix):
    # libtorch build.sh@19ace59c: "add gfx950 conditionally starting in ROCm 7.0" -> no 6.x wheel has it
    assert "gfx950" not in _rows(matrix, "2.9.1", "rocm6.4")[0].gfx
    assert "gfx950" in _rows(matrix, "2.10.0", "rocm7.0")[0].gfx


def test_therock_7_14_build_drops_gfx900_and_gfx906(matrix):
    # build.sh@027375bf: "Legacy images also cover the older gfx900/gfx906 targets" - only the 7.1/7.2 path adds them
    assert {"gfx900", "gfx906"} <= set(_rows(matrix, "2.14.1", "rocm7.2")[0].gfx)
    assert not {"gfx900", "gfx906"} & set(_rows(matrix, "2.14.1", "rocm7.14")[0].gfx)


@pytest.mark.parametrize("gpu", ["RX 7900 XTX", "MI300X", "RX 9070 XT"])
def test_native_linux_default_is_the_newest_sourced_rocm_release(matrix, gpu):
    # before: 2.11.0+rocm7.2 (the 2.12-2.14 lists were unverified); the 2.15 list is still unverified
    c = plan_for(matrix, gpus=[gpu], os="linux").chosen
    assert (c.release.version, c.build.variant) == ("2.14.1", "rocm7.14"), gpu
    assert c.build.confidence == "copy"


def test_rx_9070_xt_gets_a_build_that_lists_gfx1201(matrix):
    # RX 9070 XT = gfx1201 (Navi 48); gfx1201 entered the wheels with pytorch/pytorch#148562
    c = plan_for(matrix, gpus=["RX 9070 XT"], os="linux").chosen
    assert "gfx1201" in c.build.gfx and c.build.confidence != "unverified"


def test_rx_6800_gets_the_newest_sourced_build_that_lists_gfx1030(matrix):
    # gfx1030 is in every list from 2.1 on, the 7.14 common list included; the newest sourced one is 2.14.1
    c = plan_for(matrix, gpus=["RX 6800"], os="linux").chosen
    assert (c.release.version, c.build.variant) == ("2.14.1", "rocm7.14")
    assert "gfx1030" in c.build.gfx


def test_radeon_780m_gets_a_sourced_build_with_gfx1103(matrix):
    # pytorch/pytorch#179653 says HSA_OVERRIDE_GFX_VERSION=11.0.0 on gfx1103 page-faults and hangs, so only a
    # wheel with native gfx1103 kernels serves a 780M; before this, the only candidate was an unverified
    # 2.15.0+rocm7.14 row
    c = plan_for(matrix, gpus=["Radeon 780M"], os="linux").chosen
    assert (c.release.version, c.build.variant) == ("2.14.1", "rocm7.14")
    assert "gfx1103" in c.build.gfx and c.build.confidence == "copy"


def test_gfx906_is_not_sent_to_a_7_14_build(matrix):
    # the 7.14 list has no gfx906, so a Radeon VII can only get a 7.2 build of 2.14
    c = plan_for(matrix, gpus=["Radeon VII"], os="linux").chosen
    assert c.build.variant != "rocm7.14" and "gfx906" in c.build.gfx
