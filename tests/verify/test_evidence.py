"""The collector's new evidence, proven with real parts: a real venv holding wheels of two CUDA majors,
a shadowing library built with the system compiler and found by the real dynamic loader through
LD_LIBRARY_PATH, and (tests/docker/test_shm.py) a small /dev/shm in a real container. The stand-in
torch (tests/fixtures/verify/standin) plays torch; everything around it is real."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.verify.conftest import STANDIN, venv_python


def make_venv(root: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    return venv_python(root)


def site_packages(py: Path) -> Path:
    out = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def fake_dist(site: Path, name: str, version: str, installer: str = "pip") -> None:
    """The metadata pip leaves for an installed distribution (nothing else of the wheel)."""
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
    (d / "INSTALLER").write_text(installer + "\n")


@pytest.fixture
def standin(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(STANDIN))
    monkeypatch.setenv("STANDIN_VERSION", "2.14.1+cu130")
    monkeypatch.setenv("STANDIN_CUDA", "13.0")
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    monkeypatch.delenv("STANDIN_LOAD", raising=False)


def verify(cli, py, *extra):
    r = cli(["verify", "--python", str(py), "--checks", "environment", "--json", *extra])
    doc = r.json()
    return r, {c["name"]: c for c in doc["checks"]}, doc["facts"]


@pytest.mark.subprocess
def test_nccl_of_two_cuda_majors_is_a_finding_with_the_exact_uninstall(cli, tmp_path, standin):
    py = make_venv(tmp_path / "venv")
    site = site_packages(py)
    fake_dist(site, "nvidia-nccl-cu12", "2.21.5")
    fake_dist(site, "nvidia-nccl-cu13", "2.27.7")
    fake_dist(site, "nvidia-cublas", "13.0.0.19", installer="uv")
    r, checks, facts = verify(cli, py)
    assert r.code == 1, r.err
    env = checks["environment"]
    assert env["status"] == "fail" and env["rule"] == "nccl-symbol-mismatch"
    assert "nvidia-nccl is installed for two CUDA majors (cu12: nvidia-nccl-cu12 2.21.5; cu13: nvidia-nccl-cu13 " \
           "2.27.7)" in env["detail"]
    assert f"`{py} -m pip uninstall -y nvidia-nccl-cu12` (torch uses CUDA 13)" in env["fix"]
    assert "nvidia-nccl-cu13 " not in env["fix"].split("uninstall -y", 1)[1].split("`")[0]
    # the distributions as recorded: name, version, location, installer
    (nccl12,) = facts["packages"]["nvidia-nccl-cu12"]
    assert nccl12["name"] == "nvidia-nccl-cu12" and nccl12["installer"] == "pip" and nccl12["location"] == str(site)
    assert facts["packages"]["nvidia-cublas"][0]["installer"] == "uv"

    # the same facts explain the pasted symbol error with the same command
    saved = tmp_path / "facts.json"
    saved.write_text(json.dumps(facts))
    e = cli(["explain", "--facts", str(saved), "--json", "torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister"])
    (f,) = e.json()["findings"]
    assert f["rule"] == "nccl-symbol-mismatch"
    assert "uninstall -y nvidia-nccl-cu12` (torch uses CUDA 13)" in f["fix"]
    assert "installed: nvidia-nccl-cu12 2.21.5, nvidia-nccl-cu13 2.27.7" in f["cause"]


@pytest.mark.subprocess
def test_one_cuda_major_passes(cli, tmp_path, standin):
    py = make_venv(tmp_path / "venv")
    fake_dist(site_packages(py), "nvidia-nccl-cu13", "2.27.7")
    r, checks, _ = verify(cli, py)
    assert r.code == 0, r.out
    assert checks["environment"]["status"] == "pass"
    assert "accelerators torch can drive: none" in checks["environment"]["detail"]


def cc(out: Path, source: str, *args: str) -> Path:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.fail("needs a C compiler (gcc): .ci/run installs it")
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.parent / (out.name + ".c")
    src.write_text(source)
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(out), str(src), *args], check=True, capture_output=True)
    return out


@pytest.fixture
def nccl_layout(tmp_path):
    """A venv whose nvidia-nccl wheel holds libnccl.so.2, a 'libtorch_cuda' that needs libnccl.so.2
    with a RUNPATH into that wheel (as torch's does), and a second libnccl.so.2 elsewhere."""
    py = make_venv(tmp_path / "venv")
    site = site_packages(py)
    fake_dist(site, "nvidia-nccl-cu13", "2.27.7")
    wheel_lib = site / "nvidia" / "nccl" / "lib"
    wheel_lib.mkdir(parents=True)
    nccl_src = "int ncclGetVersion(int *v) { *v = %d; return 0; }\n"
    cc(wheel_lib / "libnccl.so.2", nccl_src % 22707, "-Wl,-soname,libnccl.so.2")
    shadow = tmp_path / "usr-local-nccl" / "lib"
    cc(shadow / "libnccl.so.2", nccl_src % 21805, "-Wl,-soname,libnccl.so.2")
    torch_lib = site / "torch" / "lib"
    torch_lib.mkdir(parents=True)
    lib = cc(torch_lib / "libtorch_cuda_standin.so",
             "int ncclGetVersion(int *v);\nint standin_nccl(void) { int v = 0; ncclGetVersion(&v); return v; }\n",
             f"-L{wheel_lib}", "-l:libnccl.so.2", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../nvidia/nccl/lib")
    return py, lib, wheel_lib, shadow


@pytest.mark.subprocess
def test_the_wheels_library_is_seen_loaded(cli, nccl_layout, standin, monkeypatch):
    py, lib, wheel_lib, _ = nccl_layout
    monkeypatch.setenv("STANDIN_LOAD", str(lib))
    r, checks, facts = verify(cli, py)
    assert checks["environment"]["status"] == "pass", checks["environment"]
    loaded = facts["runs"]["environment"]["data"]["after_import"]
    assert str(wheel_lib / "libnccl.so.2") in loaded and str(lib) in loaded


@pytest.mark.subprocess
def test_a_shadowing_library_on_ld_library_path_is_named(cli, nccl_layout, standin, monkeypatch):
    py, lib, wheel_lib, shadow = nccl_layout
    monkeypatch.setenv("STANDIN_LOAD", str(lib))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(shadow))
    r, checks, facts = verify(cli, py)
    assert r.code == 1
    env = checks["environment"]
    assert env["status"] == "fail" and env["rule"] == "nccl-symbol-mismatch"
    assert f"libnccl.so.2 was loaded from {shadow / 'libnccl.so.2'}, not from its nvidia-* wheel" in env["detail"]
    assert f"remove {shadow} from LD_LIBRARY_PATH" in env["fix"]
    loaded = facts["runs"]["environment"]["data"]["after_import"]
    assert str(wheel_lib / "libnccl.so.2") not in loaded  # the real loader took the shadow, as it does for torch
    assert facts["env"]["LD_LIBRARY_PATH"] == str(shadow)


def test_facts_of_schema_1_replay_and_a_whole_report_is_accepted(cli, tmp_path):
    from tests.verify.conftest import CASES

    doc = json.loads((CASES / "C01.json").read_text())
    assert doc["schema"] == 1
    r1 = cli(["verify", "--facts", str(CASES / "C01.json"), "--json"])
    report = tmp_path / "report.json"
    report.write_text(r1.out)
    r2 = cli(["verify", "--facts", str(report), "--json"])
    assert r1.code == r2.code == 1
    assert r1.json()["checks"] == r2.json()["checks"]
    bad = tmp_path / "future.json"
    bad.write_text(json.dumps({**doc, "schema": 3}))
    r3 = cli(["verify", "--facts", str(bad)])
    assert r3.code == 2 and "unsupported facts schema 3; this envcheck reads 1, 2" in r3.err


def test_new_facts_are_checked_on_replay(tmp_path):
    from envcheck.errors import DataFileError
    from envcheck.verify.facts import facts_from_dict

    with pytest.raises(DataFileError, match="platform.shm_mib"):
        facts_from_dict({"schema": 2, "runs": {}, "platform": {"shm_mib": "64M"}})
    with pytest.raises(DataFileError, match=r"runs.environment.data.after_import\[0\]"):
        facts_from_dict({"schema": 2, "runs": {"environment": {"outcome": "ok", "data": {"after_import": [1]}}}})



# -- replayed cases from public reports (tests/fixtures/verify/SOURCES.md) ------------------------

def test_two_majors_from_a_report_replays_with_the_exact_uninstall(cli):
    from tests.verify.conftest import FIXTURES

    r = cli(["verify", "--facts", str(FIXTURES / "evidence" / "N01-nccl-two-majors.json"), "--json"])
    checks = {c["name"]: c for c in r.json()["checks"]}
    imp = checks["import_torch"]
    assert imp["status"] == "fail" and imp["rule"] == "nccl-symbol-mismatch"
    assert "-m pip uninstall -y nvidia-nccl-cu11` (torch uses CUDA 12)" in imp["fix"]
    assert "installed: nvidia-nccl-cu11 2.14.3, nvidia-nccl-cu12 2.20.5" in imp["detail"]


def test_shadowing_nvjitlink_from_a_report_names_the_folder_on_ld_library_path(cli):
    from tests.verify.conftest import FIXTURES

    r = cli(["verify", "--facts", str(FIXTURES / "evidence" / "N02-nvjitlink-shadowed.json"), "--json"])
    imp = {c["name"]: c for c in r.json()["checks"]}["import_torch"]
    assert imp["rule"] == "nvjitlink-symbol-mismatch"
    assert "libcusparse.so.12" in imp["detail"] and "/usr/local/cuda-12.1/lib64" in imp["fix"]


def test_small_shm_from_a_report_explains_the_nccl_failure(cli):
    from tests.verify.conftest import FIXTURES

    r = cli(["verify", "--facts", str(FIXTURES / "evidence" / "N03-nccl-small-shm.json"), "--json"])
    checks = {c["name"]: c for c in r.json()["checks"]}
    assert checks["environment"]["status"] == "warn" and checks["environment"]["rule"] == "nccl-shm"
    dist = checks["distributed"]
    assert dist["status"] == "fail" and "/dev/shm is 64 MiB in a container — too small" in dist["detail"]
    assert "--shm-size=16g" in dist["fix"]


def test_recorded_facts_replay(cli):
    from tests.verify.conftest import FIXTURES

    files = sorted((FIXTURES / "recorded").glob("*.json"))
    assert files
    for f in files:
        if f.name.endswith(".report.json"):
            continue
        r = cli(["verify", "--facts", str(f), "--json"])
        assert r.code == 0, (f.name, r.out)


# -- a CPU wheel on a machine whose GPU torch could drive ----------------------------------------

def _cpu_build_facts(os_="linux", arch="x86_64", **build):
    from envcheck.verify.facts import facts_from_dict

    return facts_from_dict({"schema": 2, "python": {"version": "3.11.7", "executable": "/v/bin/python", "bits": 64},
                            "platform": {"os": os_, "arch": arch, **({"glibc": "2.36"} if os_ == "linux" else {})},
                            "runs": {"import_torch": {"outcome": "ok", "data": {"version": "2.7.0+cpu"}},
                                     "cuda_build": {"outcome": "ok", "data": {"arch_list": [], "devices": [],
                                                                             "is_available": False, **build}}}})


def test_a_cpu_wheel_on_an_intel_gpu_fails_with_the_xpu_build(matrix):
    from envcheck.machine.describe import apply_flags
    from envcheck.verify.diagnose import diagnose

    machine = apply_flags(matrix, None, gpus=["Intel Arc A770"], os="linux", python="3.11")
    (c,) = diagnose(_cpu_build_facts(), machine=machine, matrix=matrix, checks=["cuda_build"])
    assert c.status == "fail" and c.rule == "cpu-only-build"
    assert "Intel Arc A770" in c.detail and "+xpu" in c.fix and "whl/xpu" in c.fix, c.fix


def test_a_mac_without_mps_fails_and_with_mps_passes(matrix):
    from envcheck.machine.describe import apply_flags
    from envcheck.verify.diagnose import diagnose

    machine = apply_flags(matrix, None, os="macos", python="3.11")
    (c,) = diagnose(_cpu_build_facts("macos", "arm64", mps_built=False), machine=machine, matrix=matrix,
                    checks=["cuda_build"])
    assert c.status == "fail" and "without MPS" in c.detail
    (ok,) = diagnose(_cpu_build_facts("macos", "arm64", mps_built=True, mps_available=True), machine=machine,
                     matrix=matrix, checks=["cuda_build"])
    assert ok.status == "pass" and "MPS (the Apple GPU) is available" in ok.detail


def shm_matrices(tmp_path, value):
    """A copy of the matrices with the /dev/shm limit row set to ``value`` (None: the row removed)."""
    import re
    import shutil

    from tests.conftest import ROOT

    mx = tmp_path / f"mx-{value}"
    shutil.copytree(ROOT / "matrices", mx)
    dg = mx / "diagnoses.toml"
    text, n = re.subn(r'\[\[limit\]\]\nname = "shm_small_mib"\nvalue = 1024\n',
                      "" if value is None else f'[[limit]]\nname = "shm_small_mib"\nvalue = {value}\n', dg.read_text())
    assert n == 1
    if value is None:  # the row's remaining keys would join the table above; drop them too
        text = re.sub(r'\nunit = "MiB"\nsource = \["https://github.com/pytorch/pytorch#using-pre-built-images"[^\n]*\n'
                      r'confidence = "community"\nnote = "envcheck\'s own warning line[^\n]*\n', "\n", text)
    dg.write_text(text)
    return mx


def test_the_shm_limit_is_matrix_data(cli, tmp_path):
    """The /dev/shm line comes from diagnoses.toml's [[limit]] row (sourced, community): the same
    facts (64 MiB in a container) warn under the shipped 1024 MiB line, pass under a 32 MiB one, and a
    matrices folder without the row is a one-line data error."""
    from tests.conftest import ROOT
    from tests.verify.conftest import FIXTURES

    facts = str(FIXTURES / "evidence" / "N03-nccl-small-shm.json")
    row = ROOT.joinpath("matrices", "diagnoses.toml").read_text().split('name = "shm_small_mib"', 1)[1].split("[[", 1)[0]
    assert 'confidence = "community"' in row and "moby/moby/issues/29492" in row
    shipped = {c["name"]: c for c in cli(["verify", "--facts", facts, "--json"]).json()["checks"]}
    assert shipped["environment"]["status"] == "warn" and "under 1024 MiB" in shipped["environment"]["detail"]
    r = cli(["verify", "--facts", facts, "--json", "--matrices", str(shm_matrices(tmp_path, 32))])
    low = {c["name"]: c for c in r.json()["checks"]}
    assert low["environment"]["status"] == "pass", low["environment"]
    assert "too small" not in low["distributed"]["detail"] and "/dev/shm is 64 MiB" in low["distributed"]["detail"]
    gone = cli(["verify", "--facts", facts, "--matrices", str(shm_matrices(tmp_path, None))])
    assert gone.code == 2 and "shm_small_mib" in gone.err and "Traceback" not in gone.err
    assert len(gone.err.strip().splitlines()) == 1, gone.err
