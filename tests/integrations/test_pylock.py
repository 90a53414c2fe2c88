"""plan --format pylock: a PEP 751 lock that packaging.pylock accepts and the real uv installs from
a local index, offline; its hashes are the files' real sha256 (a changed one is refused)."""

from __future__ import annotations

import hashlib
import re

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from tests.integrations.conftest import TORCH, python311, run, torch_version

PLAN = ["plan", "--backend", "cpu", "--torch", TORCH, "--python", "3.11", "--without", "torchvision,torchaudio"]


@pytest.fixture
def lock(cli, mirror, uv_env, uv_bin, tmp_path, monkeypatch):
    monkeypatch.setenv("ENVCHECK_UV", uv_bin)
    out = tmp_path / "plan"
    r = cli([*PLAN, "--mirror", mirror, "--format", "pylock", "-o", str(out)])
    assert r.code == 0, r.err
    return out / "pylock.toml"


def test_pylock_is_valid_pep751_with_every_dependency_and_real_hashes(lock, wheelhouse, mirror):
    from packaging.pylock import Pylock

    doc = tomllib.loads(lock.read_text())
    Pylock.from_dict(doc).validate()
    assert doc["lock-version"] == "1.0"
    # uv writes ">=3.11" for --python-version 3.11, yet it resolved for 3.11 alone (newcomer5 #6)
    assert doc["requires-python"] == "==3.11.*"
    by_name = {p["name"]: p for p in doc["packages"]}
    # the closure of torch 2.13.0's dependencies, as pip downloaded it (file names, not our code)
    want = {re.sub(r"[-_.]+", "-", w.name.split("-")[0]).lower() for w in wheelhouse.glob("*.whl")}
    assert set(by_name) == want
    torch = by_name["torch"]
    assert torch["version"] == f"{TORCH}+cpu"
    (wheel,) = torch["wheels"]
    assert wheel["url"].startswith(mirror + "/")
    local = next(wheelhouse.glob("torch-*.whl"))
    assert wheel["hashes"]["sha256"] == hashlib.sha256(local.read_bytes()).hexdigest()
    assert doc["tool"]["envcheck"]["variant"] == "cpu"
    assert doc["tool"]["envcheck"]["platform"] == "linux-x86_64"


def test_uv_installs_the_pylock_offline_and_refuses_a_changed_hash(lock, uv_bin, uv_env, tmp_path):
    py = python311()
    venv = tmp_path / "venv"
    assert run([uv_bin, "venv", "--python", py, venv], env=uv_env).returncode == 0
    vpy = venv / "bin" / "python"
    r = run([uv_bin, "pip", "install", "--python", vpy, "-r", lock], env=uv_env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert torch_version(vpy) == f"{TORCH}+cpu"

    bad = tmp_path / "tampered" / "pylock.toml"
    bad.parent.mkdir()
    text = lock.read_text()
    digest = re.search(r'name = "sympy"(?s:.*?)sha256 = "([0-9a-f]{64})"', text).group(1)
    bad.write_text(text.replace(digest, "0" * 64))
    venv2 = tmp_path / "venv2"
    run([uv_bin, "venv", "--python", py, venv2], env=uv_env)
    r = run([uv_bin, "pip", "install", "--python", venv2 / "bin" / "python", "-r", bad], env=uv_env)
    assert r.returncode != 0
    assert "hash" in (r.stderr + r.stdout).lower()


def test_pylock_without_uv_is_a_one_line_error(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("ENVCHECK_UV", str(tmp_path / "no-uv-here"))
    r = cli([*PLAN, "--format", "pylock"])
    assert r.code == 3
    assert "Traceback" not in r.err
    assert "uv" in r.err


def test_pylock_for_another_machine_targets_its_platform(matrix):
    """The lock is resolved for the plan's machine, not this one: wheel tag → uv target."""
    from envcheck.render.pylock import uv_target
    from envcheck.resolve.plan import make_plan
    from tests.conftest import plan_for

    def target(**flags):
        return uv_target(make_plan(plan_for(matrix, **flags), matrix))

    assert re.fullmatch(r"x86_64-manylinux_2_(17|28)", target(gpus=["RTX 4090"], driver="580.65.06", python="3.12"))
    assert target(os="macos", arch="arm64", python="3.12") == "aarch64-apple-darwin"
    assert target(os="windows", gpus=["RTX 4090"], python="3.12") == "x86_64-pc-windows-msvc"
    assert target(distro="centos7", gpus=["V100"], python="3.9") == "x86_64-manylinux_2_17"
