"""Fault injection: a stand-in torch that raises in one check, hangs in another, segfaults in a third.

verify must finish (the hung worker is killed after --timeout), report each fault as that check's
result (the signal by name), and run every other check in a fresh worker.
"""

from __future__ import annotations

import threading

import pytest

from tests.verify.conftest import STANDIN

pytestmark = pytest.mark.subprocess  # real interpreters, venvs, tools (tests/README.md)

FAULTS = "probe_allocation=raise,probe_matmul=hang,probe_cudnn_conv=segv"


def run_guarded(cli, args, limit=120.0):
    """Run the CLI in a thread; fail (instead of hanging the suite) if it does not return."""
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", cli(args)), daemon=True)
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"envcheck {' '.join(args)} did not finish within {limit} s"
    return box["r"]


@pytest.fixture
def faulty(monkeypatch, plain_python):
    monkeypatch.setenv("PYTHONPATH", str(STANDIN))
    monkeypatch.setenv("STANDIN_FAULTS", FAULTS)
    return plain_python


def test_hang_segfault_and_exception_are_each_reported(cli, faulty):
    r = run_guarded(cli, ["verify", "--python", faulty, "--timeout", "3", "--skip", "torch_compile", "--json"])
    assert r.code == 1, r.err
    doc = r.json()
    checks = {c["name"]: c for c in doc["checks"]}

    alloc = checks["allocation"]
    assert alloc["status"] == "fail"
    assert "RuntimeError: stand-in torch: probe_allocation fails on purpose" in alloc["detail"]

    mm = checks["matmul"]
    assert mm["status"] == "fail"
    assert "no result within 3 s; the worker was killed" in mm["detail"]
    assert doc["facts"]["runs"]["matmul"]["outcome"] == "timeout"

    conv = checks["cudnn_conv"]
    assert conv["status"] == "fail"
    assert "SIGSEGV" in conv["detail"]
    assert doc["facts"]["runs"]["cudnn_conv"] == {**doc["facts"]["runs"]["cudnn_conv"], "outcome": "crash",
                                                  "signal": "SIGSEGV"}

    # the checks after each fault ran in fresh workers: one to start, one after the hang, one after the crash
    assert doc["facts"]["collector"]["workers"] == 3
    assert checks["torchvision_compat"]["status"] == "skip"
    assert checks["torchvision_compat"]["detail"] == "torchvision is not installed"
    assert checks["wsl_libhsa"]["detail"] == "not running under WSL"
    assert checks["import_torch"]["status"] == "pass"
    assert "2.13.0+cpu" in checks["import_torch"]["detail"]
    # the stand-in has no torch.distributed: an ordinary exception, reported as such
    assert checks["distributed"]["status"] == "fail"
    assert "torch.distributed" in checks["distributed"]["detail"]


def test_a_crash_during_import_stops_after_one_worker(cli, monkeypatch, plain_python, tmp_path):
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    r = run_guarded(cli, ["verify", "--python", plain_python, "--timeout", "5", "--json"])
    assert r.code == 1
    doc = r.json()
    checks = {c["name"]: c for c in doc["checks"]}
    assert checks["import_torch"]["status"] == "fail"
    assert "the check killed its process (SIGSEGV)" in checks["import_torch"]["detail"]
    assert doc["facts"]["collector"]["workers"] == 1
    assert checks["matmul"]["detail"] == "not run: torch does not import (see import_torch)"


def test_a_hang_in_the_only_check_is_killed(cli, monkeypatch, plain_python):
    monkeypatch.setenv("PYTHONPATH", str(STANDIN))
    monkeypatch.setenv("STANDIN_FAULTS", "probe_matmul=hang")
    r = run_guarded(cli, ["verify", "--python", plain_python, "--timeout", "2", "--checks", "matmul", "--json"])
    assert r.code == 1
    (check,) = r.json()["checks"]
    assert check["name"] == "matmul"
    assert check["status"] == "fail"
    assert "no result within 2 s" in check["detail"]
    assert "--timeout 600" in check["fix"]
