"""fleet slurm: the batch script and prolog as text, and a REAL Slurm: munge + slurmctld + two
slurmd (node1, node2) on 127.0.0.1 (tests/fleet/slurm_cluster.py). The generated script is
submitted with `envcheck fleet slurm --submit --wait`; srun runs verify on both nodes with a real
torch, and the merged report is checked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import run_cli
from tests.fleet import slurm_cluster

pytestmark = pytest.mark.subprocess  # real interpreters, venvs, tools (tests/README.md)


def test_batch_script_text():
    r = run_cli(["fleet", "slurm", "--partition", "gpu", "--nodelist", "gpu[001-016]", "--tier", "quick",
                 "--lock", "/shared/envcheck.lock.toml", "--reports", "/shared/reports"])
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "#!/bin/bash"
    for want in ("#SBATCH --partition=gpu", "#SBATCH --nodelist=gpu[001-016]", "#SBATCH --ntasks-per-node=1",
                 "#SBATCH --time=00:10:00"):
        assert want in lines
    assert 'srun --ntasks-per-node=1 --kill-on-bad-exit=0 "$ENVCHECK" verify --tier quick --lock /shared/envcheck.lock.toml \\' in lines
    assert ('"$ENVCHECK" fleet merge "$REPORTS" --expect "$NODES" --save "$REPORTS/fleet.json" '
            '--lock /shared/envcheck.lock.toml') in lines
    assert ('if "$ENVCHECK" fleet merge "$REPORTS" --expect "$NODES" --junit "$REPORTS/fleet.xml" '
            '--lock /shared/envcheck.lock.toml \\') in lines
    assert 'NODES=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd, -)' in lines
    proc = subprocess.run(["bash", "-n"], input=r.out, text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def plain_envcheck(tmp_path_factory):
    """envcheck as the README installs it: `pip install .` into a fresh venv, no extra (no junitparser)."""
    from tests.conftest import ROOT

    venv = tmp_path_factory.mktemp("plain") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(ROOT)],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        pytest.fail(f"pip install . failed:\n{proc.stdout}\n{proc.stderr}")
    probe = subprocess.run([str(venv / "bin" / "python"), "-c", "import junitparser"], capture_output=True)
    assert probe.returncode != 0, "the plain install has junitparser: the test would prove nothing"
    return str(venv / "bin" / "envcheck")


def _envcheck_exe(tmp_path, junit, plain):
    """The script's $ENVCHECK: the plain install, or this checkout with the 'junit' extra (the test venv)."""
    if not junit:
        return plain
    exe = tmp_path / "envcheck"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m envcheck "$@"\n')
    exe.chmod(0o755)
    return str(exe)


@pytest.mark.parametrize("junit", [False, True], ids=["plain-install", "junit-extra"])
def test_the_scripts_merge_gives_a_verdict_and_fleet_json_without_the_junit_extra(tmp_path, case_reports, junit,
                                                                                   request):
    """newcomer6 #1: the job ran `fleet merge … --save fleet.json --junit fleet.xml`; after a plain
    `pip install .` (no 'junit' extra) --junit exits 2 before merging: no fleet.json, no verdict.
    The script's own merge lines, run by a real `pip install .` (a venv without junitparser), still
    write fleet.json and exit with the merge's verdict, and say why there is no JUnit XML; with the
    extra, both."""
    import copy

    exe = _envcheck_exe(tmp_path, junit, None if junit else request.getfixturevalue("plain_envcheck"))
    made = subprocess.run([exe, "fleet", "slurm", "--nodes", "2"], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    # said up front, when the install writing the script lacks the extra
    assert ("'junit' extra" in made.stderr and "junitparser" in made.stderr) is (not junit), made.stderr
    lines = made.stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("NODES="))
    reports = tmp_path / "reports"
    reports.mkdir()
    for node in ("node01", "node02"):
        doc = copy.deepcopy(case_reports["C16"])
        doc["host"] = {"id": node, "id_from": "test"}
        (reports / f"{node}.json").write_text(json.dumps(doc))
    tail = "\n".join(['set -u', f"ENVCHECK={exe}", f"REPORTS={reports}", "NODES=node01,node02", *lines[start + 1:]])
    run = subprocess.run(["bash", "-c", tail], capture_output=True, text=True, timeout=300)
    expected = subprocess.run([exe, "fleet", "merge", str(reports)], capture_output=True, text=True, timeout=120)
    assert run.returncode == expected.returncode == 1, (run.stdout, run.stderr)  # C16 fails a check
    saved = json.loads((reports / "fleet.json").read_text())
    assert saved["nodes_total"] == 2
    assert (reports / "fleet.xml").exists() is junit
    if junit:
        assert f"fleet: {reports}/fleet.xml (JUnit)" in run.stdout
    else:
        said = next(ln for ln in run.stdout.splitlines() if ln.startswith("fleet: no JUnit XML: "))
        assert "'junit' extra" in said and "junitparser" in said


