"""A ROCm build on a distribution AMD does not support that ROCm release on (breaker3 F8): the
recipe's first step, AMD's kernel driver from amdgpu-install, has no packages there. AMD's
compatibility matrix (platforms.toml [[rocm_os]]): ROCm 6.0/6.1 list CentOS 7.9 and Ubuntu 20.04;
6.2/6.3 list neither, and no 6.x lists Ubuntu 18.04. A warning (reason `os`), and among builds of
one torch release the ROCm whose list has the distribution ranks first.
"""

from __future__ import annotations

from envcheck.app.plan import PlanRequest, Target, plan


def _res(distro, gpu="MI250X"):
    return plan(PlanRequest(target=Target(gpus=[[gpu]], distro=distro)))


def _os_warnings(c):
    return [w.message for w in c.warnings if w.code == "os"]


def test_centos7_takes_the_rocm_amd_lists_it_for():
    r = _res("centos7")
    assert r.plan is not None
    chosen = r.resolution.chosen
    assert chosen.build.rocm.startswith("6.1") and _os_warnings(chosen) == []
    same = [c for c in r.resolution.candidates
            if c.release.version == chosen.release.version and (c.build.rocm or "").startswith("6.2") and c.python == chosen.python]
    assert same and all(any("CentOS 7" in w and "ROCm 6.2" in w for w in _os_warnings(c)) for c in same)


def test_ubuntu1804_is_said_as_a_caveat():
    r = _res("ubuntu18.04")
    assert r.plan is not None
    warned = _os_warnings(r.resolution.chosen)
    assert warned and "Ubuntu 18.04" in warned[0] and "amdgpu-install" in warned[0]


def test_listed_distribution_has_no_caveat():
    r = _res("ubuntu22.04")
    assert r.plan is not None and _os_warnings(r.resolution.chosen) == []


def test_no_distribution_given_is_not_judged():
    r = plan(PlanRequest(target=Target(gpus=[["MI250X"]], os="linux")))
    assert r.plan is not None and _os_warnings(r.resolution.chosen) == []


def test_rows_name_known_distributions(matrix):
    known = {d.id for d in matrix.distros}
    assert matrix.rocm_os, "no [[rocm_os]] rows"
    for row in matrix.rocm_os.values():
        assert set(row.distros) <= known, (row.rocm, set(row.distros) - known)
        assert row.source and row.confidence == "official"


def test_ubuntu2004_with_rocm7_is_said():
    """No 6.2+ or 7.x ROCm release lists Ubuntu 20.04 (breaker3 F8: 7900 XTX on Ubuntu 20.04)."""
    r = plan(PlanRequest(target=Target(gpus=[["7900xtx"]], distro="ubuntu20.04"), torch="2.10.0"))
    assert r.plan is not None and r.plan.build.rocm.startswith("7.")
    warned = _os_warnings(r.resolution.chosen)
    assert warned and "Ubuntu 20.04" in warned[0]
