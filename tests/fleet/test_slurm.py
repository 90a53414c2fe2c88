"""fleet slurm: the batch script and prolog as text, and a REAL Slurm: munge + slurmctld + two
slurmd (node1, node2) on 127.0.0.1 (tests/fleet/slurm_cluster.py). The generated script is
submitted with `envcheck fleet slurm --submit --wait`; srun runs verify on both nodes with a real
torch, and the merged report is checked."""

from __future__ import annotations

import json
import os
import subprocess

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
            '--junit "$REPORTS/fleet.xml" --lock /shared/envcheck.lock.toml') in lines
    assert 'NODES=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd, -)' in lines
    proc = subprocess.run(["bash", "-n"], input=r.out, text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr


def test_prolog_text():
    r = run_cli(["fleet", "slurm", "--prolog", "--python", "/opt/venv/bin/python"])
    assert r.code == 0
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
    why = slurm_cluster.missing()
    if why:
        pytest.skip(why)
    c = slurm_cluster.Cluster(tmp_path_factory.mktemp("slurm")).start()
    yield c
    c.stop()


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
