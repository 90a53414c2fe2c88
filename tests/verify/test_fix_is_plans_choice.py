"""One answer everywhere (#10): the build a verify fix installs is `envcheck plan`'s chosen build
for the same machine, printed with plan's own install command.

For every facts file (the public-report cases and the machines below), the machine is given to
`envcheck plan` as flags a person would type — written here from the facts by hand, independently
of envcheck's Facts → Machine converter — and every fix that installs "the build `envcheck plan`
picks for this machine" must be exactly that plan's install line.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.verify.conftest import CASES, FIXTURES

MACHINES = FIXTURES / "machines"
FILES = sorted(CASES.glob("*.json")) + sorted(MACHINES.glob("*.json"))
PICKS = "`envcheck plan` picks for this machine"


def plan_flags(doc: dict) -> list:
    """The `envcheck plan` flags that describe the machine the facts were collected on."""
    plat, py = doc.get("platform", {}), doc.get("python", {})
    flags = ["--os", plat.get("os", "linux")]
    if plat.get("arch"):
        flags += ["--arch", plat["arch"]]
    if py.get("version"):
        major, minor = py["version"].split(".")[:2]
        flags += ["--python", f"{major}.{minor}" + ("t" if py.get("free_threaded") else "")]
    if plat.get("glibc"):
        flags += ["--glibc", plat["glibc"]]
    if plat.get("wsl"):
        flags = [f for f in flags if f not in ("--os", "linux")] + ["--wsl"]
    data = (doc.get("runs", {}).get("cuda_build") or {}).get("data") or {}
    gpus = []
    for d in data.get("devices") or []:
        if d.get("gcn_arch"):
            gpus.append(d["gcn_arch"].split(":")[0])
        elif d.get("capability"):
            gpus.append("sm_{}{}".format(*d["capability"]))
    gpus = gpus or ["sm_{}{}".format(*g["capability"]) for g in (data.get("driver") or {}).get("gpus", [])]  # NVML
    saved = doc.get("machine") or {}  # the probed machine saved with the facts
    gpus = gpus or [g["arch"] for g in saved.get("gpus", []) if g.get("serve", True)]
    if gpus:
        flags += ["--gpu", *gpus]
    drv = (data.get("driver") or {}).get("version") or saved.get("nvidia_driver")
    if drv:
        flags += ["--driver", drv]
    return flags


def fixes(cli, path: Path) -> list:
    r = cli(["verify", "--facts", str(path), "--json"])
    return [c["fix"] for c in r.json()["checks"] if c["status"] in ("fail", "warn") and PICKS in c["fix"]]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_verify_fix_equals_plans_chosen(cli, path):
    doc = json.loads(path.read_text())
    found = fixes(cli, path)
    if not found:
        pytest.skip(f"{path.stem}: no fix installs a build")
    plan = cli(["plan", "--json", *plan_flags(doc)])
    chosen = plan.json()["chosen"]
    assert chosen is not None, plan.out
    opt = f"--index-url {chosen['index_url']} " if chosen["channel"] != "pypi" else ""
    # the plan's pins, then its ranges (the NumPy its torch runs with, matrices/numpy.toml), shell-quoted
    reqs = [f"{k}=={v}" for k, v in chosen["pins"].items()] + [f"{k}{v}" for k, v in chosen["requires"].items()]
    line = "-m pip install --force-reinstall " + opt + " ".join(shlex.quote(r) for r in reqs)
    for fix in found:
        cmd = re.search(r"`[^`]* (-m pip install [^`]*)`", fix)
        assert cmd and cmd.group(1) == line, (fix, line)


def test_the_check_above_is_not_vacuous(cli):
    """Enough facts files carry a fix that installs a build for the equality to mean something."""
    assert sum(1 for p in FILES if fixes(cli, p)) >= 4


def test_driver_unknown_picks_like_plan_and_lists_drivers(cli):
    # mmartial/ComfyUI-Nvidia-Docker#61: a GTX 1080 Ti (6.1) under a cu128 torch (7.0–12.0); no driver in
    # the report. The fix is plan's pick — never "the oldest CUDA that carries sm_61" (torch 1.13).
    path = MACHINES / "gtx1080ti-cu128-no-driver.json"
    (fix,) = fixes(cli, path)
    assert "torch==1.13" not in fix and "oldest CUDA" not in fix
    assert "driver is not known here" in fix and "needs ≥" in fix
