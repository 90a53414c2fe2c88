"""The fleet use cases (envcheck.app.fleet) called as a library: typed results, nothing printed,
the files `fleet merge` writes. Node reports come from recorded facts of real machines and public
reports (tests/fleet/conftest.py); the NCCL drift stands for github.com/NVIDIA/nccl/issues/354."""

from __future__ import annotations

import copy
import json

import pytest

from envcheck.app.fleet import (
    DiffResult, K8sRequest, MergeRequest, MergeResult, fleet_diff, fleet_merge, k8s_job, slurm_job, slurm_submit)
from envcheck.errors import OutputExistsError, UsageError
from envcheck.fleet.slurm import SlurmOptions


def _fleet(d, base, nodes, nccl_on=None):
    d.mkdir()
    for node in nodes:
        doc = copy.deepcopy(base)
        doc["host"] = {"id": node, "id_from": "test", "shm_bytes": 64 << 30}
        if nccl_on:  # C01 records no NCCL: every node gets one, one node another
            doc["facts"]["runs"]["cuda_build"]["data"]["nccl"] = "2.21.5" if node == nccl_on else "2.20.5"
        (d / f"{node}.json").write_text(json.dumps(doc))
    return d


def test_merge_is_typed_and_writes_what_was_asked(tmp_path, case_reports, capsys):
    d = _fleet(tmp_path / "r", case_reports["C01"], ["gpu001", "gpu002", "gpu003"], nccl_on="gpu002")
    save, prom = tmp_path / "fleet.json", tmp_path / "f.prom"
    skipped = []
    result = fleet_merge(MergeRequest(inputs=[str(d)], save=save, prometheus=prom, expect="gpu[001-004]"),
                         on_skip=lambda path, why: skipped.append(path))
    assert isinstance(result, MergeResult) and skipped == []
    assert result.document["nodes_total"] == 3 and result.document["missing"] == "gpu004"
    (nccl,) = [x for x in result.document["drift"] if x["fact"] == "nccl"]
    assert [o["nodes"] for o in nccl["outliers"]] == ["gpu002"]
    assert result.exit_code == 1
    assert json.loads(save.read_text())["nodes_total"] == 3
    assert "envcheck_fleet_missing_nodes 1" in prom.read_text()
    assert capsys.readouterr() == ("", "")
    save.write_text("mine")
    with pytest.raises(OutputExistsError):
        fleet_merge(MergeRequest(inputs=[str(d)], save=save))
    assert save.read_text() == "mine"


def test_a_truncated_report_is_skipped_through_the_callback(tmp_path, case_reports):
    d = _fleet(tmp_path / "r", case_reports["C06"], ["n1", "n2"])
    (d / "n3.json").write_text(json.dumps(case_reports["C06"])[:200])  # the node died writing it
    skipped = []
    result = fleet_merge(MergeRequest(inputs=[str(d)]), on_skip=lambda path, why: skipped.append(path.name))
    assert skipped == ["n3.json"] and result.exit_code == 2


@pytest.mark.parametrize("expect", ["gpu[003-001]", ","])
def test_bad_expect_is_bad_input(tmp_path, case_reports, expect):
    d = _fleet(tmp_path / "r", case_reports["C06"], ["n1"])
    with pytest.raises(UsageError, match="--expect"):
        fleet_merge(MergeRequest(inputs=[str(d)], expect=expect))


def test_diff_two_nodes(tmp_path, case_reports):
    d = _fleet(tmp_path / "r", case_reports["C01"], ["a", "b"], nccl_on="b")
    result = fleet_diff(str(d / "a.json"), str(d / "b.json"))
    assert isinstance(result, DiffResult) and result.changed and result.exit_code == 1
    assert [f["fact"] for f in result.document["facts"]] == ["nccl"]
    same = fleet_diff(str(d / "a.json"), str(d / "a.json"))
    assert not same.changed and same.exit_code == 0


def test_slurm_job_and_its_checks():
    script = slurm_job(SlurmOptions(nodelist="gpu[001-004]", tier="quick"))
    assert "#SBATCH --nodelist=gpu[001-004]" in script and "--tier quick" in script
    # a prolog names envcheck by absolute path (slurmd's PATH is minimal), so the test gives one
    assert "srun" not in slurm_job(SlurmOptions(nodes=2, envcheck="/opt/envcheck/bin/envcheck"), prolog=True)
    with pytest.raises(UsageError, match="--nodes 0"):
        slurm_job(SlurmOptions(nodes=0))
    with pytest.raises(UsageError, match="--nodelist gpu.3-1.: range runs backwards"):
        slurm_job(SlurmOptions(nodelist="gpu[3-1]"))
    with pytest.raises(UsageError, match="one week"):
        slurm_submit("#!/bin/sh\n", wait=True, timeout=float("inf"))


def test_k8s_job():
    text = k8s_job(K8sRequest(nodes=3, image="team/torch:prod", node_selector={"gpu": "h100"}))
    assert "completions: 3" in text and "team/torch:prod" in text and "nvidia.com/gpu" in text
    with pytest.raises(UsageError, match="--nodes 0"):
        k8s_job(K8sRequest(nodes=0, image="x"))
    with pytest.raises(UsageError, match="--gpus-per-node -1"):
        k8s_job(K8sRequest(nodes=1, image="x", gpus_per_node=-1))
