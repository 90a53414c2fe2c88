"""The answers `envcheck plan` must get right (issue #2, section 5), checked against the data.

Expected values are derived from the matrix rows (kernel lists, driver floors, wheel tags) rather
than hard-coded, so each test states the rule and fails when the resolver breaks it.
"""

from __future__ import annotations

import re

import pytest

from envcheck.matrix.model import vkey
from envcheck.resolve import Request
from tests.conftest import plan_for


def codes(c):
    return {r.code for r in c.reasons}


def cap_of(sm):
    m = re.fullmatch(r"(?:sm|compute)_(\d+)(\d)", sm)
    return int(m.group(1)), int(m.group(2))


def serves_nvidia(build, major, minor):
    cubin = any(cap_of(s)[0] == major and cap_of(s)[1] <= minor for s in build.sm if s[-1].isdigit())
    ptx = any(cap_of(p) <= (major, minor) for p in build.ptx)
    return cubin or ptx


def test_7900xtx_on_wsl_gets_amds_wsl_wheels(matrix):
    res = plan_for(matrix, gpus=["7900xtx"], wsl=True)
    c = res.chosen
    assert c is not None
    assert c.build.wsl and c.build.channel.startswith("repo.radeon.com")
    assert "gfx1100" in c.build.gfx
    rel = matrix.rocm_wsl_release(c.build.rocm)
    assert rel is not None and "gfx1100" in rel.gfx
    # the Windows driver it needs and the libhsa step travel with the plan
    assert any("Adrenalin" in a and rel.adrenalin_min in a for a in res.assumptions)
    assert any("libhsa" in k for k in c.build.post_install)
    # every unmodified download.pytorch.org ROCm wheel is rejected for `wsl`
    pt_rocm = [x for x in res.candidates if x.build.backend == "rocm" and x.build.channel == "pytorch"]
    assert pt_rocm and all("wsl" in codes(x) for x in pt_rocm)


def test_7900xtx_native_linux_gets_newest_rocm_build_with_gfx1100(matrix):
    # the ranking rule (#10): the newest release with a verified ROCm build carrying gfx1100 and a
    # paired torchvision; --prefer newest: the newest carrying gfx1100 at all
    def newest(verified):
        return max((r for r in matrix.releases
                    if any(b.rocm and "gfx1100" in b.gfx and "linux-x86_64" in b.platforms and not b.wsl
                           and (not verified or (b.confidence != "unverified" and r.torchvision))
                           for b in matrix.builds_for(r.version))), key=lambda r: vkey(r.version))

    for request, verified in ((None, True), (Request(prefer="newest"), False)):
        res = plan_for(matrix, request, gpus=["7900xtx"])
        c = res.chosen
        assert c.build.backend == "rocm" and c.build.channel == "pytorch" and not c.build.wsl
        assert c.release.version == newest(verified).version
    # AMD's WSL wheel set is not offered on native Linux
    assert all("wsl" in codes(x) for x in res.candidates if x.build.wsl)


def test_rtx5090_with_driver_570(matrix):
    res = plan_for(matrix, gpus=["RTX 5090"], driver="570.124.06", python="3.11")
    c = res.chosen
    assert vkey(c.release.version) >= vkey("2.7.0")
    assert c.build.cuda and vkey(c.build.cuda) >= vkey("12.8")
    # the chosen CUDA runs on 570.124.06: full support, or within the 12.x family
    assert c.build.cuda.startswith("12.")
    for x in res.candidates:
        b = x.build
        if b.variant == "cu130" and "linux-x86_64" in b.platforms:
            assert "driver" in codes(x), x.to_dict()
        if b.backend == "cuda" and "linux-x86_64" in b.platforms and not serves_nvidia(b, 12, 0):
            assert "gpu-arch" in codes(x), x.to_dict()
            assert any("sm_120" in r.message for r in x.reasons if r.code == "gpu-arch")


def test_gtx_1080_ti_gets_newest_build_carrying_sm_61_code(matrix):
    res = plan_for(matrix, gpus=["GTX 1080 Ti"])
    c = res.chosen
    assert serves_nvidia(c.build, 6, 1)
    assert any(s in c.build.sm for s in ("sm_60", "sm_61"))
    newest = max((r for r in matrix.releases if any(
        b.backend == "cuda" and "linux-x86_64" in b.platforms and serves_nvidia(b, 6, 1)
        for b in matrix.builds_for(r.version))), key=lambda r: vkey(r.version))
    assert c.release.version == newest.version
    assert not re.fullmatch(r"cu(12[89]|1[3-9]\d)", c.build.variant)


