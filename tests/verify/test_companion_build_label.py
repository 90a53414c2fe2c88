"""``verify --lock`` compares the whole pinned version of a companion, local label included
(newcomer5 #1): torchvision 0.28.0 — PyPI's default wheel, a CUDA 13 build that bundles
libcudart.so.13 — is not the ``torchvision==0.28.0+cpu`` a CPU lock pins, although both are release
0.28.0. This is the most common real breakage: ``pip install torchvision`` after a ``+cpu`` torch
(pytorch/vision#9174 "operator torchvision::nms does not exist"; ultralytics/yolov5#11149).
And torchvision_compat's cause compares like with like: the same release of another build is
said to be another build, never "built for torch 2.13.0, but the torch loaded is 2.13.0+cpu".

Facts are recorded from a real venv (torch 2.13.0+cpu) and replayed with the companion the
newcomer installed (its recorded metadata: ``Requires-Dist: torch (==2.13.0)``)."""

from __future__ import annotations

import copy

import pytest

from envcheck.verify.facts import same_build
from tests.conftest import run_cli
from tests.verify.test_numpy_plan import verify_facts as verify

pytestmark = pytest.mark.subprocess  # a real venv with real torch

NMS = "operator torchvision::nms does not exist"


@pytest.fixture(scope="module")
def recorded(torch_venv):
    r = run_cli(["verify", "--python", str(torch_venv), "--checks", "import_torch", "--json"])
    doc = r.json()
    assert doc["facts"]["runs"]["import_torch"]["data"]["version"] == "2.13.0+cpu"
    return doc


@pytest.fixture(scope="module")
def cpu_lock(tmp_path_factory, recorded):
    out = tmp_path_factory.mktemp("lock")
    py = recorded["facts"]["python"]["version"].rsplit(".", 1)[0]
    r = run_cli(["plan", "--os", "linux", "--python", py, "--torch", "2.13.0", "--backend", "cpu",
                 "--format", "lock", "-o", str(out)])
    assert r.code == 0, r.err
    text = (out / "envcheck.lock.toml").read_text()
    assert 'torchvision = "0.28.0+cpu"' in text
    return out / "envcheck.lock.toml"


def with_torchvision(doc, version: str, nms_error: bool):
    d = copy.deepcopy(doc)
    f = d["facts"]
    f["packages"]["torchvision"] = [{"name": "torchvision", "version": version, "installer": "pip",
                                     "requires": ["numpy", "torch (==2.13.0)"],
                                     "location": f["packages"]["torch"][0].get("location")}]
    if nms_error:
        f["runs"]["torchvision_compat"] = {"outcome": "error", "seconds": 0.02,
                                           "error": {"type": "RuntimeError", "message": NMS}}
    else:
        f["runs"]["torchvision_compat"] = {"outcome": "ok", "seconds": 0.02, "data": {
            "version": version, "nms": [{"device": "cpu", "keep": [0, 2], "expected": [0, 2]}]}}
    return d


def test_a_companion_without_the_locks_label_differs(tmp_path, recorded, cpu_lock):
    r, checks = verify(tmp_path, with_torchvision(recorded, "0.28.0", nms_error=True),
                       "--lock", str(cpu_lock), "--checks", "import_torch,torchvision_compat,lock")
    assert r.code == 1
    lock = checks["lock"]
    assert lock["status"] == "fail", lock
    assert "torchvision: lock 0.28.0+cpu, installed 0.28.0" in lock["detail"], lock
    assert "torchvision==0.28.0+cpu" in lock["fix"], lock


def test_another_label_differs_too(tmp_path, recorded, cpu_lock):
    _, checks = verify(tmp_path, with_torchvision(recorded, "0.28.0+cu130", nms_error=False),
                       "--lock", str(cpu_lock), "--checks", "import_torch,torchvision_compat,lock")
    assert checks["lock"]["status"] == "fail", checks["lock"]
    assert "installed 0.28.0+cu130" in checks["lock"]["detail"]
    assert "+cu130 build" in checks["lock"]["detail"]


def test_the_locks_own_build_matches(tmp_path, recorded, cpu_lock):
    _, checks = verify(tmp_path, with_torchvision(recorded, "0.28.0+cpu", nms_error=False),
                       "--lock", str(cpu_lock), "--checks", "import_torch,torchvision_compat,lock")
    assert checks["lock"]["status"] in ("pass", "warn"), checks["lock"]
    assert "torchvision" not in checks["lock"]["detail"], checks["lock"]


def test_the_cause_compares_builds_not_releases(tmp_path, recorded):
    _, checks = verify(tmp_path, with_torchvision(recorded, "0.28.0", nms_error=True),
                       "--checks", "import_torch,torchvision_compat")
    tv = checks["torchvision_compat"]
    assert tv["status"] == "fail"
    assert "but the torch loaded is 2.13.0+cpu" not in tv["detail"], tv["detail"]
    assert "another build" in tv["detail"] and "the +cpu build" in tv["detail"], tv["detail"]


@pytest.mark.parametrize("have,want,same", [
    ("0.28.0", "0.28.0+cpu", False), ("0.28.0+cu130", "0.28.0+cpu", False), ("0.28.0+cpu", "0.28.0+cpu", True),
    ("0.23.0+rocm6.4.1.git1234", "0.23.0+rocm6.4.1", True), ("0.23.0+rocm6.41", "0.23.0+rocm6.4", False),
    ("0.28.0+cu130", "0.28.0", True)])
def test_same_build(have, want, same):
    assert same_build(have, want) is same
