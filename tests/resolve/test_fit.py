"""The per-candidate fit is a frozen dataclass, and decisions read its fields, never prose (#9)."""

from __future__ import annotations

import dataclasses

import pytest

from envcheck.resolve.rules import Context, gpu_driver_problem
from envcheck.resolve.types import Fit
from tests.conftest import plan_for


def test_fit_is_frozen_and_checks_record_through_note(matrix):
    res = plan_for(matrix, gpus=["RTX 4090"], driver="535.54.03")
    c = res.chosen
    assert isinstance(c.fit, Fit)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.fit.arch_fit = 2  # type: ignore[misc]
    # R535 fully supports CUDA 12.2 at most: a chosen CUDA 12.x build above that runs under
    # minor-version compatibility, and the fit says which in a field
    assert c.fit.driver in ("full", "minor")
    assert c.fit.driver_floor or c.fit.driver_full


def test_driver_rank_orders_full_unknown_minor_fail():
    ranks = [Fit(driver=d).driver_rank for d in (None, "full", "unknown", "minor", "fail")]
    assert ranks == [0, 0, 1, 2, 3]


def test_a_driver_past_the_legacy_branch_is_a_typed_problem(matrix):
    # GTX 1080 Ti (Pascal): R580 is its last branch (cuda.toml driver_last_branch); 595 is past it.
    res = plan_for(matrix, gpus=["GTX 1080 Ti"], driver="595.58.03")
    g = res.machine.gpus[0]
    problem = gpu_driver_problem(Context(matrix, res.machine, res.request), g)
    assert problem is not None and problem.kind == "too_new" and problem.branch == "580"
    old = plan_for(matrix, gpus=["RTX 4090"], driver="470.86")
    problem = gpu_driver_problem(Context(matrix, old.machine, old.request), old.machine.gpus[0])
    assert problem is not None and problem.kind == "too_old" and problem.branch is None


def test_candidates_sharing_noted_facts_stay_apart(matrix):
    # run_checks hands the candidates of one build the same facts (Candidate.take shares them):
    # noting on one afterwards must not show up in the other's fit
    res = plan_for(matrix, gpus=["RTX 4090"])
    a, b = res.accepted[0], res.accepted[1]
    facts = {"driver": "full", "glibc_floor": "2.28"}
    a.take([], [], facts)
    b.take([], [], facts)
    a.note(driver="minor")
    assert (a.fit.driver, b.fit.driver) == ("minor", "full")
    assert b.fit.glibc_floor == a.fit.glibc_floor == "2.28"
    assert facts == {"driver": "full", "glibc_floor": "2.28"}
    with pytest.raises(TypeError, match="no field colour"):
        a.note(colour="red")
