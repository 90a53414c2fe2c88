"""verify --distributed under a real torchrun: two `torchrun --nnodes 2 --nproc-per-node 1
--rdzv-backend c10d` processes on 127.0.0.1 act as two nodes (gloo), each rank writes its report,
and fleet merge reads them. Slow and missing ranks are shown from those real reports changed."""

from __future__ import annotations

import copy
import json
import os
import socket
import subprocess

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.subprocess  # real interpreters, venvs, tools (tests/README.md)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def two_node_run(envcheck_torch_venv, tmp_path_factory):
    """The issue's example, run twice (two "nodes": ENVCHECK_NODE names them) in one folder."""
    work = tmp_path_factory.mktemp("torchrun")
    port = free_port()
    procs = []
    for node in ("nodeA", "nodeB"):
        env = {**os.environ, "PATH": f"{envcheck_torch_venv}{os.pathsep}{os.environ['PATH']}", "ENVCHECK_NODE": node}
        for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
            env.pop(var, None)
        procs.append(subprocess.Popen(
            [str(envcheck_torch_venv / "torchrun"), "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend", "c10d",
             "--rdzv-endpoint", f"127.0.0.1:{port}", "--no-python",
             "envcheck", "verify", "--distributed", "--tier", "quick", "--report", "reports/"],
            cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=300)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("torchrun did not finish in 300 s")
    return work, procs, outs


def test_two_torchrun_nodes_each_write_their_rank_report(two_node_run):
    work, procs, outs = two_node_run
    assert [p.returncode for p in procs] == [0, 0], "\n".join(o[-3000:] for o in outs)
    files = sorted(p.name for p in (work / "reports").iterdir())
    assert files in (["nodeA-rank0.json", "nodeB-rank1.json"], ["nodeA-rank1.json", "nodeB-rank0.json"])
    for name in files:
        doc = json.loads((work / "reports" / name).read_text())
        dist = doc["distributed"]
        assert dist["backend"] == "gloo" and dist["world_size"] == 2 and dist["error"] is None
        assert dist["all_reduce"]["ok"] and dist["all_gather"]["ranks"] == [0, 1]
        assert dist["bandwidth"]["busbw_gbps"] > 0 and len(dist["compute_seconds"]) == 2
        check = next(c for c in doc["checks"] if c["name"] == "collectives")
        assert check["status"] == "pass" and "gloo all_reduce/all_gather across 2 ranks" in check["detail"]
        assert doc["host"]["world_size"] == 2 and doc["host"]["rank"] == dist["rank"]


def test_merge_shows_the_ranks(two_node_run, tmp_path):
    work, _, _ = two_node_run
    r = run_cli(["fleet", "merge", str(work / "reports"), "--json"])
    assert r.code == 0, r.out + r.err
    ranks = r.json()["ranks"]
    assert (ranks["world_size"], ranks["ranks"], ranks["missing"], ranks["failed"], ranks["slow"]) == (2, 2, [], [], [])
    # the same reports, rank 1 ten times slower and rank 0 gone: merge names both
    docs = [json.loads(p.read_text()) for p in sorted((work / "reports").iterdir())]
    slow = next(copy.deepcopy(d) for d in docs if d["host"]["rank"] == 1)
    slow["distributed"]["bandwidth"]["busbw_gbps"] /= 10
    c = slow["distributed"]["compute_seconds"][0]
    gathered = [c, 10 * c, c, c]  # every rank gathers the same list: rank 1 took ten times longer
    slow["distributed"]["compute_seconds"] = gathered
    (tmp_path / "r1.json").write_text(json.dumps(slow))
    other = next(copy.deepcopy(d) for d in docs if d["host"]["rank"] == 0)
    other["host"]["rank"], other["host"]["id"] = 2, "nodeC"
    other["host"]["world_size"] = slow["host"]["world_size"] = 4
    other["distributed"]["compute_seconds"] = gathered
    (tmp_path / "r2.json").write_text(json.dumps(other))
    (tmp_path / "r1.json").write_text(json.dumps(slow))
    third = copy.deepcopy(other)
    third["host"]["rank"], third["host"]["id"] = 3, "nodeD"
    (tmp_path / "r3.json").write_text(json.dumps(third))
    r = run_cli(["fleet", "merge", str(tmp_path)])
    assert r.code == 1
    assert "missing ranks: 0" in r.out
    assert "slow rank 1" in r.out and "bus bandwidth" in r.out and "local compute" in r.out


def test_merge_counts_hosts_not_ranks(two_node_run, tmp_path):
    """Two ranks on one host are one node (a `--nproc-per-node 2` run writes a report per rank):
    the summary and --json count hosts and ranks apart (they counted each rank as a node)."""
    work, _, _ = two_node_run
    r = run_cli(["fleet", "merge", str(work / "reports"), "--json"])
    assert (r.json()["nodes_total"], r.json()["hosts_total"], r.json()["ranks_total"]) == (2, 2, 2)
    for p in sorted((work / "reports").iterdir()):  # the same real reports, both ranks on host "nodeA"
        doc = json.loads(p.read_text())
        doc["host"]["id"] = "nodeA"
        (tmp_path / p.name).write_text(json.dumps(doc))
    r = run_cli(["fleet", "merge", str(tmp_path), "--json"])
    assert (r.json()["nodes_total"], r.json()["hosts_total"], r.json()["ranks_total"]) == (2, 1, 2)
    r = run_cli(["fleet", "merge", str(tmp_path)])
    assert r.code == 0 and r.out.splitlines()[0] == "envcheck fleet — 1 node, 2 reports (2 ranks): 2 pass, 0 fail"


def _rank_env(venv, rank, world, port):
    env = {**os.environ, "PATH": f"{venv}{os.pathsep}{os.environ['PATH']}", "RANK": str(rank),
           "WORLD_SIZE": str(world), "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
           "ENVCHECK_NODE": "lonely"}
    return env


def test_a_rank_whose_peer_never_comes_fails_within_the_timeout(envcheck_torch_venv, tmp_path):
    """WORLD_SIZE 2 but only rank 0 starts: the collective check fails after --timeout (not a hang),
    the report says so, and merge names rank 1 as missing and rank 0 as failed."""
    proc = subprocess.run(["envcheck", "verify", "--distributed", "--checks", "import_torch", "--timeout", "5",
                           "--report", "reports/"], cwd=tmp_path, env=_rank_env(envcheck_torch_venv, 0, 2, free_port()),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "reports" / "lonely-rank0.json").read_text())
    check = next(c for c in doc["checks"] if c["name"] == "collectives")
    assert check["status"] == "fail" and doc["distributed"]["error"], check
    r = run_cli(["fleet", "merge", str(tmp_path / "reports"), "--json"])
    ranks = r.json()["ranks"]
    assert r.code == 1 and ranks["missing"] == [1] and [f["rank"] for f in ranks["failed"]] == [0]


