"""With ``--lock``, every check's fix agrees with the lock (newcomer6 #6): verify of a CPU venv
against the lock of a CUDA plan said, in one run, "reinstall torch==…+cu130 torchvision==…+cu130"
(the lock check) and "install torchvision==0.28.0+cpu" from /whl/cpu (torchvision_compat: away from
the lock), while cuda_build passed the CPU wheel ("no GPU on this machine").

The facts are a real CPU venv's (tests/fixtures/verify/recorded: torch 2.13.0+cpu, recorded by
`nox -s device`) with the stray torchvision the newcomer had (0.27.0, built for torch 2.12.0 —
pytorch/vision#9174: "operator torchvision::nms does not exist" after installing a torchvision of
another torch)."""

from __future__ import annotations

import copy
import json
import re

import pytest

from tests.conftest import ROOT, run_cli
from tests.verify.test_numpy_plan import verify_facts as verify

RECORDED = ROOT / "tests" / "fixtures" / "verify" / "recorded" / "dev-cpu-x86_64-torch-2.13.0-cpu.json"
NMS = "operator torchvision::nms does not exist"


@pytest.fixture(scope="module")
def facts():
    doc = json.loads(RECORDED.read_text())
    f = doc["packages"] if "packages" in doc else doc["facts"]["packages"]
    f["torchvision"] = [{"name": "torchvision", "version": "0.27.0", "installer": "pip",
                         "requires": ["numpy", "torch (==2.12.0)"], "location": doc["packages"]["torch"][0].get("location")}]
    doc["runs"]["torchvision_compat"] = {"outcome": "error", "seconds": 0.02,
                                         "error": {"type": "RuntimeError", "message": NMS}}
    return doc


def lock_for(tmp_path, *argv):
    out = tmp_path / "lock"
    r = run_cli(["plan", "--os", "linux", "--python", "3.11", *argv, "--format", "lock", "-o", str(out)])
    assert r.code == 0, r.err
    return str(out / "envcheck.lock.toml")


def pins(fix):
    """Every ``name==version`` a fix tells to install."""
    return set(re.findall(r"\b(torch(?:vision|audio)?)==([\w.+]+)", fix))


def test_every_fix_agrees_with_a_cuda_lock(tmp_path, facts):
    lock = lock_for(tmp_path, "--gpu", "RTX 4090")
    r, checks = verify(tmp_path, copy.deepcopy(facts), "--lock", lock)
    assert r.code == 1
    lock_pins = pins(checks["lock"]["fix"])
    assert ("torchvision", next(v for n, v in lock_pins if n == "torchvision")) in lock_pins
    assert all("+cu" in v for _, v in lock_pins), lock_pins
    for name, c in checks.items():
        said = pins(c["fix"])
        assert said <= lock_pins, (name, c["fix"])  # never a pin the lock does not have
    assert checks["torchvision_compat"]["status"] == "fail"
    assert pins(checks["torchvision_compat"]["fix"]) == lock_pins
    assert NMS in checks["torchvision_compat"]["detail"] or "torchvision" in checks["torchvision_compat"]["detail"]
    # a lock pinning a CUDA build: the CPU wheel fails cuda_build, and its fix is the lock's pins
    build = checks["cuda_build"]
    assert build["status"] == "fail" and "pins a GPU build" in build["detail"], build
    assert pins(build["fix"]) and pins(build["fix"]) <= lock_pins, build


def test_without_a_lock_the_fixes_are_the_resolvers_for_this_machine(tmp_path, facts):
    """The same facts without --lock: cuda_build passes (no GPU here) and the companion's fix keeps
    the installed CPU torch (its pair from /whl/cpu) — the lock alone changes the answer."""
    r, checks = verify(tmp_path, copy.deepcopy(facts))
    assert checks["cuda_build"]["status"] == "pass"
    assert ("torchvision", "0.28.0+cpu") in pins(checks["torchvision_compat"]["fix"])


def test_a_cpu_lock_the_venv_matches_but_a_stray_companion(tmp_path, facts):
    """A CPU lock: cuda_build passes the CPU wheel; the companion's fix is the lock's torchvision."""
    lock = lock_for(tmp_path, "--backend", "cpu", "--torch", "2.13.0")
    r, checks = verify(tmp_path, copy.deepcopy(facts), "--lock", lock)
    assert checks["cuda_build"]["status"] == "pass"
    assert ("torchvision", "0.28.0+cpu") in pins(checks["lock"]["fix"])
    assert pins(checks["torchvision_compat"]["fix"]) <= pins(checks["lock"]["fix"])
