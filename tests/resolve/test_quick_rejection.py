"""``run_checks`` decides most rejections from the quick checks alone (``rules.QUICK``) and works a
rejected build's findings out only when they are read (#9). One answer everywhere: for every candidate
of the 30 golden machines and of generated ones, the acceptance it gives *before* anything reads the
candidate's reasons is the one running every check of ``CHECKS`` on it, in order, gives — and the
reasons, warnings and fit read afterwards are those too, in report order."""

from __future__ import annotations

import random

import pytest

from envcheck.app.plan import build_machine
from envcheck.cli import build_parser
from envcheck.cli.flags import plan_request
from envcheck.errors import UsageError
from envcheck.resolve import Request, enumerate_candidates
from envcheck.resolve.rules import CHECKS, PER_PYTHON, QUICK, Context, run_checks
from tests.golden.cases import PLAN_CASES


def _generated(n: int = 24, seed: int = 9) -> dict:
    """``n`` described machines drawn (with a fixed seed) from GPUs of every vendor × OS × driver × Python × request."""
    gpus = [[], ["RTX 4090"], ["GTX 1080 Ti"], ["sm_35"], ["H100"], ["B200"], ["RTX 5090"], ["7900xtx"],
            ["MI300X"], ["RX 6700 XT"], ["Arc A770"], ["jetson orin"], ["V100", "T4"]]
    places = [["--os", "linux"], ["--os", "windows"], ["--wsl"], ["--arch", "aarch64"], ["--distro", "centos7"],
              ["--os", "macos", "--arch", "aarch64", "--macos", "13.0"]]
    drivers = [[], ["--driver", "470.82.01"], ["--driver", "535.104.05"], ["--driver", "580.65.06"]]
    pythons = [[], ["--python", "3.9"], ["--python", "3.13t"], ["--python", "3.14"]]
    requests = [[], ["--backend", "cpu"], ["--backend", "cu126"], ["--torch", "2.5"], ["--compile"],
                ["--prefer", "newest"]]
    rnd = random.Random(seed)
    out = {}
    while len(out) < n:
        gpu = rnd.choice(gpus)
        args = [a for g in gpu for a in ("--gpu", g)] + rnd.choice(places) + rnd.choice(drivers)
        args += rnd.choice(pythons) + rnd.choice(requests)
        out[" ".join(args)] = args  # (each names the OS or the GPU: never this machine's probe)
    return out


MACHINES = {**{f"golden {k}": v for k, v in PLAN_CASES.items()}, **_generated()}


def _inputs(args: list, matrix):
    req = plan_request(build_parser().parse_args(["plan", *args]))
    request = Request(torch=Request.parse_torch(req.torch) if req.torch else None, torch_text=req.torch or "",
                      backend=Request.parse_backend(req.backend), compile=req.compile, prefer=req.prefer)
    return build_machine(req.target, matrix), request


def test_quick_checks_are_checks_that_do_not_read_the_python():
    assert set(QUICK) <= set(CHECKS) and not set(QUICK) & set(PER_PYTHON)


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_acceptance_before_reading_equals_every_check_in_order(name, matrix):
    try:
        machine, request = _inputs(MACHINES[name], matrix)
    except UsageError:
        pytest.skip("flags envcheck refuses (exit 2): no candidates")
    ctx = Context(matrix, machine, request)
    fast, slow = enumerate_candidates(matrix, machine), enumerate_candidates(matrix, machine)
    run_checks(fast, ctx)
    accepted_first = [c.accepted for c in fast]  # before anything reads a reason
    for c in slow:
        for check in CHECKS:
            check(c, ctx)
    assert len(fast) == len(slow) > 0
    assert accepted_first == [not c.reasons for c in slow], name
    for f, s in zip(fast, slow):
        assert (f.release, f.build, f.python) == (s.release, s.build, s.python)
        assert f.reasons == s.reasons and f.warnings == s.warnings and f.fit == s.fit, (name, s.to_dict())
    assert accepted_first == [c.accepted for c in fast]  # reading changed nothing


def test_most_rejections_wait_until_read(matrix):
    """The point of the quick checks: on an NVIDIA machine the ROCm, XPU and CPU builds are rejected
    without their other checks running, and reading a reason then works them out."""
    machine, request = _inputs(["--gpu", "RTX 4090"], matrix)
    cands = enumerate_candidates(matrix, machine)
    run_checks(cands, Context(matrix, machine, request))
    waiting = [c for c in cands if c._pending is not None]
    assert len(waiting) > len(cands) / 3
    rocm = next(c for c in waiting if c.build.backend == "rocm")
    assert not rocm.accepted
    assert [r.code for r in rocm.reasons] == ["backend"] and "cannot drive the" in rocm.reasons[0].message
    assert rocm._pending is None


def test_resolve_reads_few_rejected_reasons(matrix):
    """resolve() itself (its alternatives and assumptions) leaves most rejected candidates unread: a
    loop that reads every rejected candidate's reasons first would work them all out on every plan."""
    from envcheck.resolve import resolve

    machine, request = _inputs(["--gpu", "RTX 4090"], matrix)
    res = resolve(machine, request, matrix)
    waiting = [c for c in res.candidates if c._pending is not None]
    assert len(waiting) > len(res.candidates) / 2