def test_v100_rejects_builds_without_sm_70_per_release(matrix):
    res = plan_for(matrix, gpus=["V100"])
    seen = 0
    for x in res.candidates:
        b = x.build
        if b.backend != "cuda" or "linux-x86_64" not in b.platforms:
            continue
        seen += 1
        if serves_nvidia(b, 7, 0):
            assert "gpu-arch" not in codes(x)
        else:
            assert "gpu-arch" in codes(x)
    assert seen > 20
    assert serves_nvidia(res.chosen.build, 7, 0)


def test_centos7_rejects_every_build_needing_newer_glibc(matrix):
    res = plan_for(matrix, distro="centos7", python="3.11", request=Request(backend="cuda"))
    checked = 0
    for x in res.candidates:
        if "linux-x86_64" not in x.build.platforms:
            continue
        floor = matrix.glibc_floor(x.build.wheel_tag["linux-x86_64"]) or x.build.glibc
        if floor and vkey(floor) > vkey("2.17"):
            assert "glibc" in codes(x)
            checked += 1
        else:
            assert "glibc" not in codes(x)
    assert checked > 50
    assert res.chosen is not None and vkey(res.chosen.release.version) < vkey("2.7")


def test_rx_5700_xt_has_no_official_build(matrix):
    res = plan_for(matrix, gpus=["RX 5700 XT"])
    assert res.status == "no_official_build"
    assert res.chosen is None
    assert res.fallback is not None and res.fallback.build.backend == "cpu"
    text = " ".join(res.alternatives)
    assert "gfx1010" in text and "PYTORCH_ROCM_ARCH" in text
    # the HSA override hack is never offered for gfx1010 (10.3.0 crashes an RX 5700: ROCm/legacy-rocm-build#887)
    assert "HSA_OVERRIDE_GFX_VERSION" not in text
    rocm = [x for x in res.candidates if x.build.backend == "rocm" and "linux-x86_64" in x.build.platforms]
    assert rocm and all(any("gfx1010" in r.message for r in x.reasons) for x in rocm if not x.build.wsl)


def test_windows_rtx_4080_gets_a_cuda_build_from_the_cuda_index(matrix):
    from envcheck.resolve.plan import make_plan

    res = plan_for(matrix, gpus=["RTX 4080"], os="windows", python="3.12")
    plan = make_plan(res, matrix)
    assert plan.build.backend == "cuda"
    assert plan.index_url.startswith("https://download.pytorch.org/whl/cu")
    assert plan.pip_lines()[0].startswith("--index-url https://download.pytorch.org/whl/cu")
    # plain PyPI is the CPU build on Windows
    assert res.chosen.release.pypi["windows-x86_64"] == "cpu"


def test_python_312_with_torch_21_has_no_build(matrix):
    res = plan_for(matrix, python="3.12", request=Request(torch=Request.parse_torch("2.1.*"), torch_text="2.1.*"))
    assert res.chosen is None
    in_spec = [x for x in res.candidates if x.release.version.startswith("2.1.")]
    assert in_spec and all("python" in codes(x) for x in in_spec if "linux-x86_64" in x.build.platforms)


def test_32_bit_windows_python_has_no_build_at_all(matrix):
    res = plan_for(matrix, os="windows", python="3.7-32")
    assert res.status == "no_build" and res.chosen is None
    assert all(any("32-bit" in r.message and "64-bit" in r.message for r in x.reasons) for x in res.candidates)


def test_driver_470_gets_cu118_under_minor_version_compatibility(matrix):
    # Ampere runs on R470: no CUDA 12 build (they need ≥ 525.60.13), cu118 with the minor-version warning
    res = plan_for(matrix, gpus=["RTX 3090"], driver="470.86")
    c = res.chosen
    assert c.build.cuda.startswith("11.")
    assert any(w.code == "driver" and "minor-version compatibility" in w.message for w in c.warnings)
    assert not [x for x in res.accepted if x.build.cuda and x.build.cuda.startswith(("12.", "13."))]
    assert any("upgrade the NVIDIA driver" in a for a in res.alternatives)


