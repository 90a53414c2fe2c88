"""torch without NumPy (breaker F20): torch's wheel does not require NumPy, so `pip install torch`
into a fresh venv leaves it out; `import torch` then warns "Failed to initialize NumPy: No module
named 'numpy'" and every .numpy()/DataLoader/torchvision-transform path fails ("Numpy is not
available"; pytorch/pytorch#115638, #60252, #78341). verify turns what `import torch` warned into
the family's WARN with its fix — with a real venv that has no NumPy."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import run_cli
from tests.verify.conftest import make_torch_venv

pytestmark = pytest.mark.subprocess  # real venvs with real torch


@pytest.fixture(scope="module")
def no_numpy_venv(tmp_path_factory):
    py = make_torch_venv(tmp_path_factory.mktemp("venv") / "torch-no-numpy", "torch==2.13.0")
    probe = subprocess.run([str(py), "-c", "import importlib.util as u; print(u.find_spec('numpy') is None)"],
                           capture_output=True, text=True, timeout=120)
    if probe.stdout.strip() != "True":
        pytest.skip("pip pulled NumPy in with torch here: nothing to test")
    return py


def test_torch_without_numpy_is_a_warning_with_the_fix(no_numpy_venv):
    r = run_cli(["verify", "--python", str(no_numpy_venv), "--checks", "import_torch", "--json"])
    assert r.code == 0, r.err  # a warning, not a failure: torch imports and computes
    check = next(c for c in r.json()["checks"] if c["name"] == "import_torch")
    assert check["status"] == "warn" and check["rule"] == "numpy-not-available", check
    assert "Failed to initialize NumPy: No module named 'numpy'" in check["detail"]
    assert "-m pip install numpy" in check["fix"] and str(no_numpy_venv) in check["fix"]


def test_the_same_torch_with_numpy_passes(torch_venv):
    r = run_cli(["verify", "--python", str(torch_venv), "--checks", "import_torch", "--json"])
    check = next(c for c in r.json()["checks"] if c["name"] == "import_torch")
    assert check["status"] == "pass", check


@pytest.mark.parametrize("narrow", [["--skip", "import_torch", "--tier", "quick"], ["--checks", "matmul"]])
def test_narrowing_the_checks_does_not_hide_the_numpy_warning(no_numpy_venv, narrow):
    """breaker3 F10: `verify --skip import_torch --tier quick` on this venv said 4 passed, 0 warnings:
    the NumPy warning lives in import_torch's judgement. What the import warned is about the
    environment every check ran in: it is reported (a warning, exit 0) whichever checks were asked."""
    r = run_cli(["verify", "--python", str(no_numpy_venv), *narrow, "--json"])
    assert r.code == 0, r.err
    checks = r.json()["checks"]
    assert checks[0]["name"] == "import_torch" and checks[0]["status"] == "warn", checks
    assert checks[0]["rule"] == "numpy-not-available"
    assert any(c["name"] == "matmul" and c["status"] == "pass" for c in checks), checks
    strict = run_cli(["verify", "--python", str(no_numpy_venv), *narrow, "--strict"])
    assert strict.code == 1, strict.err  # a warning --strict fails on


def test_narrowed_checks_on_a_clean_torch_stay_as_asked(torch_venv):
    r = run_cli(["verify", "--python", str(torch_venv), "--checks", "matmul", "--json"])
    assert [c["name"] for c in r.json()["checks"]] == ["matmul"], r.out
