"""The native-Linux Intel GPU driver step's check (newcomer5 #9): `ls /dev/dri/renderD*` passed on any
machine with any DRM render node — an AMD iGPU, or i915 without Intel's compute runtime — so
install.sh marked the step done and torch later found no XPU device. The check (matrices/recipe.toml
intel-gpu-driver) now needs the Level Zero GPU driver library, a render node driven by i915 or xe,
and access to it. Run for real in bash, in a private mount namespace whose /sys/class and /dev/dri
hold the recorded layout of each machine (no Intel GPU here); `ldconfig -p` is replayed."""

from __future__ import annotations

import shutil
import subprocess

import pytest

pytestmark = pytest.mark.subprocess

OLD = "ls /dev/dri/renderD*"


def _check():
    from envcheck.matrix import load_matrix

    return next(r.check for r in load_matrix().recipe if r.key == "intel-gpu-driver")


def _machine(tmp_path, driver, libze):
    root = tmp_path / driver
    node = root / "class" / "drm" / "renderD128" / "device"
    node.mkdir(parents=True)
    (root / "drivers" / driver).mkdir(parents=True)
    (node / "driver").symlink_to(root / "drivers" / driver)
    (root / "dri").mkdir()
    (root / "dri" / "renderD128").touch()
    (root / "bin").mkdir()
    lines = "\tlibze_intel_gpu.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1\n" if libze else ""
    (root / "bin" / "ldconfig").write_text(f"#!/bin/sh\nprintf '1 libs found in cache\\n{lines}'\n")
    (root / "bin" / "ldconfig").chmod(0o755)
    return root


def _run(root, check):
    script = (f"mount --bind {root}/class /sys/class && mkdir -p /dev/dri && mount --bind {root}/dri /dev/dri && "
              f"PATH={root}/bin:$PATH; {check}")
    return subprocess.run(["unshare", "-rm", "bash", "-c", script], capture_output=True, text=True, timeout=30)


@pytest.fixture(autouse=True)
def _namespaces(tmp_path):
    if not shutil.which("unshare"):
        pytest.skip("needs unshare (util-linux)")
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0 or not __import__("os").path.isdir("/sys/class"):
        pytest.skip("user and mount namespaces are not available here")


@pytest.mark.parametrize("driver,libze,ok", [
    ("amdgpu", False, False),  # an AMD iGPU's render node: the old check passed
    ("amdgpu", True, False),   # Level Zero installed, but the render node is not Intel's
    ("i915", False, False),    # Intel's kernel driver without the compute runtime: "No XPU devices"
    ("i915", True, True),
    ("xe", True, True),        # Lunar Lake / Battlemage on the xe kernel driver
])
def test_check_needs_intel_node_and_level_zero(tmp_path, driver, libze, ok):
    root = _machine(tmp_path, driver, libze)
    r = _run(root, _check())
    assert (r.returncode == 0) is ok, (r.returncode, r.stderr)


def test_the_old_check_passed_on_an_amd_render_node(tmp_path):
    """What the test above stands on: the recorded layout really fools a bare `ls`."""
    assert _run(_machine(tmp_path, "amdgpu", False), OLD).returncode == 0
