"""Real tools against a real local index: a PEP 503 simple index on 127.0.0.1 serving the torch
2.13.0 CPU wheel of this machine and its dependency wheels (tests/plan/test_install builds it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.localhttp import serve_directory
from tests.plan.test_install import TORCH, build_simple_index, mirror, python311, wheelhouse  # noqa: F401


@pytest.fixture(scope="session")
def universal_wheelhouse(wheelhouse, tmp_path_factory):  # noqa: F811
    """The wheelhouse plus torch's dependencies for Python 3.10 (filelock 4.3 needs 3.11): a uv
    project locks for every Python its requires-python admits, not only the one at hand."""
    d = tmp_path_factory.mktemp("universal")
    for w in wheelhouse.glob("*.whl"):
        shutil.copy(w, d / w.name)
    deps = sorted({w.name.split("-")[0] for w in wheelhouse.glob("*.whl")} - {"torch"})
    r = subprocess.run([sys.executable, "-m", "pip", "download", "--only-binary", ":all:", "--python-version", "3.10",
                        "--platform", "manylinux_2_28_x86_64", "-d", str(d), *deps], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"could not gather Python 3.10 dependency wheels: {r.stderr[-400:]}")
    return d


@pytest.fixture(scope="session")
def two_variant_index(universal_wheelhouse, tmp_path_factory):
    """The same wheels under /cpu and /cu130 (there is no CUDA wheel on this machine): enough to
    show that uv routes each extra to its own index and keeps them apart."""
    root = tmp_path_factory.mktemp("variants")
    build_simple_index(universal_wheelhouse, root, "cpu")
    shutil.copytree(root / "cpu", root / "cu130")

    with serve_directory(root) as url:
        yield url


@pytest.fixture(scope="session")
def uv_bin():
    """The real uv (PyPI package `uv`, a test dependency), or skip."""
    found = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not os.path.exists(found):
        try:
            from uv import find_uv_bin

            found = find_uv_bin()
        except (ImportError, FileNotFoundError):
            pytest.skip("needs uv (pip install uv)")
    return found


@pytest.fixture
def uv_env(monkeypatch, tmp_path, mirror):  # noqa: F811
    """uv reads no user config, caches in tmp, and finds every package on the local index only."""
    env = {
        "UV_NO_CONFIG": "1",
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_DEFAULT_INDEX": f"{mirror}/cpu",
        "UV_NO_PROGRESS": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_OFFLINE": "",
    }
    for k in [k for k in os.environ if k.startswith("UV_") or k.startswith("PIP_")]:
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        if v:
            monkeypatch.setenv(k, v)
    return dict(os.environ)


def run(argv, **kw):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600, **kw)


def torch_version(python):
    got = run([python, "-c", "import torch; print(torch.__version__)"])
    return got.stdout.strip() or got.stderr[-800:]


__all__ = ["TORCH", "python311", "run", "torch_version"]


def pytest_collection_modifyitems(config, items):
    """The tests here drive the real tools (uv, pip, bash running the Action's steps, envcheck as a
    process): they start child processes on purpose (the guard in tests/conftest.py)."""
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.subprocess)
