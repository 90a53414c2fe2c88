"""Fixtures for fleet tests: node reports made by `envcheck verify --facts … --report` from the
recorded facts of real machines (tests/fixtures/verify/cases), and a venv with torch + envcheck."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

CASES = ROOT / "tests" / "fixtures" / "verify" / "cases"
#: Facts recorded on real machines (`nox -s device`) and schema-2 facts from public reports.
RECORDED = [*sorted((ROOT / "tests" / "fixtures" / "verify" / "recorded").glob("*.json")),
            *sorted((ROOT / "tests" / "fixtures" / "verify" / "evidence").glob("*.json"))]


def make_report(facts: Path, out: Path, *extra: str) -> dict:
    """Run `envcheck verify --facts FACTS --report OUT` and return the report."""
    r = run_cli(["verify", "--facts", str(facts), "--report", str(out), *extra])
    assert r.code in (0, 1), r.err
    return json.loads(out.read_text())


@pytest.fixture(scope="session")
def case_reports(tmp_path_factory):
    """A node report per recorded case (C01, C06, …): {case id: report}."""
    d = tmp_path_factory.mktemp("case-reports")
    return {p.stem: make_report(p, d / f"{p.stem}.json") for p in [*sorted(CASES.glob("*.json")), *RECORDED]}


@pytest.fixture(scope="session")
def envcheck_torch_venv(tmp_path_factory) -> Path:
    """A venv with torch 2.13.0 (CPU build, taken offline from the local wheelhouse here) and this
    checkout of envcheck; returns its bin folder. ``ENVCHECK_TEST_FLEET_VENV`` names one to reuse."""
    given = os.environ.get("ENVCHECK_TEST_FLEET_VENV")
    if given:
        return Path(given) / "bin"
    from tests.verify.conftest import make_torch_venv

    py = make_torch_venv(tmp_path_factory.mktemp("venv") / "torch-envcheck", "torch==2.13.0", "numpy")
    proc = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[junit]"], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"pip install -e envcheck failed:\n{proc.stdout}\n{proc.stderr}")
    return py.parent


def envcheck_cmd() -> list:
    """envcheck as a subprocess (this interpreter)."""
    return [sys.executable, "-m", "envcheck"]