def test_rtx_4090_with_driver_470_cannot_work_at_all(matrix):
    # The example expected cu118 here; NVIDIA's sources decide otherwise: Ada (sm_89) is
    # driven from R520 (520.56.06) — R470 does not know the GPU, so no CUDA build can run.
    row = matrix.nv_arch("sm_89")
    res = plan_for(matrix, gpus=["RTX 4090"], driver="470.86")
    assert res.chosen is None
    cuda = [x for x in res.candidates if x.build.backend == "cuda" and "linux-x86_64" in x.build.platforms]
    assert cuda and all(any(row.driver_min_linux in r.message for r in x.reasons if r.code == "driver") for x in cuda)
    assert any("fix the NVIDIA driver" in a and row.driver_min_linux in a for a in res.alternatives)


def test_a_driver_past_the_last_branch_is_named(matrix):
    res = plan_for(matrix, gpus=["GTX 1080 Ti"], driver="595.58.03")
    assert res.chosen is None
    assert any("R580" in a for a in res.alternatives)
    assert not any("upgrade the NVIDIA driver" in a for a in res.alternatives)
    ok = plan_for(matrix, gpus=["GTX 1080 Ti"], driver="582.28")  # a Windows-numbered R580 build
    assert not any("no longer drives" in r.message for x in ok.candidates for r in x.reasons)


def test_macos_arm64_gets_the_pypi_wheel_with_mps_and_its_floor(matrix):
    res = plan_for(matrix, os="macos", python="3.12")
    c = res.chosen
    assert c.build.channel == "pypi" and c.build.mps
    floor = matrix.macos_floor(c.build.wheel_tag["macos-arm64"])
    assert floor and any(floor in a and "MPS" in a for a in res.assumptions)
    old = plan_for(matrix, os="macos", python="3.12", macos="12.6")
    assert old.chosen is None or vkey(old.chosen.release.version) < vkey(c.release.version)
    assert any("macos" in codes(x) for x in old.candidates)


def test_several_gpus_must_all_be_served(matrix):
    # one wheel drives one vendor (#10): NVIDIA + AMD plans for the first named, the other stays unused
    mixed = plan_for(matrix, gpus=["RTX 4090", "7900xtx"])
    assert mixed.chosen.build.backend == "cuda"
    assert [g.arch for g in mixed.machine.unserved_gpus] == ["gfx1100"]
    two = plan_for(matrix, gpus=["V100", "H100"])
    assert serves_nvidia(two.chosen.build, 7, 0) and serves_nvidia(two.chosen.build, 9, 0)


def test_every_candidate_gets_every_reason(matrix):
    # glibc 2.17 + GTX 1080 Ti + driver 470: a cu128 build of 2.8 fails three ways at once
    res = plan_for(matrix, gpus=["GTX 1080 Ti"], driver="470.86", glibc="2.17", python="3.11")
    x = next(x for x in res.candidates if x.release.version == "2.8.0" and x.build.variant == "cu128"
             and "linux-x86_64" in x.build.platforms)
    assert {"glibc", "driver", "gpu-arch"} <= codes(x)


def test_jetson_orin_gets_a_jetpack_build_and_thor_a_cuda13_aarch64_build(matrix):
    orin = plan_for(matrix, gpus=["jetson orin"])
    assert orin.machine.tegra and orin.machine.platform == "linux-aarch64"
    assert orin.chosen.build.tegra
    sbsa = [x for x in orin.candidates if x.build.backend == "cuda" and not x.build.tegra
            and "linux-aarch64" in x.build.platforms]
    assert sbsa and all("tegra" in codes(x) for x in sbsa)
    thor = plan_for(matrix, gpus=["jetson thor"])
    c = thor.chosen
    assert not c.build.tegra and c.build.cuda.startswith("13.") and "sm_110" in c.build.sm
    # JetPack builds are never offered off a Jetson
    desktop = plan_for(matrix, gpus=["RTX 4090"], arch="aarch64")
    assert all("tegra" in codes(x) for x in desktop.candidates if x.build.tegra)