def test_prolog_text():
    r = run_cli(["fleet", "slurm", "--prolog", "--python", "/opt/venv/bin/python",
                 "--envcheck", "/opt/envcheck/bin/envcheck"])
    assert r.code == 0, r.err
    assert "ENVCHECK=/opt/envcheck/bin/envcheck\n" in r.out
    assert "verify --tier quick --python /opt/venv/bin/python --force --report" in r.out
    assert subprocess.run(["bash", "-n"], input=r.out, text=True).returncode == 0


@pytest.mark.parametrize("argv, message", [(["--nodes", "0"], "at least 1"), (["--nodelist", "gpu[3-1]"], "backwards"),
                                           (["--wait"], "--wait needs --submit"),
                                           (["--submit", "--timeout", "nan"], "--timeout nan"),
                                           (["--nodes", "2", "--nodelist", "a"], "not allowed with")])
def test_bad_input(argv, message):
    r = run_cli(["fleet", "slurm", *argv])
    assert r.code == 2 and message in r.err


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from slurm_cluster.running(tmp_path_factory.mktemp("slurm"))


def test_real_slurm_job_verifies_both_nodes_and_merges(cluster, envcheck_torch_venv, tmp_path):
    env = {**cluster.env, "PATH": f"{envcheck_torch_venv}{os.pathsep}{os.environ['PATH']}"}
    reports = tmp_path / "reports"
    proc = subprocess.run([str(envcheck_torch_venv / "envcheck"), "fleet", "slurm", "--nodes", "2", "--tier", "quick",
                           "--reports", str(reports), "--submit", "--wait", "--timeout", "400"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=450)
    job_id = proc.stdout.strip().splitlines()[0]
    out = (tmp_path / f"envcheck-fleet-{job_id}.out").read_text()
    assert proc.returncode == 0, proc.stdout + proc.stderr + out
    job = reports / job_id
    assert sorted(p.name for p in job.glob("node*.json")) == ["node1.json", "node2.json"]
    for node in ("node1", "node2"):
        doc = json.loads((job / f"{node}.json").read_text())
        assert doc["host"]["id"] == node and doc["host"]["id_from"] == "SLURMD_NODENAME"
        assert doc["host"]["slurm_job_id"] == job_id
        assert doc["tier"] == "quick" and doc["status"] == "pass"
        assert doc["facts"]["runs"]["import_torch"]["data"]["version"] == "2.13.0+cpu"
    fleet = json.loads((job / "fleet.json").read_text())
    assert (fleet["nodes_total"], fleet["passed"], fleet["drift"], fleet["skipped"]) == (2, 2, [], [])
    assert (fleet["expected"], fleet["missing"]) == (2, "")  # the job's node list, all reported
    assert "envcheck fleet — 2 nodes: 2 pass, 0 fail" in out
    from junitparser import JUnitXml

    suites = {s.name for s in JUnitXml.fromfile(str(job / "fleet.xml"))}
    assert suites == {"node1", "node2", "fleet-drift"}
    # merging again (fleet.json now lies beside the reports) reads the same fleet
    again = run_cli(["fleet", "merge", str(job), "--json"])
    assert again.code == 0 and again.json()["nodes_total"] == 2


# newcomer3 #9: when sbatch itself fails, --wait reported "the job ended with exit code 1 (its log:
# envcheck-fleet-<job id>.out)" for a job that never existed. sbatch's own failure is a one-line
# error with its message, with or without --wait; a job's exit code is said only for a job.

@pytest.mark.parametrize("wait", [["--wait"], []])
def test_sbatch_without_a_configuration_is_sbatchs_error_not_a_job(tmp_path, monkeypatch, wait):
    if shutil.which("sbatch") is None:
        pytest.skip("sbatch not installed (.ci/run installs slurm-wlm)")
    empty = tmp_path / "slurm.conf"
    empty.write_text("")  # the real sbatch fails before any job exists ("ClusterName needs to be specified")
    monkeypatch.setenv("SLURM_CONF", str(empty))
    monkeypatch.chdir(tmp_path)
    r = run_cli(["fleet", "slurm", "--partition", "gpu", "--nodes", "2", "--submit", *wait])
    assert r.code == 2, r.out + r.err
    assert r.err.startswith("envcheck: error: --submit: sbatch failed (exit 1), no job was submitted: sbatch")
    assert "ClusterName needs to be specified" in r.err and r.err.count("\n") == 1
    assert "job" not in r.err.split("no job was submitted")[1] and "exit code" not in r.err
    assert list(tmp_path.glob("*.out")) == []


def test_a_partition_the_real_cluster_refuses_is_sbatchs_error(cluster, monkeypatch, tmp_path):
    monkeypatch.setenv("SLURM_CONF", cluster.env["SLURM_CONF"])
    monkeypatch.chdir(tmp_path)
    r = run_cli(["fleet", "slurm", "--partition", "nosuch", "--nodes", "1", "--submit", "--wait", "--timeout", "60"])
    assert r.code == 2, r.out + r.err
    assert "--submit: sbatch failed (exit 1), no job was submitted: sbatch: error:" in r.err
    assert "invalid partition" in r.err.lower() and "ended with exit code" not in r.err


# ---------------------------------------------------------------------------------------------
# newcomer M13: the prolog runs as slurmd runs it (root, its own folder, a minimal PATH)


def _run_prolog(text, tmp_path):
    script = tmp_path / "50-envcheck.sh"
    script.write_text(text)
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=300, cwd="/",
                          env={"PATH": "/usr/bin:/bin", "SLURMD_NODENAME": "gpu001"})


