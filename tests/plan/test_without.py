"""``--without torchvision|torchaudio`` leaves the companion out of EVERY output format: the pins,
the recipe's install step (install.sh / install.ps1, the lock's ``[[step]]``, every file's recipe
comment), environment.yml and pixi.toml, the Dockerfile of a Windows plan's container.

breaker3 F3: only requirements.txt and the Dockerfile dropped it; install.sh installed the companion
the user had left out because their mirror lacks it, and stopped at a failing step. The formats are
taken from the registry (:data:`envcheck.render.FORMATS`), so a format added later is checked too.
"""

from __future__ import annotations

import pytest

from envcheck.app.plan import OutputRequest, PlanRequest, Target, make_outputs, plan
from envcheck.render import NETWORK_FORMATS, parse_formats

ALL = tuple(parse_formats("all"))

#: machines whose plans take each route through the renderers: pip only (CPU Linux), conda-forge
#: CUDA (RTX 4090), conda-forge CPU, a Windows plan (install.ps1 + its Linux container's Dockerfile),
#: pip inside conda (ROCm), macOS
MACHINES = {
    "linux-cpu": PlanRequest(target=Target(os="linux", arch="x86_64", python="3.11", distro="debian12"),
                             torch="2.13.0", backend="cpu"),
    "linux-cuda": PlanRequest(target=Target(gpus=[["RTX 4090"]], os="linux", python="3.12")),
    "windows-cuda": PlanRequest(target=Target(gpus=[["RTX 4090"]], os="windows", python="3.12")),
    "linux-rocm": PlanRequest(target=Target(gpus=[["7900xtx"]], os="linux", python="3.12")),
    "macos": PlanRequest(target=Target(os="macos", arch="arm64", python="3.12")),
}


def _offending(files: dict, pkg: str) -> list:
    """Lines naming ``pkg`` other than the note that says it was left out."""
    return [f"{name}: {line}" for name, text in files.items() for line in text.splitlines()
            if pkg in line and "left out on request" not in line]


def _outputs(req: PlanRequest):
    result = plan(req)
    assert result.plan is not None, req
    return result.plan, make_outputs(result, req, OutputRequest(formats=ALL, print_files=True)).files


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_every_format_installs_the_companion_by_default(name):
    """The check below has teeth: without --without, torchvision is in the install step of the
    script and the lock, and (conda-forge routes) in environment.yml and pixi.toml."""
    p, files = _outputs(MACHINES[name])
    assert "torchvision" in p.pins
    script = next(n for n in files if n.startswith("install."))
    for f in (script, "envcheck.lock.toml", "environment.yml", "pixi.toml"):
        assert any("torchvision" in line for line in files[f].splitlines() if not line.startswith("#")), f


@pytest.mark.parametrize("pkg", ["torchvision", "torchaudio"])
@pytest.mark.parametrize("name", sorted(MACHINES))
def test_without_reaches_every_format(name, pkg):
    req = MACHINES[name]
    p, files = _outputs(_with(req, [pkg]))
    assert set(files) >= {"requirements.txt", "environment.yml", "Dockerfile", "envcheck.lock.toml", "pixi.toml"}
    assert len(files) == len(ALL) and not set(ALL) & set(NETWORK_FORMATS)
    assert pkg not in p.pins and pkg in p.without
    assert _offending(files, pkg) == []
    steps = [s for s in p.recipe if pkg in s.commands or pkg in s.check or pkg in s.title]
    assert steps == []
    if p.container is not None:  # a Windows plan's Dockerfile holds its Linux container's plan
        assert pkg not in p.container.pins and not [s for s in p.container.recipe if pkg in s.commands]


def _with(req: PlanRequest, without: list) -> PlanRequest:
    import dataclasses

    return dataclasses.replace(req, without=without)


def test_packages_torch_leaves_the_companions_out_of_conda_and_pixi():
    """``--packages torch`` is the same exclusion: conda and pixi follow the pins too."""
    req = MACHINES["linux-cuda"]
    result = plan(req)
    made = make_outputs(result, req, OutputRequest(formats=("conda", "pixi", "script", "lock"), packages="torch",
                                                   print_files=True))
    assert made.plan is not None and list(made.plan.pins) == ["torch"]
    for pkg in ("torchvision", "torchaudio"):
        assert [ln for ln in _offending(made.files, pkg) if not ln.split(": ", 1)[1].startswith("#")] == []


@pytest.mark.subprocess
def test_install_sh_with_without_runs_for_real(tmp_path):
    """breaker3 F3 as it was found: with `--without torchvision,torchaudio` (a mirror that has only
    torch), install.sh's install step still installed the companions and stopped at a failing step.
    A real venv with torch 2.13.0+cpu and no torchvision; the script runs to 'every step passed'."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import run_cli
    from tests.verify.conftest import given_or_new_torch_venv

    venv = given_or_new_torch_venv(tmp_path / "venv")
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    out = tmp_path / "scr"
    r = run_cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", py, "--os", "linux",
                 "--without", "torchvision,torchaudio", "--format", "script", "-o", str(out)])
    assert r.code == 0, r.err
    script = (out / "install.sh").read_text()
    assert "torchvision" not in script and "torchaudio" not in script
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), "VENV": str(venv),
           "ENVCHECK_VERIFY_TIER": "quick", "ENVCHECK_NO_CONFIG": "1"}
    for k in ("PIP_FIND_LINKS", "PIP_CONFIG_FILE", "PIP_INDEX_URL"):
        if k in os.environ:
            env[k] = os.environ[k]
    res = subprocess.run(["bash", str(out / "install.sh")], capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "==> done: every step passed" in res.stdout
