"""The real thing: a CPU plan's requirements.txt installs into a fresh venv, offline, from a local
mirror of the wheel index (a PEP 503 simple index served over HTTP on 127.0.0.1), and
`import torch` reports the planned version."""

from __future__ import annotations

import hashlib
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.localhttp import serve_directory

pytestmark = pytest.mark.subprocess  # real interpreters, venvs, tools (tests/README.md)

TORCH = "2.13.0"


def python311():
    if sys.version_info[:2] == (3, 11):
        return sys.executable
    return shutil.which("python3.11")


def clean_pip_env(**extra):
    """An environment where pip reads no config and no PIP_* variables: only what we pass."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory):
    """torch 2.13.0+cpu (the machine's local wheel), its dependencies and NumPy (the plan installs it
    beside torch: matrices/numpy.toml), downloaded once."""
    py = python311()
    if not py:
        pytest.skip("needs Python 3.11 (the torch 2.13.0 wheel on this machine is cp311)")
    d = tmp_path_factory.mktemp("wheelhouse")
    r = subprocess.run([py, "-m", "pip", "download", "--only-binary", ":all:", "-d", str(d), f"torch=={TORCH}", "numpy"],
                       capture_output=True, text=True)
    if r.returncode != 0 or not list(d.glob("torch-*.whl")):
        pytest.skip(f"could not gather torch {TORCH} and its dependencies: {r.stderr[-400:]}")
    return d


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def build_simple_index(wheels: Path, root: Path, variant: str) -> None:
    """A PEP 503 index at root/<variant>/ with every wheel of ``wheels`` (sha256 fragments)."""
    files = root / "files"
    files.mkdir(parents=True)
    projects = {}
    for whl in sorted(wheels.glob("*.whl")):
        shutil.copy(whl, files / whl.name)
        projects.setdefault(normalize(whl.name.split("-")[0]), []).append(whl.name)
    base = root / variant
    base.mkdir()
    links = "".join(f'<a href="{p}/">{p}</a>\n' for p in sorted(projects))
    (base / "index.html").write_text(f"<!DOCTYPE html><html><body>{links}</body></html>")
    for proj, names in projects.items():
        (base / proj).mkdir()
        items = []
        for n in names:
            digest = hashlib.sha256((files / n).read_bytes()).hexdigest()
            items.append(f'<a href="../../files/{html.escape(n.replace("+", "%2B"))}#sha256={digest}">{html.escape(n)}</a><br/>')
        (base / proj / "index.html").write_text("<!DOCTYPE html><html><body>" + "\n".join(items) + "</body></html>")


@pytest.fixture(scope="session")
def mirror(wheelhouse, tmp_path_factory):
    root = tmp_path_factory.mktemp("mirror")
    build_simple_index(wheelhouse, root, "cpu")

    with serve_directory(root) as url:
        yield url


def test_cpu_plan_installs_offline_from_a_local_mirror(cli, mirror, tmp_path):
    out = tmp_path / "plan"
    r = cli(["plan", "--backend", "cpu", "--torch", TORCH, "--python", "3.11", "--mirror", mirror,
             "-o", str(out), "--format", "pip,lock"])
    assert r.code == 0, r.err
    req = (out / "requirements.txt").read_text()
    assert f"--index-url {mirror}/cpu" in req
    assert f"torch=={TORCH}+cpu" in req
    # torchvision/torchaudio of 2.13 are not on this machine: install torch (and the plan's NumPy) from the plan
    assert "numpy" in req.splitlines()  # torch 2.13 runs with any NumPy (matrices/numpy.toml): a bare line
    lines = [ln for ln in req.splitlines() if ln.startswith(("--index-url", "torch==", "numpy"))]
    (tmp_path / "torch-only.txt").write_text("\n".join(lines) + "\n")
    venv = tmp_path / "venv"
    subprocess.run([python311(), "-m", "venv", str(venv)], check=True)
    vpy = venv / "bin" / "python"
    inst = subprocess.run([str(vpy), "-m", "pip", "install", "--no-cache-dir", "-r", str(tmp_path / "torch-only.txt")],
                          capture_output=True, text=True, env=clean_pip_env())
    assert inst.returncode == 0, inst.stdout[-2000:] + inst.stderr[-2000:]
    assert mirror in inst.stdout  # it came from the mirror, not from anywhere else
    got = subprocess.run([str(vpy), "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    assert got.stdout.strip() == f"{TORCH}+cpu", got.stderr[-1000:]
    assert "Failed to initialize NumPy" not in got.stderr, got.stderr[-1000:]  # F20: the plan's NumPy is there
