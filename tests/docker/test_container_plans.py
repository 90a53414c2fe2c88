"""A Dockerfile is always a Linux container (newcomer H6, M14, M10), built for real.

A Windows plan's Dockerfile carried the PowerShell verify step into a Linux image (`/bin/sh: Syntax
error: "{" unexpected`); every Dockerfile's verify step ran `envcheck verify --python "$VENV/bin/python"
--lock envcheck.lock.toml` with `$VENV` undefined and no lock in the image, which fails the build as
soon as the base image has envcheck (as `fleet k8s` asks). Here a Windows plan is built with
`envcheck docker build` on the local base image that *has* envcheck (this checkout and its pure-Python
dependencies, run by the image's Python 3.11): the image is the plan re-resolved for a Linux
container (Intel Arc on Windows: no GPU route into a container, so the CPU build), and its verify
step runs the real `envcheck verify` against the lock the Dockerfile puts in the image.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docker.conftest import RUN, RUN_LABEL, derive_image, run_tag

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
#: envcheck's runtime dependencies, all pure Python (pyproject.toml), taken from the test interpreter
DEPS = ("packaging", "tomli_w", "rich", "pygments", "markdown_it", "mdurl")
WINDOWS = ["--os", "windows", "--gpu", "Arc A770", "--torch", "2.13.0", "--python", "3.11"]


def _package_files() -> dict:
    import importlib

    files = {}
    roots = [ROOT / "envcheck"] + [Path(importlib.import_module(d).__file__).parent for d in DEPS]
    for root in roots:
        for p in root.rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                files[f"site/{root.name}/{p.relative_to(root)}"] = p.read_bytes()
    for d in ("matrices", "dockerfiles", "conda", "schemas"):
        for p in (ROOT / d).rglob("*"):
            if p.is_file():
                files[f"site/{d}/{p.relative_to(ROOT / d)}"] = p.read_bytes()
    return files


@pytest.fixture(scope="module")
def base_with_envcheck(engine, run_base):
    """The run's base image plus envcheck on PATH (quick tier: the build runs verify)."""
    tag = run_tag("base-envcheck:1")
    return derive_image(engine, run_base, tag, [
        f"LABEL {RUN_LABEL}={RUN}",
        "COPY site /opt/envcheck-site",
        "RUN printf '#!/bin/sh\\nPYTHONPATH=/opt/envcheck-site exec /opt/venv/bin/python -m envcheck \"$@\"\\n' "
        "> /usr/local/bin/envcheck && chmod +x /usr/local/bin/envcheck && envcheck --version",
        "ENV ENVCHECK_VERIFY_TIER=quick",
    ], _package_files())


def test_windows_plan_builds_a_linux_image_whose_verify_step_runs_envcheck(cli, engine, base_with_envcheck,
                                                                         wheelhouse):
    from envcheck.docker.build import remove_image

    tag = run_tag("torch:windows-plan")
    res = cli(["docker", "build", *WINDOWS, "--base-image", base_with_envcheck, "--wheelhouse", str(wheelhouse),
               "--packages", "torch", "--tag", tag, "--json"])
    try:
        assert res.code == 0, res.out[-3000:] + res.err[-3000:]
        built = res.json()
        text = built["dockerfile"]
        assert built["pins"] == {"torch": "2.13.0+cpu"}  # the Linux CPU build, not the Windows xpu one
        assert "A Dockerfile is a Linux container" in text and "Get-Command" not in text
        assert 'envcheck verify --python "$VENV/bin/python"' in text and "ENV VENV=/opt/venv" in text
        # the lock the verify step read is in the image, and is the container's plan
        c = engine.containers.run(tag, ["cat", "/opt/envcheck/envcheck.lock.toml"], remove=True,
                                  network_disabled=True, labels={RUN_LABEL: RUN})
        lock = c.decode()
        assert 'os = "linux"' in lock and "2.13.0+cpu" in lock
    finally:
        remove_image(engine, tag)