@pytest.mark.subprocess
def test_prolog_paths_are_absolute_and_a_missing_envcheck_fails_loudly(tmp_path, monkeypatch):
    """It emitted `ENVCHECK=envcheck` and `DIR=envcheck-reports/prolog`: under slurmd's PATH the
    binary is not found (exit 127, not 1), so the node was never drained — silently — and reports
    went wherever slurmd's folder is. Now both are absolute, resolved when written, and a missing
    envcheck fails the prolog with a line saying so."""
    import os

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ.get('PATH', '')}")
    r = run_cli(["fleet", "slurm", "--prolog", "--python", sys.executable, "--reports", "reps"])
    assert r.code == 0, r.err
    exe = next(ln.split("=", 1)[1] for ln in r.out.splitlines() if ln.startswith("ENVCHECK="))
    assert os.path.isabs(exe) and os.access(exe, os.X_OK), exe
    assert f"DIR={tmp_path / 'reps'}/prolog" in r.out
    # run for real: the interpreter has no torch, so the quick verify fails → exit 1 (drain), report absolute
    p = _run_prolog(r.out, tmp_path)
    assert p.returncode == 1, p.stderr
    assert (tmp_path / "reps" / "prolog" / "gpu001.json").is_file()
    # the binary gone from the node: a loud failure, not a silent pass
    missing = r.out.replace(f"ENVCHECK={exe}", "ENVCHECK=/nonexistent/bin/envcheck")
    p = _run_prolog(missing, tmp_path)
    assert p.returncode == 1 and "/nonexistent/bin/envcheck is missing" in p.stderr


def test_prolog_refuses_an_envcheck_it_cannot_find(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    r = run_cli(["fleet", "slurm", "--prolog"])
    assert r.code == 2 and "--envcheck envcheck: not on PATH here" in r.err, r.err


@pytest.mark.subprocess
def test_prolog_without_python_refuses_an_envcheck_whose_interpreter_has_no_torch(tmp_path):
    """README: envcheck in a venv of its own; the prolog without --python then verifies that venv,
    which has no torch, and Slurm would drain every node (newcomer3 #3). A real launcher whose #!
    names an interpreter without torch (the test venv's) is refused; one with torch (a stand-in
    interpreter that has a 'torch' module) is taken."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("the test interpreter has torch")
    launcher = tmp_path / "bin" / "envcheck"
    launcher.parent.mkdir()
    launcher.write_text(f"#!{sys.executable}\nimport sys\nfrom envcheck.cli import main\nsys.exit(main())\n")
    launcher.chmod(0o755)
    r = run_cli(["fleet", "slurm", "--prolog", "--envcheck", str(launcher)])
    assert r.code == 2 and "has no torch" in r.err and "--python" in r.err, r.err
    assert r.out == ""
    # an interpreter that finds a torch package: a wrapper putting a folder with torch/ on its path
    (tmp_path / "site" / "torch").mkdir(parents=True)
    (tmp_path / "site" / "torch" / "__init__.py").write_text("")
    wrapper = tmp_path / "bin" / "py"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={tmp_path / 'site'} exec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    launcher.write_text(f"#!{wrapper}\n")
    r = run_cli(["fleet", "slurm", "--prolog", "--envcheck", str(launcher)])
    assert r.code == 0 and str(launcher) in r.out, r.err
