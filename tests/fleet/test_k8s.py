"""fleet k8s: the Indexed Job is checked against the official Kubernetes API models (the
`kubernetes` Python client deserializes it into V1Job; no cluster needed)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

kubernetes = pytest.importorskip("kubernetes")
yaml = pytest.importorskip("yaml")


def as_job(text, kinds=("Job",)):
    """Deserialize the YAML documents into the client's models (V1Job, V1ConfigMap) the way the
    client reads API answers; returns the Job (and, with two kinds, the ConfigMap too)."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    assert [d["kind"] for d in docs] == list(kinds)
    models = [model(d, "V1" + d["kind"]) for d in docs]
    return models[-1] if len(models) == 1 else models


def model(data, name):
    from kubernetes.client import ApiClient

    class Response:  # ApiClient.deserialize reads .data
        def __init__(self, obj):
            self.data = json.dumps(obj)

    import inspect

    client = ApiClient()
    if "content_type" in inspect.signature(client.deserialize).parameters:
        job = client.deserialize(json.dumps(data), name, "application/json")  # client ≥ 34
    else:
        job = client.deserialize(Response(data), name)
    # a round trip drops every key the models do not know: nothing may be lost
    assert ApiClient().sanitize_for_serialization(job) == data
    return job


def test_indexed_job_for_nvidia_nodes():
    r = run_cli(["fleet", "k8s", "--nodes", "8", "--image", "team/torch:prod", "--gpus-per-node", "8"])
    assert r.code == 0, r.err
    job = as_job(r.out)
    assert job.kind == "Job" and job.api_version == "batch/v1"
    spec = job.spec
    assert (spec.completion_mode, spec.completions, spec.parallelism) == ("Indexed", 8, 8)
    pod = spec.template.spec
    anti = pod.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution[0]
    assert anti.topology_key == "kubernetes.io/hostname"
    assert anti.label_selector.match_labels == {"envcheck.io/fleet": "envcheck-fleet"}
    assert spec.template.metadata.labels["envcheck.io/fleet"] == "envcheck-fleet"
    assert pod.topology_spread_constraints[0].max_skew == 1
    c = pod.containers[0]
    assert c.image == "team/torch:prod"
    assert c.resources.limits == {"nvidia.com/gpu": "8"}  # a quantity is a string
    shm = next(v for v in pod.volumes if v.name == "dshm")
    assert shm.empty_dir.medium == "Memory"
    assert any(m.mount_path == "/dev/shm" for m in c.volume_mounts)
    assert pod.restart_policy == "Never"
    env = {e.name: e for e in c.env}
    assert env["NODE_NAME"].value_from.field_ref.field_path == "spec.nodeName"
    assert "envcheck verify --tier full" in c.command[-1] and "ENVCHECK-REPORT" in c.command[-1]
    assert "kubectl logs" in r.out  # how to gather the reports


def test_amd_from_the_plan_with_a_pvc(tmp_path):
    plan = tmp_path / "plan"
    assert run_cli(["plan", "--gpu", "mi300x", "--backend", "rocm6.3", "--torch", "2.7.0", "--python", "3.12",
                    "--format", "lock", "-o", str(plan)]).code == 0, "plan"
    r = run_cli(["fleet", "k8s", "--nodes", "2", "--lock", str(plan / "envcheck.lock.toml"), "--pvc", "reports",
                 "--tier", "quick", "--node-selector", "amd.com/gpu.family=AI"])
    assert r.code == 0, r.err
    cm, job = as_job(r.out, ("ConfigMap", "Job"))
    assert cm.data["envcheck.lock.toml"] == (plan / "envcheck.lock.toml").read_text()
    pod = job.spec.template.spec
    assert next(v for v in pod.volumes if v.name == "lock").config_map.name == cm.metadata.name
    assert "--lock /etc/envcheck/envcheck.lock.toml" in pod.containers[0].command[-1]
    assert pod.containers[0].image == "envcheck/torch:2.7.0-rocm6.3"
    assert pod.containers[0].resources.limits == {"amd.com/gpu": "1"}
    assert pod.node_selector == {"amd.com/gpu.family": "AI"}
    claim = next(v for v in pod.volumes if v.name == "reports")
    assert claim.persistent_volume_claim.claim_name == "reports"
    assert '--report "/reports/$JOB_NAME/"' in pod.containers[0].command[-1]
    assert "--tier quick" in pod.containers[0].command[-1]


@pytest.mark.parametrize("argv", [["--nodes", "0", "--image", "x"], ["--nodes", "2"],
                                  ["--nodes", "2", "--image", "x", "--node-selector", "novalue"]])
def test_bad_input(argv):
    r = run_cli(["fleet", "k8s", *argv])
    assert r.code == 2 and "Traceback" not in r.err
