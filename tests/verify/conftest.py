"""Fixtures for verify tests: a real venv with torch 2.13.0, the stand-in torch, the case facts.

The venv is made fresh per session (``python -m venv`` + ``pip install torch==2.13.0 numpy``, which pip takes
offline from the local wheelhouse on this machine and from PyPI elsewhere). Set
``ENVCHECK_TEST_TORCH_VENV`` to an existing venv with torch 2.13.0 to skip the install locally.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "verify"
CASES = FIXTURES / "cases"
STANDIN = FIXTURES / "standin"


def venv_python(root: Path) -> Path:
    return root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def make_torch_venv(root: Path, *specs: str) -> Path:
    """A fresh venv at ``root`` with ``specs`` installed; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    py = venv_python(root)
    proc = subprocess.run([str(py), "-m", "pip", "install", "--quiet", *specs], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"pip install {' '.join(specs)} failed:\n{proc.stdout}\n{proc.stderr}")
    return py


def given_or_new_torch_venv(root: Path) -> Path:
    """The venv folder of ``ENVCHECK_TEST_TORCH_VENV`` when set, else a fresh one at ``root`` with
    torch 2.13.0 (CPU) and NumPy — for tests that need the folder itself, not only its python."""
    given = os.environ.get("ENVCHECK_TEST_TORCH_VENV")
    if given:
        return Path(given)
    make_torch_venv(root, "torch==2.13.0", "numpy")
    return root


@pytest.fixture(scope="session")
def torch_venv(tmp_path_factory) -> Path:
    """The python of a venv with torch 2.13.0 (CPU build)."""
    given = os.environ.get("ENVCHECK_TEST_TORCH_VENV")
    if given:
        return venv_python(Path(given))
    # with NumPy: torch's wheel does not require it, and without it `import torch` warns and every
    # .numpy()/DataLoader path fails (verify says so: tests/verify/test_numpy_missing.py)
    return make_torch_venv(tmp_path_factory.mktemp("venv") / "torch-2.13.0", "torch==2.13.0", "numpy")


@pytest.fixture(scope="session")
def plain_python() -> str:
    """An interpreter without torch (the one running the tests)."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("the test interpreter has torch; the stand-in would be shadowed")
    return sys.executable


@pytest.fixture(scope="session")
def cuda_venv(tmp_path_factory) -> Path:
    """The python of a venv with torch 2.14.1 (CUDA 13.0 build, ~5.5 GB with its nvidia-* wheels).

    ``ENVCHECK_TEST_CUDA_VENV`` names an existing one to skip the install."""
    given = os.environ.get("ENVCHECK_TEST_CUDA_VENV")
    if given:
        return venv_python(Path(given))
    return make_torch_venv(tmp_path_factory.mktemp("venv") / "torch-2.14.1", "torch==2.14.1")
