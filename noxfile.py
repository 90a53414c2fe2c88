"""nox sessions: the test suite, Docker tests, CI images, matrix refresh.

    nox -s tests              the README test command (what CI runs)
    nox -s lint               ruff (rules in pyproject.toml), mypy on envcheck/, no Any in the core's public signatures
    nox -s slow               tests that install torch 2.14.1 (CUDA 13.0 build, ~5.5 GB)
    nox -s docker             the tests that need a Docker engine (tests/docker, marked docker)
    nox -s images             each [[ci_target]] of matrices/docker.toml: render, build, verify inside,
                              .nox/reports/<target>.json (one target: nox -s "images(target='cpu')")
    nox -s benchmarks         print speed ratios against baselines measured in the same run
    nox -s device             on a GPU machine: install the planned build, record verify facts (tests/device/run.py)
    nox -s update_matrices    refresh matrices/generated-index-*.toml from the real indexes (network)
"""

from __future__ import annotations

import re
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "venv"


@nox.session
def tests(session: nox.Session) -> None:
    """Every test except the slow ones; Docker tests skip with a reason when no engine is reachable."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "not slow", *session.posargs)


#: the linters, pinned so a new release cannot turn CI red on its own; bump deliberately
LINT_TOOLS = ["ruff==0.17.6", "mypy==2.4.1"]
LINT_PATHS = ["envcheck", "tests", "benchmarks", "tools", "noxfile.py"]


@nox.session
def lint(session: nox.Session) -> None:
    """ruff with the rule set of pyproject.toml; mypy on envcheck/ (its config in pyproject.toml);
    tools/public_any.py: no ``Any`` in the public signatures of resolve, matrix, machine,
    verify.diagnose."""
    session.install(*LINT_TOOLS, "-e", ".[all]")
    session.run("ruff", "check", *LINT_PATHS)
    session.run("mypy")
    session.run("python", "tools/public_any.py")


@nox.session
def slow(session: nox.Session) -> None:
    """Tests marked slow (large installs)."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "slow", *session.posargs)


def ci_targets() -> list:
    """The ``name`` of each ``[[ci_target]]`` in matrices/docker.toml (nox parametrizes before any
    install, so this reads the file itself)."""
    text = Path(__file__).resolve().parent.joinpath("matrices", "docker.toml").read_text(encoding="utf-8")
    names = []
    for block in text.split("[[ci_target]]")[1:]:
        m = re.search(r'^name\s*=\s*"([^"]+)"', block.split("\n[[", 1)[0], re.M)
        if m:
            names.append(m.group(1))
    return names


@nox.session
def docker(session: nox.Session) -> None:
    """Tests that need a Docker engine (they skip, saying why, when none is reachable)."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "docker", "tests/docker", *session.posargs)


@nox.session
@nox.parametrize("target", ci_targets())
def images(session: nox.Session, target: str) -> None:
    """One CI image: render the target's plan, gather its wheels on the host, build it on the local
    base (`envcheck docker base`, built only when absent), verify inside, and write
    .nox/reports/<target>.json. A target whose wheels cannot be had here (ROCm) is rendered only
    and its report says why; device checks skip without a GPU and say so."""
    session.install("-e", ".[docker]")
    session.run("envcheck", "docker", "base")
    session.run("envcheck", "docker", "ci", target, "--base-image", "envcheck-base:bookworm",
                "--report", f".nox/reports/{target}.json", "--force", *session.posargs,
                env={"PIP_RETRIES": "1"})  # an unreachable index fails fast instead of retrying for minutes


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Speed ratios against baselines measured in the same run."""
    session.install("-e", ".[all]")
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def update_matrices(session: nox.Session) -> None:
    """Refresh matrices/generated-index-*.toml from the real indexes (network; not run by CI).

    download.pytorch.org/whl first, then plain PyPI; extra arguments go to both runs
    (e.g. `nox -s update_matrices -- --dry-run`).
    """
    session.install("-e", ".[update]")
    session.run("envcheck", "matrix", "update", "--matrices", "matrices", *session.posargs)
    session.run("envcheck", "matrix", "update", "--matrices", "matrices", "--index", "https://pypi.org/simple/",
                *session.posargs)
    session.run("envcheck", "matrix", "status", "--matrices", "matrices")


@nox.session
def device(session: nox.Session) -> None:
    """On a GPU machine: install the build `envcheck plan` picks for it, run every verify check with
    --save-facts, and write the facts under tests/fixtures/verify/recorded/ (tests/device/run.py;
    within 8 minutes). `nox -s device -- --wheelhouse DIR` installs offline from a folder of wheels."""
    session.install("-e", ".")
    session.run("python", "tests/device/run.py", *session.posargs)