def test_collectives_without_torch_fail_with_the_reason(tmp_path, monkeypatch):
    """The interpreter under test has no torch: the check fails and says so (exit 1, not a crash)."""
    import importlib.util
    import sys

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("the test interpreter has torch")
    for k, v in _rank_env("", 0, 1, free_port()).items():
        if k != "PATH":
            monkeypatch.setenv(k, v)
    r = run_cli(["verify", "--python", sys.executable, "--distributed", "--checks", "import_torch", "--timeout", "20",
                 "--report", str(tmp_path / "r.json"), "--json"])
    assert r.code == 1, r.err
    check = next(c for c in r.json()["checks"] if c["name"] == "collectives")
    assert check["status"] == "fail" and "import torch failed" in check["detail"]


def test_a_rank_that_fails_a_check_lets_the_others_write_their_reports(envcheck_torch_venv, tmp_path):
    """One rank's failed check (exit 1) made torchrun stop the other ranks before they wrote their
    reports, and merge called them crashed (newcomer3 #4). Under torchrun with --report every rank
    exits 0 once its report is written; the reports carry the failure and merge exits 1. The failure
    here: a lock for another torch (2.12.0) than the venv's 2.13.0."""
    lock_dir = tmp_path / "lock"
    r = run_cli(["plan", "--backend", "cpu", "--torch", "2.12.0", "--python", "3.11", "--os", "linux",
                 "--format", "lock", "-o", str(lock_dir)])
    assert r.code == 0, r.err
    env = {**os.environ, "PATH": f"{envcheck_torch_venv}{os.pathsep}{os.environ['PATH']}", "ENVCHECK_NODE": "n1"}
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        env.pop(var, None)
    p = subprocess.run([str(envcheck_torch_venv / "torchrun"), "--nnodes", "1", "--nproc-per-node", "2",
                        "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{free_port()}", "--no-python",
                        "envcheck", "verify", "--distributed", "--tier", "quick",
                        "--lock", str(lock_dir / "envcheck.lock.toml"), "--report", "reports/"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert sorted(x.name for x in (tmp_path / "reports").iterdir()) == ["n1-rank0.json", "n1-rank1.json"]
    for f in (tmp_path / "reports").iterdir():
        lock = next(c for c in json.loads(f.read_text())["checks"] if c["name"] == "lock")
        assert lock["status"] == "fail", lock
    merged = run_cli(["fleet", "merge", str(tmp_path / "reports")])
    assert merged.code == 1 and "missing ranks" not in merged.out, merged.out
