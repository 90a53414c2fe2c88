"""Host facts this machine cannot have, proven end to end with stand-ins (#11): the real collector in
a real interpreter, through verify's own collection loop, with the host around it replaced —

* WSL 1 / WSL 2: in a private mount namespace (``unshare -m``, root), a WSL kernel's release string
  is bind-mounted over /proc/sys/kernel/osrelease (WSL 1 from microsoft/WSL#5554, WSL 2 from
  microsoft/WSL#6772) and WSL_INTEROP is set as WSL 2 sets it;
* a macOS virtual machine: the stand-in OS (tests/fixtures/verify/standin-os) makes the collector
  see darwin, and its ``sysctlbyname("kern.hv_vmm_present")`` is answered by a real C library the
  test builds with the system compiler;
* Windows without the full VC++ runtime: the stand-in OS makes it see win32 and the DLLs are looked
  up for real in a System32 folder the test fills.

Each fact then reaches a family: verify's ``environment`` check, and ``explain`` of the message
users of such a host paste (no-nvidia-driver, libcuda-missing-wsl, mps-oom-vm, windows-dll-missing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck import runner
from envcheck.verify.collect import collect
from tests.verify.conftest import FIXTURES, STANDIN

pytestmark = pytest.mark.subprocess

STANDIN_OS = FIXTURES / "standin-os"
NO_DRIVER = ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
             "installed a driver from http://www.nvidia.com/Download/index.aspx")
#: actions/runner-images#9918 (a hosted Apple-silicon macOS runner), verbatim
MPS_VM = ("RuntimeError: MPS backend out of memory (MPS allocated: 0 bytes, other allocations: 0 bytes, max allowed: "
          "7.93 GB). Tried to allocate 256 bytes on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable "
          "upper limit for memory allocations (may cause system failure).")
#: pytorch/pytorch#131662 (Windows, torch's fbgemm.dll), as the windows-dll-missing example
WIN126 = ("OSError: [WinError 126] The specified module could not be found. Error loading \"C:\\Users\\username\\AppData"
          "\\Local\\Programs\\Python\\Python312\\Lib\\site-packages\\torch\\lib\\fbgemm.dll\" or one of its dependencies.")


@pytest.fixture
def matrix():
    from envcheck.matrix import load_matrix

    return load_matrix()


def standin_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STANDIN_", "WSL_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(STANDIN_OS), str(STANDIN)])
    env.update(extra)
    return env


def in_wsl(tmp_path: Path, release: str):
    """A ``start`` seam: each collector worker in a private mount namespace whose kernel release reads
    ``release``."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare (a private mount namespace)")
    fake = tmp_path / "osrelease"
    fake.write_text(release + "\n")
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m refused here: {probe.stderr.decode(errors='replace').strip()}")

    def start(argv, env=None, cwd=None):
        script = 'mount --bind "$0" /proc/sys/kernel/osrelease && exec "$@"'
        return runner.start(["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(fake),
                             *[str(a) for a in argv]], env=env, cwd=cwd)
    return start


def test_wsl1_is_seen_and_explains_the_missing_driver(tmp_path, matrix, plain_python):
    from envcheck.verify import explain
    from envcheck.verify.diagnose import diagnose

    env = standin_env(STANDIN_VERSION="2.14.1+cu130", STANDIN_CUDA="13.0", STANDIN_CUDA_INIT=NO_DRIVER)
    facts = collect(plain_python, ["import_torch", "cuda_build", "environment"], timeout=60, env=env,
                    start=in_wsl(tmp_path, "4.4.0-19041-Microsoft"))
    plat = facts.section("platform")
    assert plat["wsl"] is True and plat["wsl_version"] == 1, plat
    checks = {c.name: c for c in diagnose(facts, matrix=matrix, checks=["environment"])}
    env_check = checks["environment"]
    assert env_check.status == "warn" and env_check.rule == "no-nvidia-driver", env_check
    assert "WSL 1" in env_check.detail and "wsl --set-version <distro> 2" in env_check.fix
    # under WSL the WSL family answers (breaker3 F10: no Linux driver inside WSL), and says WSL 1 too
    (f,) = [f for f in explain(NO_DRIVER, matrix, None, facts) if f.rule == "no-nvidia-driver-wsl"]
    assert "runs under WSL 1, which has no GPU access at all" in f.cause


