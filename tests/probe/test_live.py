"""probe on this machine, for real, checked against what the OS itself reports; and `plan` using it."""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

import pytest

from envcheck.probe import load_probe_matrix, probe_machine
from envcheck.probe.host import parse_os_release
from envcheck.runner import run

THIS_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="module")
def here():
    return probe_machine(load_probe_matrix(), docker=False)


def test_os_and_arch_match_platform(here):
    system = platform.system().lower()
    assert here.os == {"darwin": "macos"}.get(system, system)
    machine = platform.machine().lower()
    assert here.arch == {"amd64": "x86_64"}.get(machine, machine)
    assert here.python == THIS_PYTHON or here.python == THIS_PYTHON + "t"
    assert here.python_bits == (64 if sys.maxsize > 2**32 else 32)
    assert here.python_implementation == platform.python_implementation().lower()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and os-release are Linux facts")
def test_glibc_and_distro_match_the_os(here, probe_matrix):
    confstr = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
    assert here.glibc == confstr.split()[1]
    assert here.how["glibc"] == "os.confstr('CS_GNU_LIBC_VERSION')"
    osr = Path("/etc/os-release") if Path("/etc/os-release").exists() else Path("/usr/lib/os-release")
    fields = parse_os_release(osr.read_text())
    assert here.distro_name == (fields.get("PRETTY_NAME") or fields.get("NAME"))
    if here.distro is not None:  # a distro the matrix knows: its row names this os-release ID
        row = next(d for d in probe_matrix.distros if d.id == here.distro)
        assert row.os_release["ID"] == fields["ID"]
        assert fields["VERSION_ID"].split(".")[0] == row.os_release["VERSION_ID"].split(".")[0]
    else:
        assert "matches no [[distro]] row" in here.unknown["distro"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="WSL and containers are Linux facts")
def test_wsl_and_container_match_the_os(here):
    version = Path("/proc/version").read_text()
    assert here.wsl is ("microsoft" in version.lower())
    markers = Path("/.dockerenv").exists() or Path("/run/.containerenv").exists()
    if markers:
        assert here.container is True
    assert set(here.how) >= {"os", "arch", "python", "glibc", "wsl", "container", "gpus"}


def test_every_unknown_says_why(here):
    assert all(isinstance(v, str) and len(v) > 10 for v in here.unknown.values())
    assert all(isinstance(v, str) and v for v in here.how.values())


# -- the command line ---------------------------------------------------------------------------
def test_probe_text(cli):
    res = cli(["probe", "--no-docker"])
    assert res.code == 0, res.err
    assert res.out.startswith("This machine: ")
    assert f"Python {THIS_PYTHON}" in res.out.splitlines()[0]
    assert "Next: envcheck plan" in res.out


def test_probe_json_is_the_machine(cli):
    res = cli(["probe", "--json", "--no-docker"])
    assert res.code == 0, res.err
    data = res.json()
    assert data["python"].rstrip("t") == THIS_PYTHON
    assert data["how"]["python"].startswith("this interpreter")
    assert isinstance(data["gpus"], list) and isinstance(data["unknown"], dict)


def test_probe_output_file_round_trips_and_refuses_to_clobber(cli, tmp_path):
    from envcheck.machine.io import load_machine

    target = tmp_path / "node.toml"
    first = cli(["probe", "--no-docker", "-o", str(target)])
    assert first.code == 0, first.err
    assert f"Wrote {target}" in first.out
    saved = load_machine(target)
    assert saved.python.rstrip("t") == THIS_PYTHON
    before = target.read_text()
    again = cli(["probe", "--no-docker", "-o", str(target)])
    assert again.code == 2 and "refusing to overwrite" in again.err and "--force" in again.err
    assert target.read_text() == before
    forced = cli(["probe", "--no-docker", "-o", str(target), "--force"])
    assert forced.code == 0
    assert load_machine(target).to_dict()["python"] == saved.python


def test_probe_output_into_a_directory_is_bad_input(cli, tmp_path):
    res = cli(["probe", "--no-docker", "-o", str(tmp_path)])
    assert res.code == 2 and "is a directory" in res.err


def test_probe_bad_timeout(cli):
    res = cli(["probe", "--timeout", "0"])
    assert res.code == 2 and "--timeout 0" in res.err


@pytest.mark.subprocess
def test_plan_without_target_flags_plans_for_this_machine(cli, tmp_path):
    res = cli(["plan", "--json"])
    assert res.code in (0, 1), res.err
    plan = res.json()
    machine = plan["machine"]
    assert machine["python"].rstrip("t") == THIS_PYTHON
    assert machine["how"]["python"].startswith("this interpreter")
    assert machine["os"] == {"darwin": "macos"}.get(platform.system().lower(), platform.system().lower())
    if not [g for g in machine["gpus"] if g.get("serve", True)]:  # no GPU here (this dev machine, CI)
        assert plan["chosen"]["variant"] == "cpu"
        assert plan["chosen"]["python"] == machine["python"]
    # the same machine saved by probe and read back plans the same build
    target = tmp_path / "here.toml"
    assert cli(["probe", "--no-docker", "-o", str(target)]).code == 0
    again = cli(["plan", "--json", "--machine", str(target)]).json()
    assert again["chosen"] == plan["chosen"]


@pytest.mark.subprocess
def test_plan_flags_override_single_probed_facts(cli):
    other = "3.12" if THIS_PYTHON != "3.12" else "3.11"
    plan = cli(["plan", "--json", "--python", other]).json()
    assert plan["machine"]["python"] == other
    assert plan["machine"]["how"]["python"] == "--python"
    assert plan["machine"]["how"]["os"] in ("platform.system()",)  # the rest is still probed


# -- Docker, when an engine is reachable here ---------------------------------------------------
def _engine_version():
    res = run(["docker", "version", "--format", "{{json .Server}}"], timeout=5)
    if not res.ok:
        return None
    server = json.loads(res.stdout or "null")
    return server.get("Version") if isinstance(server, dict) else None


@pytest.mark.docker
def test_docker_engine_as_docker_reports_it(probe_matrix):
    version = _engine_version()
    if version is None:
        pytest.skip("no Docker engine reachable from here")
    m = probe_machine(probe_matrix, docker=True)
    assert m.docker["reachable"] is True and m.docker["version"] == version
    runtimes = json.loads(run(["docker", "info", "--format", "{{json .Runtimes}}"], timeout=5).stdout)
    assert m.docker["runtimes"] == sorted(runtimes)
    assert m.docker["nvidia_runtime"] is ("nvidia" in runtimes)


def test_probe_without_a_readable_matrix_still_probes(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("ENVCHECK_MATRICES", str(tmp_path / "missing"))
    res = cli(["probe", "--json", "--no-docker"])
    assert res.code == 0
    assert "probing without the matrix" in res.err
    data = res.json()
    assert "distro" not in data and data["unknown"]["distro"].startswith("no matrix loaded")


def test_probe_with_a_named_matrix_folder_that_is_missing_is_bad_input(cli, tmp_path):
    res = cli(["probe", "--matrices", str(tmp_path / "missing")])
    assert res.code == 2 and "matrix folder not found" in res.err
