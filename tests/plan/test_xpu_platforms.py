"""Intel XPU plans per platform (breaker3 F4, F6).

F4: the Intel driver step checked ``ls /dev/dri/renderD*`` on every OS, so install.ps1 could never
pass on Windows (PowerShell has no /dev, and a cmdlet sets no ``$LASTEXITCODE``), and under WSL2 the
GPU is /dev/dxg with Intel's compute runtime installed in the guest (intel/compute-runtime WSL.md).
F6: PyTorch's XPU guide validates the Data Center GPU Max on Linux only; Windows and WSL2 plans for it
were planned as working (gpus-other.toml [[xpu_family]]).
"""

from __future__ import annotations

import pytest

from envcheck.app.plan import PlanRequest, Target, plan
from envcheck.render.recipe import render_script


def _plan(gpu, **target):
    return plan(PlanRequest(target=Target(gpus=[[gpu]], **target)))


def _host_step(p):
    return next(s for s in p.recipe if s.kind == "host")


def test_windows_intel_driver_check_is_powershell():
    p = _plan("Arc A770", os="windows").plan
    assert p is not None and p.build.variant == "xpu"
    step = _host_step(p)
    assert step.key == "intel-gpu-driver-windows" and step.runs_in == "windows"
    assert "Win32_VideoController" in step.check and "throw" in step.check
    ps = render_script(p)
    line = next(ln for ln in ps.splitlines() if "Win32_VideoController" in ln)
    # a check made of cmdlets sets no exit code: it is cleared before the check, so a throw decides
    assert line.index("$global:LASTEXITCODE = 0") < line.index("Win32_VideoController")


@pytest.mark.parametrize("gpu", ["Arc A770", "RTX 4090", "GTX 1080", "Arc B580", "Arc Graphics (Core Ultra, Meteor Lake-H)"])
def test_no_posix_check_in_a_windows_script(gpu):
    """The class: a step install.ps1 runs on Windows never checks with a Linux path or command."""
    p = _plan(gpu, os="windows").plan
    if p is None:
        pytest.skip(f"no Windows plan for {gpu}")
    for s in p.recipe:
        if s.runs_in == "windows" and s.check:
            assert "/dev/" not in s.check and not s.check.startswith(("ls ", "test ")), (s.key, s.check)


def test_wsl_intel_steps_are_the_wsl_ones():
    p = _plan("Arc A770", wsl=True).plan
    assert p is not None and p.build.variant == "xpu"
    keys = [s.key for s in p.recipe]
    assert "intel-gpu-driver" not in keys  # the native-Linux render-node check
    host = _host_step(p)
    assert host.key == "intel-gpu-driver-wsl" and host.check == "test -e /dev/dxg" and host.runs_in == "windows"
    runtime = next(s for s in p.recipe if s.key == "intel-compute-runtime-wsl")
    assert runtime.kind == "system" and "libze_intel_gpu" in runtime.check
    assert keys.index("intel-gpu-driver-wsl") < keys.index("intel-compute-runtime-wsl")
    sh = render_script(p)
    assert "/dev/dri/renderD" not in sh and "test -e /dev/dxg" in sh


def test_native_linux_keeps_the_render_node_check():
    p = _plan("Arc A770", os="linux").plan
    assert p is not None
    check = _host_step(p).check
    assert _host_step(p).key == "intel-gpu-driver" and "renderD*" in check and "/dev/dri/" in check
    assert not [s for s in p.recipe if "wsl" in s.key]


@pytest.mark.parametrize("target,code", [(dict(os="windows"), "os"), (dict(wsl=True), "wsl")])
@pytest.mark.parametrize("gpu", ["Max 1100", "Max 1550"])
def test_data_center_max_is_not_planned_off_linux(gpu, target, code):
    result = _plan(gpu, **target)
    assert result.plan is None and result.exit_code == 1
    xpu = [c for c in result.resolution.candidates if c.build.variant == "xpu"]
    assert xpu and all(code in {r.code for r in c.reasons} for c in xpu)
    why = next(r.message for c in xpu for r in c.reasons if r.code == code)
    assert "Linux" in why and "[[xpu_family]]" in why


@pytest.mark.parametrize("target", [dict(os="linux"), dict(os="windows"), dict(wsl=True)])
def test_client_gpus_still_planned_where_validated(target):
    p = _plan("Arc A770", **target).plan
    assert p is not None and p.build.variant == "xpu"


def test_data_center_max_on_linux_still_planned():
    p = _plan("Max 1550", os="linux").plan
    assert p is not None and p.build.variant == "xpu"


def _os_warnings(result):
    return [w.message for w in result.resolution.chosen.warnings if w.code == "os"]


def test_intel_on_a_distribution_the_guide_never_lists_is_said():
    """breaker3 F8: Arc A770 on Ubuntu 20.04 — no version of PyTorch's XPU guide lists it."""
    r = _plan("Arc A770", distro="ubuntu20.04")
    assert r.plan is not None
    warned = _os_warnings(r)
    assert warned and "Ubuntu 20.04" in warned[0] and "[[xpu_family]]" in warned[0]
    assert _os_warnings(_plan("Arc A770", distro="ubuntu24.04")) == []


def test_xpu_family_distros_are_known(matrix):
    known = {d.id for d in matrix.distros}
    for fam in set(matrix.xpu_families.values()):
        assert set(fam.distros) <= known, set(fam.distros) - known
