"""Shared fixtures: the real matrix, an in-process CLI runner, named machines."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: the public cases and data files; beside the checkout, or where $ENVCHECK_TEST_SHARED says (a worktree)
SHARED = Path(os.environ.get("ENVCHECK_TEST_SHARED") or ROOT.parent / "shared")


@pytest.fixture(autouse=True, scope="session")
def _private_matrix_cache(tmp_path_factory):
    """Tests parse many scratch matrices: keep their cache out of the user's ~/.cache."""
    import os

    saved = {k: os.environ.get(k) for k in ("ENVCHECK_CACHE_DIR", "ENVCHECK_DATA_DIR")}
    os.environ["ENVCHECK_CACHE_DIR"] = str(tmp_path_factory.mktemp("envcheck-cache"))
    # and the user's `matrix update` data out of the answers (the golden files hold shipped data only)
    os.environ["ENVCHECK_DATA_DIR"] = str(tmp_path_factory.mktemp("envcheck-data"))
    yield
    for k, old in saved.items():
        if old is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = old


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_cli(args: List[str]) -> CliResult:
    """Run ``envcheck ARGS`` in-process; exit code, stdout, stderr."""
    from envcheck.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session")
def matrix():
    from envcheck.matrix import load_matrix

    return load_matrix()


@pytest.fixture(scope="session")
def cases():
    """The public bug-report cases (../shared/cases/cases.json), by id."""
    path = SHARED / "cases" / "cases.json"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared cases live beside the checkout)")
    return {c["id"]: c for c in json.loads(path.read_text())}


def plan_for(matrix, request=None, **flags):
    """Resolve for a machine described by flags (as `envcheck plan --gpu …` would)."""
    from envcheck.machine.describe import apply_flags
    from envcheck.resolve import Request, resolve

    gpus = flags.pop("gpus", ())
    machine = apply_flags(matrix, None, gpus=gpus, **flags)
    return resolve(machine, request or Request(), matrix)
