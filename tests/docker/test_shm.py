"""A small /dev/shm in a real container is seen (platform.shm_mib, container_runtime), judged by the
environment check, and words the NCCL shared-memory family — the collector runs in the base image
with the stand-in torch mounted, through verify's own collection loop (envcheck.verify.collect)."""

from __future__ import annotations

import uuid

import pytest

from envcheck import runner
from envcheck.verify.collect import COLLECTOR, collect
from tests.verify.conftest import STANDIN

pytestmark = pytest.mark.docker


def in_container(image: str, shm: str, label: str, mounts=()):
    """A ``start`` seam that runs each collector worker in a fresh container with ``--shm-size shm``
    (and extra ``-v`` mounts)."""
    def start(argv, env=None, cwd=None):
        inner = ["python3", "/envcheck/collector.py", *[str(a) for a in argv[2:]]]
        extra = [a for m in mounts for a in ("-v", m)]
        return runner.start(["docker", "run", "--rm", "--label", label, "--shm-size", shm, "--network", "none",
                             "-v", f"{COLLECTOR.parent}:/envcheck:ro", "-v", f"{STANDIN}:/standin:ro", *extra,
                             "-e", "PYTHONPATH=/standin", image, *inner])
    return start


def leftover(engine, label):
    key, value = label.split("=", 1)
    return engine.containers.list(all=True, filters={"label": f"{key}={value}"})


def test_a_small_dev_shm_in_a_container_is_a_warning_with_the_flag_to_fix_it(engine, base_image, matrix):
    from envcheck.verify import explain
    from envcheck.verify.diagnose import diagnose

    label = f"io.envcheck.test-run={uuid.uuid4().hex}"
    facts = collect("python3", ["import_torch", "environment"], timeout=60,
                    start=in_container(base_image, "8m", label))
    plat = facts.section("platform")
    assert plat["shm_mib"] == 8 and plat["container"] is True and plat["container_runtime"] == "docker"
    (check,) = diagnose(facts, matrix=matrix, checks=["environment"])
    assert check.status == "warn" and check.rule == "nccl-shm"
    assert "/dev/shm is 8 MiB in docker" in check.detail
    assert "--shm-size=16g" in check.fix
    (f,) = explain("RuntimeError: NCCL Error 2: unhandled system error", matrix, None, facts)
    assert f.rule == "nccl-shm" and "Here /dev/shm is 8 MiB in a container — too small." in f.cause
    assert leftover(engine, label) == []


def test_a_large_dev_shm_passes(engine, base_image, matrix):
    from envcheck.verify.diagnose import diagnose

    label = f"io.envcheck.test-run={uuid.uuid4().hex}"
    facts = collect("python3", ["import_torch", "environment"], timeout=60,
                    start=in_container(base_image, "2g", label))
    assert facts.section("platform")["shm_mib"] == 2048
    (check,) = diagnose(facts, matrix=matrix, checks=["environment"])
    assert check.status == "pass", check.detail


def test_jetson_l4t_release_is_read(engine, base_image, tmp_path):
    """/etc/nv_tegra_release as JetPack 6.1 writes it (L4T R36.4.0) on a Jetson: the collector
    reports the L4T release."""
    release = tmp_path / "nv_tegra_release"
    release.write_text("# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, "
                       "DATE: Fri Sep 13 04:36:44 UTC 2024\n")
    label = f"io.envcheck.test-run={uuid.uuid4().hex}"
    facts = collect("python3", ["import_torch"], timeout=60,
                    start=in_container(base_image, "64m", label, mounts=[f"{release}:/etc/nv_tegra_release:ro"]))
    assert facts.section("platform")["l4t"] == "36.4.0"
    assert leftover(engine, label) == []
