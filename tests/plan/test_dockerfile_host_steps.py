"""A Dockerfile's host prerequisites never restate a host step in words of their own (newcomer5 #7).

The WSL Dockerfile said ``Host prerequisite: … amdgpu-install --usecase=wsl,rocm`` (a sentence in
matrices/docker.toml) while its own recipe step, from matrices/recipe.toml, ran
``amdgpu-install --usecase=rocm`` for the ROCDXG route: one file, two answers. How to install the host
side is said once, in the recipe rows; a base image row only says what is particular to containers.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import run_cli
from tests.golden.cases import PLAN_CASES

USECASE = re.compile(r"amdgpu-install\b[^\n]*?--usecase=([\w,]+)")


def _wsl_builds():
    from envcheck.matrix import load_matrix

    m = load_matrix()
    return sorted({(t, b.variant) for b in m.builds if b.wsl for t in b.torch})


def _dockerfile(flags):
    r = run_cli(["plan", "-q", *flags, "--format", "docker"])
    assert r.code == 0, r.err
    return r.out


def _check_one_answer(text):
    said = set(USECASE.findall(text))
    assert len(said) <= 1, f"two amdgpu-install usecases in one Dockerfile: {sorted(said)}"
    prereq = [ln for ln in text.splitlines() if ln.startswith("# Host prerequisite:")]
    for ln in prereq:
        assert "amdgpu-install" not in ln and "--usecase" not in ln, ln


@pytest.mark.parametrize("torch,variant", _wsl_builds())
def test_every_wsl_rocm_route_says_its_host_step_once(torch, variant):
    """Every AMD WSL wheel set on record: the legacy hsa-runtime-rocr4wsl route (ROCm 6.x, 7.2.0) and
    the ROCDXG route (7.2.1) alike."""
    text = _dockerfile(["--gpu", "7900xtx", "--wsl", "--torch", torch, "--backend", variant])
    assert f"+{variant}" in text.splitlines()[1], text.splitlines()[1]
    _check_one_answer(text)
    assert USECASE.search(text), "the recipe's runtime step is listed in the Dockerfile"


@pytest.mark.parametrize("name", ["7900xtx-native", "mi300x", "7900xtx-wsl", "rtx4090-driver550", "jetson-orin",
                                  "h100-aarch64-driver560"])
def test_golden_machines_say_each_host_step_once(name):
    _check_one_answer(_dockerfile(PLAN_CASES[name]))


def test_base_image_rows_name_no_recipe_command():
    """The data rule behind it: no base image prerequisite spells a command a recipe row runs."""
    from envcheck.matrix import load_matrix

    m = load_matrix()
    commands = {w for r in m.recipe for ln in r.commands.splitlines() for w in ln.split()
                if w.startswith("--usecase") or w == "amdgpu-install"}
    assert commands, "the recipe rows run amdgpu-install"
    for img in m.base_images:
        for p in img.prerequisites:
            assert not any(c in p for c in commands), (img.image, p)
