"""plan --format uv: the tables merged into a real pyproject.toml are locked and synced by the real
uv against a local index (127.0.0.1), offline; two builds become conflicting extras."""

from __future__ import annotations

import pytest

from tests.integrations.conftest import TORCH, python311, run, torch_version

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import tomli_w

PLAN = ["plan", "--backend", "cpu", "--torch", TORCH, "--python", "3.11", "--without", "torchvision,torchaudio",
        "--format", "uv"]


def project(tmp_path, fragment: str):
    """A user's project: their name/version plus envcheck's tables, merged as the header says."""
    doc = tomllib.loads(fragment)
    doc["project"] = {"name": "demo", "version": "0.1.0", **doc["project"]}
    d = tmp_path / "proj"
    d.mkdir()
    (d / "pyproject.toml").write_text(tomli_w.dumps(doc))
    return d, doc


def test_uv_lock_and_sync_install_the_planned_torch(cli, two_variant_index, uv_bin, uv_env, tmp_path):
    mirror = two_variant_index
    uv_env = dict(uv_env, UV_DEFAULT_INDEX=f"{mirror}/cpu")
    r = cli([*PLAN, "--mirror", mirror])
    assert r.code == 0, r.err
    d, doc = project(tmp_path, r.out)
    # torch 2.13's Pythons (3.10–3.14), not ==3.11.*, and not past the last one its wheels have (newcomer5 #6)
    assert doc["project"]["requires-python"] == ">=3.10,<3.15"
    (idx,) = doc["tool"]["uv"]["index"]
    assert idx["explicit"] is True and idx["url"] == f"{mirror}/cpu"
    assert "platform_machine == 'x86_64'" in doc["tool"]["uv"]["sources"]["torch"][0]["marker"]
    lock = run([uv_bin, "lock"], cwd=d, env=uv_env)
    assert lock.returncode == 0, lock.stderr[-3000:]
    locked = tomllib.loads((d / "uv.lock").read_text())
    torch = [p for p in locked["package"] if p["name"] == "torch"]
    assert any(p["version"] == f"{TORCH}+cpu" and p["source"].get("registry") == f"{mirror}/cpu" for p in torch)
    sync = run([uv_bin, "sync", "--python", python311()], cwd=d, env=uv_env)
    assert sync.returncode == 0, sync.stderr[-3000:]
    assert torch_version(d / ".venv" / "bin" / "python") == f"{TORCH}+cpu"


def test_two_builds_are_conflicting_extras_that_uv_keeps_apart(cli, two_variant_index, uv_bin, uv_env, tmp_path,
                                                                 monkeypatch):
    monkeypatch.setenv("UV_DEFAULT_INDEX", f"{two_variant_index}/cpu")
    r = cli([*PLAN, "--extras", "cu130", "--mirror", two_variant_index])
    assert r.code == 0, r.err
    d, doc = project(tmp_path, r.out)
    assert doc["tool"]["uv"]["conflicts"] == [[{"extra": "cpu"}, {"extra": "cu130"}]]
    assert {s["extra"]: s["index"] for s in doc["tool"]["uv"]["sources"]["torch"]} == {
        "cpu": "pytorch-cpu", "cu130": "pytorch-cu130"}
    env = dict(uv_env, UV_DEFAULT_INDEX=f"{two_variant_index}/cpu")
    lock = run([uv_bin, "lock"], cwd=d, env=env)
    assert lock.returncode == 0, lock.stderr[-3000:]
    registries = {p["source"].get("registry") for p in tomllib.loads((d / "uv.lock").read_text())["package"]
                  if p["name"] == "torch"}
    assert registries == {f"{two_variant_index}/cpu", f"{two_variant_index}/cu130"}
    both = run([uv_bin, "sync", "--python", python311(), "--extra", "cpu", "--extra", "cu130"], cwd=d, env=env)
    assert both.returncode != 0 and "conflict" in both.stderr.lower()
    one = run([uv_bin, "sync", "--python", python311(), "--extra", "cu130"], cwd=d, env=env)
    assert one.returncode == 0, one.stderr[-3000:]
    assert torch_version(d / ".venv" / "bin" / "python") == f"{TORCH}+cpu"  # the only wheel either index has


@pytest.mark.parametrize("flag,want", [([], ">=3.10,<3.15"), (["--pin-python"], "==3.11.*")])
def test_requires_python_is_wide_unless_pinned(cli, flag, want):
    r = cli([*PLAN, *flag])
    assert r.code == 0, r.err
    assert tomllib.loads(r.out)["project"]["requires-python"] == want


def test_unknown_extra_is_exit_2(cli):
    r = cli([*PLAN, "--extras", "cu999"])
    assert r.code == 2 and "cu999" in r.err and "Traceback" not in r.err
