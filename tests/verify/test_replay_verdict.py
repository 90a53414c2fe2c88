"""The same saved facts give the same verdict (newcomer3 #7), and a package the lock pins that is
missing fails the lock check like a wrong version (newcomer3 #10) — with real venvs and real torch.

The venv here has torch 2.13.0 and torchvision 0.29.0 installed with ``--no-deps`` (torchvision 0.29
is built for torch 2.14): every tier fails ``torchvision_compat`` — the quick tier too (newcomer5 #2:
it collected the failure for its ``lock`` check but did not judge it, so a node where
``import torchvision`` fails passed a quick-tier Slurm prolog with exit 0).
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import run_cli
from tests.verify.conftest import make_torch_venv

pytestmark = pytest.mark.subprocess  # real venvs with real torch


@pytest.fixture(scope="module")
def tv_venv(tmp_path_factory):
    py = make_torch_venv(tmp_path_factory.mktemp("venv") / "torch-tv-mismatch", "torch==2.13.0", "numpy")
    proc = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", "torchvision==0.29.0"],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"pip install torchvision==0.29.0 failed:\n{proc.stdout}\n{proc.stderr}")
    return py


@pytest.fixture(scope="module")
def quick(tv_venv, tmp_path_factory):
    """A quick-tier run that saved its facts (as the newcomer ran it)."""
    saved = tmp_path_factory.mktemp("facts") / "facts.json"
    r = run_cli(["verify", "--python", str(tv_venv), "--tier", "quick", "--json", "--save-facts", str(saved)])
    return r, saved


def test_replayed_quick_facts_give_the_quick_verdict(quick):
    live, saved = quick
    # the quick tier judges torchvision's probe: a companion that does not work fails the prolog
    assert live.code == 1, live.out + live.err
    judged = {c["name"]: c for c in live.json()["checks"]}
    assert judged["torchvision_compat"]["status"] == "fail", judged["torchvision_compat"]
    assert judged["torchaudio_compat"]["status"] == "skip", judged["torchaudio_compat"]
    facts = json.loads(saved.read_text())
    assert facts["runs"]["torchvision_compat"]["outcome"] in ("ok", "error", "crash")
    assert facts["collector"]["tier"] == "quick"
    assert facts["collector"]["checks"] == [c["name"] for c in live.json()["checks"]]
    replay = run_cli(["verify", "--facts", str(saved), "--json"])
    assert replay.code == 1, replay.out + replay.err
    assert [c["name"] for c in replay.json()["checks"]] == [c["name"] for c in live.json()["checks"]]
    # the node report from the replay carries the tier the facts were judged with
    out = saved.parent / "node.json"
    assert run_cli(["verify", "--facts", str(saved), "--report", str(out), "--host", "n1"]).code == 1
    assert json.loads(out.read_text())["tier"] == "quick"


def test_an_explicit_tier_still_wins(quick):
    _, saved = quick
    full = run_cli(["verify", "--facts", str(saved), "--tier", "full", "--json"])
    assert full.code == 1, full.out
    checks = {c["name"]: c for c in full.json()["checks"]}
    assert checks["torchvision_compat"]["status"] == "fail", checks["torchvision_compat"]
    only = run_cli(["verify", "--facts", str(saved), "--checks", "torchvision_compat", "--json"])
    assert only.code == 1 and [c["name"] for c in only.json()["checks"]] == ["torchvision_compat"]


def test_skip_narrows_the_recorded_checks(quick):
    _, saved = quick
    r = run_cli(["verify", "--facts", str(saved), "--skip", "matmul,torchvision_compat", "--json"])
    names = [c["name"] for c in r.json()["checks"]]
    assert "matmul" not in names and "torchvision_compat" not in names and "import_torch" in names
    assert r.code == 0, r.out  # the failing check skipped: what is left passes
    bad = run_cli(["verify", "--facts", str(saved), "--skip", ",".join(json.loads(saved.read_text())["collector"]["checks"])])
    assert bad.code == 2 and "--skip leaves none of the checks these facts were judged with" in bad.err


def test_a_whole_json_report_replays_its_own_checks(quick, tmp_path):
    """``verify --json > node07.json`` then ``verify --facts node07.json`` (the --help example), from
    an envcheck that did not record the checks in the facts: the report's check list says."""
    live, _ = quick
    doc = live.json()
    doc["facts"]["collector"].pop("checks")
    doc["facts"]["collector"].pop("tier")
    report = tmp_path / "node07.json"
    report.write_text(json.dumps(doc))
    replay = run_cli(["verify", "--facts", str(report), "--json"])
    assert replay.code == live.code == 1, replay.out
    assert [c["name"] for c in replay.json()["checks"]] == [c["name"] for c in doc["checks"]]


# -- newcomer3 #10: a companion the lock pins and the environment lacks -----------------------------

@pytest.fixture(scope="module")
def cpu_lock(tmp_path_factory):
    d = tmp_path_factory.mktemp("lock")
    r = run_cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--format", "lock", "-o", str(d)])
    assert r.code == 0, r.err
    return d / "envcheck.lock.toml"


def test_a_missing_companion_the_lock_pins_fails(torch_venv, cpu_lock):
    """torch_venv has torch 2.13.0+cpu and no torchvision; the lock pins torchvision 0.28.0+cpu."""
    assert '"torchvision==0.28.0+cpu"' in cpu_lock.read_text()
    r = run_cli(["verify", "--python", str(torch_venv), "--lock", str(cpu_lock), "--tier", "quick", "--json"])
    assert r.code == 1, r.out
    check = next(c for c in r.json()["checks"] if c["name"] == "lock")
    assert check["status"] == "fail", check
    assert "torchvision: lock 0.28.0+cpu, not installed" in check["detail"]
    # the fix installs what the lock pins for the missing packages, from the lock's index
    assert check["fix"] == (f"Install what the lock pins: `{torch_venv} -m pip install torchvision==0.28.0+cpu "
                            "--index-url https://download.pytorch.org/whl/cpu`.")
    assert "--force-reinstall" not in check["fix"] and "torch==2.13.0+cpu" not in check["fix"]


def test_a_wrong_companion_still_fails_with_the_reinstall(tv_venv, cpu_lock):
    r = run_cli(["verify", "--python", str(tv_venv), "--lock", str(cpu_lock), "--checks", "lock", "--json"])
    assert r.code == 1, r.out
    (check,) = r.json()["checks"]
    assert "torchvision: lock 0.28.0+cpu, installed 0.29.0" in check["detail"]
    assert "--force-reinstall torch==2.13.0+cpu torchvision==0.28.0+cpu" in check["fix"]


def test_a_lock_without_companions_passes(torch_venv, tmp_path):
    r = run_cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--without", "torchvision",
                 "--without", "torchaudio", "--format", "lock", "-o", str(tmp_path)])
    assert r.code == 0, r.err
    v = run_cli(["verify", "--python", str(torch_venv), "--lock", str(tmp_path / "envcheck.lock.toml"),
                 "--checks", "lock", "--json"])
    assert v.code == 0, v.out
    assert v.json()["checks"][0]["status"] == "pass"
