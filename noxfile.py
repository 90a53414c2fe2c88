"""nox sessions: the test suite, Docker tests, CI images, matrix refresh.

    nox -s tests              the README test command (what CI runs)
    nox -s slow               tests that install torch 2.14.1 (CUDA 13.0 build, ~5.5 GB)
    nox -s benchmarks         print speed ratios against baselines measured in the same run
    nox -s update_matrices    refresh matrices/generated-index-*.toml from the real indexes (network)
"""

from __future__ import annotations

import nox

nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "venv"


@nox.session
def tests(session: nox.Session) -> None:
    """Every test except the slow ones; Docker tests skip with a reason when no engine is reachable."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "not slow", *session.posargs)


@nox.session
def slow(session: nox.Session) -> None:
    """Tests marked slow (large installs)."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "slow", *session.posargs)


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Speed ratios against baselines measured in the same run."""
    session.install("-e", ".")
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def update_matrices(session: nox.Session) -> None:
    """Refresh matrices/generated-index-*.toml from the real indexes (network; not run by CI).

    download.pytorch.org/whl first, then plain PyPI; extra arguments go to both runs
    (e.g. `nox -s update_matrices -- --dry-run`).
    """
    session.install("-e", ".")
    session.run("envcheck", "matrix", "update", *session.posargs)
    session.run("envcheck", "matrix", "update", "--index", "https://pypi.org/simple/", *session.posargs)
    session.run("envcheck", "matrix", "status")
