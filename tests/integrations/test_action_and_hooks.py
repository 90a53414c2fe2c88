"""The composite GitHub Action (action.yml) and the pre-commit hooks (.pre-commit-hooks.yaml): their
commands are run here as GitHub and pre-commit would run them (bash with the step's env; the hook's
entry plus the matching files)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

yaml = pytest.importorskip("yaml")

CASE = ROOT / "tests" / "fixtures" / "verify" / "cases" / "C01.json"


def expand(text: str, inputs: dict, ctx: dict) -> str:
    def one(m):
        expr = m.group(1).strip()
        if expr.startswith("inputs."):
            return str(inputs[expr[len("inputs."):]])
        if expr in ctx:
            return str(ctx[expr])
        raise AssertionError(f"unexpected expression in action.yml: {expr}")

    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def run_action(tmp_path, **given):
    """Run every `run:` step of action.yml in order, as the runner does (bash -e, the step's env)."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    inputs = {k: v.get("default", "") for k, v in action["inputs"].items()}
    inputs.update(given)
    out, summary = tmp_path / "github_output", tmp_path / "summary.md"
    out.touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENVCHECK_", "PIP_", "GITHUB_"))}
    env.update(GITHUB_ACTIONS="true", GITHUB_OUTPUT=str(out), GITHUB_STEP_SUMMARY=str(summary),
               ENVCHECK_CACHE_DIR=os.environ.get("ENVCHECK_CACHE_DIR", ""))
    ctx = {"github.action_path": str(ROOT)}
    logs, code = [], 0
    for step in action["runs"]["steps"]:
        if "run" not in step:
            continue
        step_env = dict(env, **{k: expand(str(v), inputs, ctx) for k, v in step.get("env", {}).items()})
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                           capture_output=True, text=True, env=step_env, cwd=tmp_path, timeout=900)
        logs.append(r)
        code = r.returncode
        if code != 0:
            break
    outputs = dict(ln.split("=", 1) for ln in out.read_text().splitlines() if "=" in ln)
    return action, logs, code, outputs, summary


@pytest.fixture(scope="module")
def action_python(tmp_path_factory):
    """A fresh venv: the Action's install step installs this checkout into it."""
    d = tmp_path_factory.mktemp("action-venv")
    subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    return str(d / "bin" / "python")


def test_action_verify_installs_runs_reports_and_annotates(tmp_path, action_python):
    facts = tmp_path / "my facts" / "C01.json"  # a space: the args input keeps quoting
    facts.parent.mkdir()
    shutil.copy(CASE, facts)
    action, logs, code, outputs, summary = run_action(tmp_path, python=action_python, command="verify",
                                                      args=f'--facts "{facts}"')
    assert logs[0].returncode == 0, logs[0].stderr[-2000:]  # installed from the checkout
    assert code == 1 and outputs["exit-code"] == "1"  # C01's checks fail: the step fails the job
    report = json.loads((tmp_path / outputs["report"]).read_text())
    assert report["schema"] == "envcheck.verify.v1"
    assert "::error " in logs[-1].stderr  # annotations leave the JSON report alone
    assert "### envcheck verify" in summary.read_text()
    upload = [s for s in action["runs"]["steps"] if "uses" in s][0]
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["with"]["path"] == "${{ inputs.report }}"
    assert "always()" in upload["if"]


def test_action_plan_with_quoted_gpu_and_strict(tmp_path, action_python):
    _, logs, code, outputs, _ = run_action(tmp_path, python=action_python, command="plan",
                                           args='--gpu "RTX 4090" --driver 580.65.06 --python 3.12')
    assert code == 0, logs[-1].stderr[-2000:]
    plan = json.loads((tmp_path / outputs["report"]).read_text())
    assert plan["chosen"]["torch"] and plan["machine"]["gpus"][0]["arch"] == "sm_89"
    # --prefer newest takes the newest release, whose rows are unverified: a plan with caveats
    _, logs, code, outputs, _ = run_action(tmp_path, python=action_python, command="plan", strict="true",
                                           args='--gpu "RTX 4090" --driver 580.65.06 --python 3.12 --prefer newest')
    assert code == 1 and "--strict" in logs[-1].stderr


def test_action_refuses_another_command(tmp_path, action_python):
    _, logs, code, _, _ = run_action(tmp_path, python=action_python, command="rm")
    assert code == 2 and "::error::command must be plan or verify" in logs[-1].stdout


# ---- pre-commit hooks

def hooks():
    return {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def run_hook(hook, files, cwd):
    argv = shlex.split(hook["entry"]) + ([] if hook.get("pass_filenames") is False else [str(f) for f in files])
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_hook_file_patterns():
    h = hooks()
    lock = re.compile(h["envcheck-lock-check"]["files"])
    assert lock.search("envcheck.lock.toml") and lock.search("deploy/gpu/envcheck.lock.toml")
    assert not lock.search("envcheck.lock.toml.bak") and not lock.search("my-envcheck.lock.toml")
    assert re.search(h["envcheck-matrix-validate"]["files"], "matrices/gpus-amd.toml")


def test_lock_check_hook_passes_a_fresh_lock_and_fails_a_broken_one(cli, tmp_path):
    hook = hooks()["envcheck-lock-check"]
    r = cli(["plan", "--gpu", "RTX 4090", "--driver", "580.65.06", "--python", "3.12", "--torch", "2.13",
             "--format", "lock", "-o", str(tmp_path / "gpu")])
    assert r.code == 0, r.err
    good = tmp_path / "gpu" / "envcheck.lock.toml"
    assert run_hook(hook, [good], tmp_path).returncode == 0
    bad = tmp_path / "old" / "envcheck.lock.toml"
    bad.parent.mkdir()
    bad.write_text(good.read_text().replace('nvidia_driver = "580.65.06"', 'nvidia_driver = "418.39"'))
    res = run_hook(hook, [good, bad], tmp_path)
    assert res.returncode == 1 and "no longer resolves" in res.stderr


def test_matrix_validate_hook(tmp_path):
    hook = hooks()["envcheck-matrix-validate"]
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "matrices", repo / "matrices")
    assert run_hook(hook, [], repo).returncode == 0
    f = repo / "matrices" / "torch-builds.toml"
    text = f.read_text()
    f.write_text(text.replace('torch = ["2.7.0"', 'torch = ["2.7.9"', 1))  # a build of a release not on record
    res = run_hook(hook, [], repo)
    assert res.returncode == 1 and "2.7.9" in res.stdout + res.stderr