def test_wsl2_is_seen_and_picks_the_wsl_family(tmp_path, matrix, plain_python):
    from envcheck.verify import explain

    env = standin_env(WSL_INTEROP="/run/WSL/1_interop", WSL_DISTRO_NAME="Ubuntu")
    facts = collect(plain_python, ["import_torch"], timeout=60, env=env,
                    start=in_wsl(tmp_path, "5.15.153.1-microsoft-standard-WSL2"))
    plat = facts.section("platform")
    assert plat["wsl"] is True and plat["wsl_version"] == 2, plat
    rules = [f.rule for f in explain("OSError: libcuda.so.1: cannot open shared object file: No such file or directory",
                                     matrix, None, facts)]
    assert rules and rules[0] == "libcuda-missing-wsl", rules
    # outside the namespace the same interpreter is plain Linux: the fact came from the kernel string
    plain = collect(plain_python, ["import_torch"], timeout=60, env=standin_env())
    assert plain.section("platform")["wsl"] is False


LIBC = r"""
#include <stddef.h>
#include <string.h>
int sysctlbyname(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) {
    (void)newp; (void)newlen;
    if (strcmp(name, "kern.hv_vmm_present") != 0 || !oldp || !oldlenp || *oldlenp < sizeof(int)) return -1;
    *(int *)oldp = VMM_PRESENT;
    *oldlenp = sizeof(int);
    return 0;
}
"""


def mac_libc(tmp_path: Path, present: int) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "sysctl.c"
    src.write_text(LIBC.replace("VMM_PRESENT", str(present)))
    lib = tmp_path / f"libsysctl{present}.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True, timeout=120)
    return lib


@pytest.mark.parametrize("vm", [1, 0])
def test_a_macos_vm_is_seen_and_explains_mps_running_out(tmp_path, matrix, plain_python, vm):
    from envcheck.verify import explain
    from envcheck.verify.diagnose import diagnose

    env = standin_env(STANDIN_OS="macos", STANDIN_MACOS="14.5", STANDIN_LIBC=str(mac_libc(tmp_path, vm)),
                      STANDIN_MPS="available")
    facts = collect(plain_python, ["import_torch", "cuda_build", "environment"], timeout=60, env=env)
    plat = facts.section("platform")
    assert plat["os"] == "macos" and plat["macos"] == "14.5" and plat["vm"] is bool(vm), plat
    assert facts.build.get("mps_available") is True
    (env_check,) = diagnose(facts, matrix=matrix, checks=["environment"])
    (f,) = [f for f in explain(MPS_VM, matrix, None, facts) if f.rule == "mps-oom-vm"]
    if vm:
        assert env_check.status == "warn" and env_check.rule == "mps-oom-vm", env_check
        assert "virtual machine" in env_check.detail and "torch reports MPS available" in env_check.detail
        assert "This macOS runs in a virtual machine (kern.hv_vmm_present = 1)" in f.cause
    else:
        assert env_check.status == "pass", env_check
        assert "This macOS runs in a virtual machine" not in f.cause


def test_windows_without_the_whole_vc_runtime(tmp_path, matrix, plain_python):
    from envcheck.verify import explain
    from envcheck.verify.diagnose import diagnose

    root = tmp_path / "Windows"
    (root / "System32").mkdir(parents=True)
    (root / "System32" / "vcruntime140.dll").write_bytes(b"MZ")  # only the first of the three
    env = standin_env(STANDIN_OS="windows", SYSTEMROOT=str(root))
    facts = collect(plain_python, ["import_torch", "environment"], timeout=60, env=env)
    plat = facts.section("platform")
    assert plat["os"] == "windows" and plat["vcruntime"] == ["vcruntime140.dll"], plat
    (env_check,) = diagnose(facts, matrix=matrix, checks=["environment"])
    assert env_check.status == "warn" and env_check.rule == "windows-dll-missing", env_check
    assert "vcruntime140_1.dll, msvcp140.dll not in System32" in env_check.detail
    (f,) = [f for f in explain(WIN126, matrix, None, facts) if f.rule == "windows-dll-missing"]
    assert "vcruntime140_1.dll, msvcp140.dll are missing from System32 on this machine (found: vcruntime140.dll)" in f.cause
    # with all three present the environment check has nothing to say about the runtime
    for name in ("vcruntime140_1.dll", "msvcp140.dll"):
        (root / "System32" / name).write_bytes(b"MZ")
    full = collect(plain_python, ["import_torch", "environment"], timeout=60, env=env)
    (ok,) = diagnose(full, matrix=matrix, checks=["environment"])
    assert ok.status == "pass", ok
    assert sys.platform.startswith("linux")  # all of the above ran on Linux, through the stand-ins
