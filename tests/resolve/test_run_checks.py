"""``run_checks`` (what ``resolve`` runs) gives every candidate the same reasons, warnings and fit, in
the same order, as running each check of ``CHECKS`` on each candidate one by one — it only works the
checks that do not read the Python out once per (release, build)."""

from __future__ import annotations

import pytest

from envcheck.app.plan import Target, build_machine
from envcheck.matrix import load_matrix
from envcheck.resolve import Request, enumerate_candidates
from envcheck.resolve import rules
from envcheck.resolve.rules import CHECKS, Context, run_checks

MACHINES = {
    "rtx4090, Python not given": (Target(gpus=[["RTX 4090"]]), Request()),
    "rtx4090 old driver": (Target(gpus=[["RTX 4090"]], driver="525.60.13"), Request()),
    "7900xtx on WSL": (Target(gpus=[["7900xtx"]], wsl=True), Request()),
    "gtx1080ti windows --compile": (Target(gpus=[["GTX 1080 Ti"]], os="windows"), Request(compile=True)),
    "rtx3060 windows --compile": (Target(gpus=[["RTX 3060"]], os="windows", driver="566.03"), Request(compile=True)),
    "centos7 V100": (Target(gpus=[["V100"]], distro="centos7"), Request()),
    "mac": (Target(os="macos", arch="aarch64", macos="13.0"), Request()),
    "jetson": (Target(gpus=[["jetson orin"]]), Request()),
    "cpu": (Target(os="linux"), Request(backend="cpu")),
}


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_same_findings_as_each_check_on_each_candidate(name):
    matrix = load_matrix()
    target, request = MACHINES[name]
    machine = build_machine(target, matrix)
    ctx = Context(matrix, machine, request)
    fast, slow = enumerate_candidates(matrix, machine), enumerate_candidates(matrix, machine)
    run_checks(fast, ctx)
    for c in slow:
        for check in CHECKS:
            check(c, ctx)
    assert len(fast) == len(slow) > 0
    for f, s in zip(fast, slow):
        assert (f.release, f.build, f.python) == (s.release, s.build, s.python)
        assert f.reasons == s.reasons and f.warnings == s.warnings and f.fit == s.fit, (name, f.to_dict())
    if machine.python is None:  # the case this is for: several Pythons share a build's findings
        assert len({(id(c.release), id(c.build)) for c in fast}) < len(fast)


def test_a_check_recording_a_per_python_field_is_refused(monkeypatch):
    def check_bad(c, ctx):
        c.note(python_new=True)

    monkeypatch.setattr(rules, "CHECKS", [*CHECKS, check_bad])
    matrix = load_matrix()
    machine = build_machine(Target(gpus=[["RTX 4090"]]), matrix)
    with pytest.raises(AssertionError, match="check_bad records"):
        run_checks(enumerate_candidates(matrix, machine), Context(matrix, machine, Request()))
