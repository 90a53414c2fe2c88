"""Fixtures for the Docker tests: the real engine (or a skip that says why), the local base image,
a wheelhouse with torch 2.13.0+cpu, and one CPU image built by `envcheck docker build` that the
whole session shares (building it is the slow part: ~40 s).

No registry is reachable here, so the base is `envcheck-base:bookworm` (`envcheck docker base`:
debootstrap + docker import; .ci/run builds it). ``ENVCHECK_TEST_BASE_IMAGE`` names another.

The engine may be shared (other checkouts' test runs, a developer's own containers), so these tests
only ever look at or remove objects carrying this run's label ``io.envcheck.test-run=<RUN>``: every
image is built ``FROM`` :func:`run_base` (the base plus that label), so its layers, the build's
containers and every container started from it inherit the label.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import uuid
from pathlib import Path
from typing import Dict, List

import pytest

from tests.conftest import run_cli

TORCH = "2.13.0+cpu"  # the wheel this machine installs offline (pip find-links)
CPU_FLAGS = ["--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--os", "linux"]
RUN = uuid.uuid4().hex[:12]
RUN_LABEL = "io.envcheck.test-run"
TEST_TAG = f"envcheck-test/torch:2.13.0-cpu-{RUN}"
ROLE = "io.envcheck.role"


def run_tag(name: str) -> str:
    """A tag private to this test run."""
    return f"envcheck-test/{name}-{RUN}"


@pytest.fixture(scope="session")
def engine():
    """A docker SDK client for a reachable engine; the tests that need one skip, saying why, without."""
    from envcheck.docker.engine import DockerError, connect

    try:
        return connect(timeout=60)
    except DockerError as exc:
        pytest.skip(f"needs a Docker engine: {exc}")


@pytest.fixture(scope="session")
def base_image(engine) -> str:
    """The local base image: present, or built now (root + debootstrap), or the tests skip."""
    from envcheck.docker import base

    tag = os.environ.get("ENVCHECK_TEST_BASE_IMAGE", base.TAG)
    if tag != base.TAG:
        return tag
    if base.current(engine, tag) is not None:
        return tag
    if os.geteuid() != 0 or not base.runner.which("debootstrap"):
        pytest.skip(f"{tag} is absent and cannot be built here (needs root and debootstrap): "
                    "run `envcheck docker base` first")
    try:
        base.ensure_base(engine, tag)
    except base.DockerError as exc:
        pytest.skip(f"{tag} is absent and could not be built: {exc}")
    return tag


@pytest.fixture(scope="session")
def run_base(engine, base_image) -> str:
    """The base image plus this run's label: what every test image is built from. Removed, with
    everything else carrying the label, when the session ends."""
    tag = derive_image(engine, base_image, run_tag("base:1"), [f"LABEL {RUN_LABEL}={RUN}"], {})
    yield tag
    for c in engine.containers.list(all=True, filters={"label": f"{RUN_LABEL}={RUN}"}):
        c.remove(force=True)
    for img in engine.images.list(all=True, filters={"label": f"{RUN_LABEL}={RUN}"}):
        try:
            engine.images.remove(img.id, force=True)
        except Exception:  # already gone with its child
            pass


def pip_download(dest: Path, specs: List[str], no_deps: bool = False) -> subprocess.CompletedProcess:
    """pip download for the image's Python (3.11) and glibc (bookworm: 2.36), with this machine's
    pip configuration (the local find-links and indexes here; PyPI elsewhere)."""
    from envcheck.docker.wheelhouse import download_argv, platform_tags

    argv = download_argv(dest, {}, "3.11", platform_tags("x86_64", "2.36")) + specs
    if no_deps:
        argv.append("--no-deps")
    return subprocess.run(argv, capture_output=True, text=True)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """torch 2.13.0+cpu, its dependencies and NumPy (which a plan installs beside torch:
    matrices/numpy.toml) as wheels on the host."""
    d = tmp_path_factory.mktemp("wheelhouse")
    r = pip_download(d, [f"torch=={TORCH}", "numpy"])
    if r.returncode != 0 or not list(d.glob("torch-*.whl")):
        pytest.skip(f"could not gather torch {TORCH} and its dependencies: {r.stderr[-400:]}")
    return d


@pytest.fixture(scope="session")
def cpu_image(engine, run_base, wheelhouse):
    """``(tag, build --json output)``: the CPU plan's image, built once from the wheelhouse."""
    from envcheck.docker.build import remove_image

    res = run_cli(["docker", "build", *CPU_FLAGS, "--base-image", run_base, "--wheelhouse", str(wheelhouse),
                   "--packages", "torch", "--tag", TEST_TAG, "--json"])
    assert res.code == 0, res.err[-3000:]
    yield TEST_TAG, res.json()
    remove_image(engine, TEST_TAG)


def derive_image(engine, parent: str, tag: str, lines: List[str], files: Dict[str, bytes]) -> str:
    """``FROM parent`` + ``lines``, with ``files`` in the context: a small image built with the SDK."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in {"Dockerfile": ("FROM " + parent + "\n" + "\n".join(lines) + "\n").encode(), **files}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    engine.images.build(fileobj=buf, custom_context=True, tag=tag, rm=True, forcerm=True)
    return tag


def verify_containers(engine) -> List[str]:
    """Containers envcheck's verify made in this run that are still there (should be none)."""
    return [c.id for c in engine.containers.list(all=True, filters={"label": [ROLE, f"{RUN_LABEL}={RUN}"]})]


def run_state(engine):
    """This run's containers and images (ids): what a failed build must leave as it found."""
    mine = {"label": f"{RUN_LABEL}={RUN}"}
    return ({c.id for c in engine.containers.list(all=True, filters=mine)},
            {i.split(":")[-1] for i in engine.api.images(all=True, quiet=True, filters=mine)})
