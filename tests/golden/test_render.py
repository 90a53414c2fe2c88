"""The files `envcheck plan --format all` writes (requirements.txt, environment.yml, Dockerfile,
envcheck.lock.toml, pyproject.uv.toml), byte for byte, for a spread of the golden machines.

Reviewed diffs instead of substring checks: a change to a template or a renderer shows here as the
text users get. The lock's ``generated`` time is the one line normalised. Regenerate after a
deliberate change with ``ENVCHECK_UPDATE_GOLDEN=1 pytest tests/golden`` and say why in the commit.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.golden.cases import PLAN_CASES
from tests.golden.golden import UPDATE_ENV, updating

HERE = Path(__file__).resolve().parent / "render"
#: one per kind of recipe: CUDA (new, old, datacenter aarch64, Windows), ROCm native and WSL,
#: macOS, Jetson, CentOS 7 CPU (not XPU: `--format all` has no Docker base for it, exit 2)
RENDERED = ["rtx4090-driver550", "gtx1080ti-driver470", "h100-aarch64-driver560", "rtx3060-windows",
            "mi300x", "7900xtx-wsl", "rtx5090-driver570-py311", "apple-macos14", "jetson-orin", "centos7-cpu-py38"]
GENERATED = re.compile(r'^generated = "[^"]*"(?=\r?$)', re.M)  # install.ps1: CRLF


def test_rendered_cases_are_golden_machines():
    assert set(RENDERED) <= set(PLAN_CASES)


@pytest.mark.parametrize("name", RENDERED)
def test_rendered_files_are_byte_identical(name):
    res = run_cli(["plan", *PLAN_CASES[name], "--format", "all"])
    assert res.code == 0, res.err
    assert res.out.count("==> ") >= 4, res.out[:500]
    text = GENERATED.sub('generated = "<time>"', res.out)
    assert text.count('generated = "<time>"') >= 1  # the lock, and the copy install.sh carries
    path = HERE / f"{name}.txt"
    if updating():
        HERE.mkdir(exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as fh:  # install.ps1 keeps its CRLF
            fh.write(text)
    assert path.exists(), f"no golden file {path}; create it with {UPDATE_ENV}=1"
    with open(path, encoding="utf-8", newline="") as fh:
        want = fh.read()
    if text != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True), str(path), "now"))
        pytest.fail(f"plan {' '.join(PLAN_CASES[name])} --format all changed; if deliberate, regenerate with "
                    f"{UPDATE_ENV}=1 and say why in the commit:\n{diff[:6000]}")
