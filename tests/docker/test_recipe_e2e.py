"""The recipe, run for real: `envcheck plan --download DIR` gathers every wheel through a mirror (a
real HTTP index on 127.0.0.1), and the install.sh it writes takes a bare Debian container (the
local debootstrap base, no network) from nothing to a passing `envcheck verify`; re-running it
skips what is done. The Dockerfile written beside it builds an image that passes verify too.

The base image is envcheck-base:bookworm (`envcheck docker base`: Debian's python3 3.11 with its
venv module, as a fresh Debian with python3-venv has). No registry is reachable here, so the
Dockerfile's FROM (python:3.11-slim-bookworm, what a user pulls) is pointed at that local base.
"""

from __future__ import annotations

import io
import re
import shutil
import tarfile
import urllib.parse
from pathlib import Path

import pytest

from tests.localhttp import serve_directory
from tests.docker.conftest import RUN, RUN_LABEL, TORCH, run_tag

pytestmark = pytest.mark.docker

LABEL = {RUN_LABEL: RUN}  # this run's objects only (tests/docker/conftest.py)
FLAGS = ["--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--distro", "debian12", "--packages", "torch"]


@pytest.fixture(scope="module")
def mirror(wheelhouse, tmp_path_factory):
    """A PEP 503 index of download.pytorch.org/whl's shape on 127.0.0.1: /cpu/torch/ with the wheel."""
    root = tmp_path_factory.mktemp("mirror")
    proj = root / "cpu" / "torch"
    proj.mkdir(parents=True)
    whl = next(wheelhouse.glob("torch-2.13.0*.whl"))
    shutil.copy(whl, proj / whl.name)
    (proj / "index.html").write_text(f'<html><body><a href="{urllib.parse.quote(whl.name)}">{whl.name}</a></body></html>')

    with serve_directory(root) as url:
        yield url


@pytest.fixture(scope="module")
def download(cli_module, mirror, tmp_path_factory):
    out = tmp_path_factory.mktemp("offline") / "torch-cpu"
    r = cli_module(["plan", *FLAGS, "--mirror", mirror, "--download", str(out)])
    assert r.code == 0, r.err[-2000:]
    return out


@pytest.fixture(scope="module")
def cli_module():
    from tests.conftest import run_cli

    return run_cli


def _tar(folder: Path, arcname: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(folder), arcname=arcname)
    return buf.getvalue()


def _run(engine, image: str, files: bytes, timeout: int = 900):
    """Run `bash /plan/install.sh` in a fresh container with no network; (exit code, output, container)."""
    c = engine.containers.create(image, ["bash", "/plan/install.sh"], network_disabled=True, labels=LABEL)
    if files:
        c.put_archive("/", files)
    c.start()
    code = c.wait(timeout=timeout)["StatusCode"]
    return code, c.logs().decode(errors="replace"), c


def test_download_gathers_every_wheel_through_the_mirror(download, mirror):
    names = sorted(p.name for p in (download / "wheels").glob("*.whl"))
    assert any(n.startswith(f"torch-{TORCH}") for n in names)
    assert any(n.startswith("sympy-") for n in names) and any(n.startswith("filelock-") for n in names)  # dependencies
    script = (download / "install.sh").read_text()
    assert "--no-index --find-links wheels" in script and "PIP_NO_INDEX=1" in script
    commands = re.sub(r"<<'ENVCHECK_LOCK_EOF'\n.*?\nENVCHECK_LOCK_EOF\n", "", script, flags=re.S)
    assert commands != script  # the lock it verifies against travels inside (it records the mirror: data)
    assert mirror not in commands  # offline: no index is contacted
    assert (download / "Dockerfile").read_text().count("COPY wheels /tmp/wheelhouse") == 1


def test_install_sh_from_a_bare_container_to_a_passing_verify(cli, engine, run_base, download):
    image = tag = None
    containers = []
    try:
        code, out, c = _run(engine, run_base, _tar(download, "plan"))
        containers.append(c)
        assert code == 0, out[-4000:]
        steps = [ln for ln in out.splitlines() if ln.startswith("==> ")]
        assert [s.split(" ")[2] for s in steps[:-1]] == ["[system]", "[python]", "[install]", "[verify]"], steps
        assert "torch 2.13.0+cpu imports and multiplies" in out and steps[-1] == "==> done: every step passed"
        tag = run_tag("recipe-e2e:installed")
        repo, _, name = tag.rpartition(":")
        image = c.commit(repository=repo, tag=name)
        # idempotent: a second run skips the venv and still passes
        code2, out2, c2 = _run(engine, tag, b"")
        containers.append(c2)
        assert code2 == 0, out2[-3000:]
        assert out2.count("already done") >= 2  # the Python with venv, and the venv itself
        # the full check: envcheck verify against the lock, in that container's venv
        res = cli(["docker", "verify", tag, "--lock", str(download / "envcheck.lock.toml"),
                   "--python", "/plan/.venv/bin/python", "--checks", "import_torch,lock,matmul", "--json"])
        assert res.code == 0, res.out[-3000:] + res.err[-1000:]
        checks = {x["name"]: x for x in res.json()["checks"]}
        assert checks["lock"]["status"] == "pass" and checks["matmul"]["status"] == "pass", checks
    finally:
        for c in containers:
            c.remove(force=True)
        if image is not None:
            engine.images.remove(tag, force=True)


def test_its_dockerfile_builds_and_passes_verify(cli, engine, run_base, download, tmp_path):
    ctx = tmp_path / "ctx"
    shutil.copytree(download, ctx, ignore=shutil.ignore_patterns(".venv"))
    text = (ctx / "Dockerfile").read_text()
    assert "FROM python:3.11-slim-bookworm" in text
    (ctx / "Dockerfile").write_text(text.replace("FROM python:3.11-slim-bookworm", f"FROM {run_base}"))
    tag = run_tag("recipe-e2e:dockerfile")
    try:
        engine.images.build(path=str(ctx), tag=tag, rm=True, forcerm=True, network_mode="none", labels=LABEL)
        res = cli(["docker", "verify", tag, "--lock", str(download / "envcheck.lock.toml"),
                   "--checks", "import_torch,lock,matmul", "--json"])
        assert res.code == 0, res.out[-3000:] + res.err[-1000:]
        checks = {x["name"]: x for x in res.json()["checks"]}
        assert checks["lock"]["status"] == "pass", checks
    finally:
        try:
            engine.images.remove(tag, force=True)
        except Exception:
            pass