def test_named_distro_prefers_its_own_python3(matrix):
    ubuntu = matrix.find_distro("ubuntu22.04")
    res = plan_for(matrix, gpus=["RTX 4090"], distro="ubuntu22.04", driver="535.104.05")
    assert ubuntu.python3 in (res.chosen.build.python or res.chosen.release.python["linux-x86_64"])
    assert res.chosen.python == ubuntu.python3
    assert any("python3" in a and ubuntu.name in a for a in res.assumptions)
    # the newest release still comes first; when it has no wheel for that python3, the plan says so
    newest = plan_for(matrix, gpus=["RTX 4090"], distro="ubuntu22.04")
    if ubuntu.python3 not in newest.chosen.release.python["linux-x86_64"]:
        assert any("has no wheel here" in a for a in newest.assumptions)
    # a Python the user names always wins
    assert plan_for(matrix, gpus=["RTX 4090"], distro="ubuntu22.04", python="3.12").chosen.python == "3.12"


@pytest.mark.parametrize("gpu, distro", [("MI250", "rhel8"), ("7900xtx", "ubuntu24.04"), ("MI300X", "ubuntu22.04")])
def test_a_native_rocm_plan_says_it_assumed_the_hosts_kernel_driver(matrix, gpu, distro):
    """newcomer4 #6: an MI250 node got the newest ROCm build with no word that the host's amdgpu kernel
    driver was assumed new enough (a CUDA plan always says "NVIDIA driver not given"). The assumption
    names the chosen build's ROCm user space, the kernel drivers AMD tests it on (matrices/rocm-libs.toml
    [[kernel_driver]]; hfix5: no longer a code-only "ROCm X or newer") or that none on record lists it,
    and how to plan for an older one (tests/resolve/test_amd_kernel_driver.py pins the wording)."""
    res = plan_for(matrix, gpus=[gpu], distro=distro)
    rocm = res.chosen.build.rocm
    assert res.chosen.build.backend == "rocm" and rocm
    said = [a for a in res.assumptions if a.startswith("AMD kernel driver not given")]
    assert len(said) == 1 and "--backend rocm" in said[0], res.assumptions
    minor = ".".join(rocm.split(".")[:2])
    assert f"ROCm {minor} user space" in said[0] and ("on record: those of" in said[0] or "does not list" in said[0])
    cuda = plan_for(matrix, gpus=["RTX 4090"], distro=distro)
    assert not [a for a in cuda.assumptions if "amdgpu" in a]


def test_the_or_line_names_every_newer_release_that_fits(matrix):
    """newcomer4 #7: the 'or' line named only the newest release passed over, so the user could not tell
    that releases between were passed over too. (The Windows RTX 5090 of the report now plans 2.14.1 —
    its 2.12–2.14 rows were wrongly unverified: tests/resolve/test_windows_release.py — so a Jetson, whose
    newer JetPack builds have no complete set on record, shows the line.)"""
    res = plan_for(matrix, gpus=["Jetson Orin"])
    line = next(a for a in res.alternatives if "is newer and fits too" in a)
    assert res.chosen.release.version == "2.8.0", res.chosen.release.version
    for version in ("2.10.0", "2.9.1"):
        assert version in line, line
    assert "none has a complete, verified set" in line


@pytest.mark.parametrize("distro", [None, "ubuntu20.04"])  # JetPack 6 and JetPack 5
def test_a_jetson_recipe_installs_the_openblas_its_wheels_link(matrix, distro):
    """newcomer4 #5: only the Jetson Dockerfile installed libopenblas-dev; install.sh on the board itself
    ended on 'libopenblas.so.0: cannot open shared object file', which envcheck's own explain knows."""
    from envcheck.resolve.plan import make_plan

    flags = {"distro": distro} if distro else {}
    res = plan_for(matrix, gpus=["Jetson Orin"], **flags)
    steps = make_plan(res, matrix).recipe
    blas = [s for s in steps if "libopenblas-dev" in (s.commands or "")]
    assert [s.key for s in blas] == ["jetson-openblas"], [s.key for s in steps]
    desktop = make_plan(plan_for(matrix, gpus=["RTX 4090"]), matrix).recipe
    assert not [s for s in desktop if "openblas" in (s.commands or "")]
