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


STEP_LINE = re.compile(r"^# (\[(?:host|system|python|install)\] [\w.-]+): .* — (.+?)(?: \(https?://[^)]*\))?$", re.M)
OUTSIDE_NAMED = re.compile(r"the recipe's steps? (.+?) below")


def _docker_cases():
    out = []
    for name, flags in sorted(PLAN_CASES.items()):
        r = run_cli(["plan", "-q", *flags, "--format", "docker"])
        if r.code == 0:  # a machine with no Docker base image (XPU, macOS…) has no Dockerfile to check
            out.append(pytest.param(flags, r.out, id=name))
    return out


@pytest.mark.parametrize("flags,text", _docker_cases())
def test_which_steps_run_outside_the_image_follows_the_recipe(flags, text):
    """breaker6 F12: the AMD WSL Dockerfile said "the recipe's [host] and [system] steps below, done … (not
    in the image)" and then listed a [system] step done by the image, and a step "inside the WSL guest"
    as done "on the host". Over every golden machine with a Dockerfile: the steps a prerequisite names as
    outside the image are exactly the steps listed as not done in the image, and where each is done
    agrees with the step's own runs_in (`plan --json`)."""
    where = dict(STEP_LINE.findall(text))
    assert where, text[:2000]
    outside = {m for m, w in where.items() if w not in ("by the base image / template below", "below (RUN pip install)")}
    named = set()
    for ln in (x for x in text.splitlines() if x.startswith("# Host prerequisite:")):
        for said in OUTSIDE_NAMED.findall(ln):
            named |= set(re.findall(r"\[\w+\] [\w.-]+", said))
        assert not re.search(r"the recipe's \[", ln), ln  # steps by kind, not by name: the old wording
    if named or any("not in the image" in ln for ln in text.splitlines() if ln.startswith("# Host prerequisite:")):
        assert named == outside, (named, outside)
    steps = run_cli(["plan", *flags, "--json"]).json()["chosen"]["steps"]
    wsl = "--wsl" in flags
    for s in steps:
        marker = f"[{s['kind']}] {s['key']}"
        if marker not in outside:
            continue
        if s["runs_in"] == "windows" or wsl:
            want = "Windows host" if s["runs_in"] == "windows" else "WSL2 guest"
            assert want in where[marker], (marker, where[marker])
        else:
            assert where[marker] == "on the host", (marker, where[marker])
