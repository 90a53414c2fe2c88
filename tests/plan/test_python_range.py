"""The Python range an install file states never reaches past the Pythons the pinned wheels have
(newcomer5 #6): AMD's WSL wheel set is cp312 only, yet ``pyproject.uv.toml`` said
``requires-python = ">=3.12"`` — ``uv sync`` under 3.13 could not install the pinned local versions.

The oracle is the resolver itself, asked per Python: every Python the range admits must get the same
pins from ``envcheck plan --python X.Y`` (same torch, same build), and the Python just past each end
must not. That is a different path from the renderer's (each Python is resolved on its own, with
every python/companion rule), so a range computed wrongly cannot agree with it by construction.
"""

from __future__ import annotations

import json

import pytest
from packaging.specifiers import SpecifierSet

from tests.conftest import run_cli
from tests.golden.cases import PLAN_CASES

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

#: the reported case first, then every kind of route: CUDA old/new/aarch64/Windows, ROCm native,
#: XPU, macOS, Jetson (NVIDIA's one-Python folders), CentOS 7 CPU, free-threaded
CASES = ["7900xtx-wsl", "rtx4090-driver550", "gtx1080ti-driver470", "h100-aarch64-driver560", "rtx3060-windows",
         "mi300x", "intel-arc-a770", "apple-macos14", "jetson-orin", "centos7-cpu-py38", "rtx4090-py313t",
         "rtx5090-driver570-py311"]


def _plan_json(flags):
    r = run_cli(["plan", *flags, "--json"])
    return r.code, (json.loads(r.out) if r.out.strip().startswith("{") else {})


def _pins(doc):
    ch = doc.get("chosen") or {}
    return ch.get("torch"), ch.get("variant"), ch.get("torchvision"), ch.get("torchaudio")


def _requires_python(flags):
    r = run_cli(["plan", *flags, "--format", "uv"])
    assert r.code == 0, r.err
    return tomllib.loads(r.out)["project"]["requires-python"]


def _same_build_for(flags, doc, python):
    """Whether `plan --python PYTHON --torch <the pin>` still picks the very same pins."""
    torch, variant, _, _ = _pins(doc)
    pinned = [*flags]
    if "--python" in pinned:
        i = pinned.index("--python")
        del pinned[i:i + 2]
    code, other = _plan_json([*pinned, "--python", python, "--torch", torch.split("+")[0], "--backend", variant])
    return code == 0 and _pins(other) == _pins(doc)


def test_wsl_radeon_set_is_312_only():
    """The reported case: AMD's WSL set (torch 2.9.1+rocm7.2.1) has cp312 wheels only."""
    assert _requires_python(PLAN_CASES["7900xtx-wsl"]) == "==3.12.*"


@pytest.mark.parametrize("name", CASES)
def test_every_admitted_python_gets_the_pinned_wheels(name):
    flags = PLAN_CASES[name]
    code, doc = _plan_json(flags)
    assert code == 0, doc
    spec = SpecifierSet(_requires_python(flags))
    admitted = [f"3.{m}" for m in range(0, 40) if f"3.{m}" in spec]
    planned = doc["chosen"]["python"].rstrip("t")
    assert planned in admitted, (spec, planned)
    for py in admitted:
        assert _same_build_for(flags, doc, py), f"{name}: requires-python {spec} admits {py}, which the pins lack"
    # the range is as wide as the wheels allow: one step past either end is a Python they lack
    for py in (f"3.{int(admitted[0].split('.')[1]) - 1}", f"3.{int(admitted[-1].split('.')[1]) + 1}"):
        assert not _same_build_for(flags, doc, py), f"{name}: {py} has the pinned wheels, yet {spec} leaves it out"


def test_two_builds_as_extras_state_where_both_ranges_overlap():
    spec = SpecifierSet(_requires_python(["--gpu", "RTX 4090", "--extras", "cpu"]))
    code, doc = _plan_json(["--gpu", "RTX 4090"])
    assert code == 0
    cpu = ["--os", "linux", "--backend", "cpu", "--torch", doc["chosen"]["torch"].split("+")[0]]
    for py in (f"3.{m}" for m in range(0, 40)):
        if py in spec:
            assert _same_build_for(["--gpu", "RTX 4090"], doc, py)
            c, other = _plan_json([*cpu, "--python", py])
            assert c == 0 and other["chosen"]["python"] == py, py
