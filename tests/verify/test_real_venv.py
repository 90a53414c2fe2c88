"""verify for real: a fresh venv with torch 2.13.0 (CPU build), checked against locks from `envcheck plan`."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.subprocess  # real interpreters, venvs, tools (tests/README.md)


@pytest.fixture(scope="module")
def locks(tmp_path_factory):
    """Locks written by `envcheck plan` for this machine: the right one, another release, another variant."""
    from tests.conftest import run_cli

    out = {}
    for name, args in {"right": ["--backend", "cpu", "--torch", "2.13.0", "--without", "torchvision",
                                 "--without", "torchaudio"],
                       "older": ["--backend", "cpu", "--torch", "2.12.0"],
                       "cuda": ["--backend", "cu130", "--torch", "2.13.0"]}.items():
        d = tmp_path_factory.mktemp(f"plan-{name}")
        r = run_cli(["plan", *args, "--python", "3.11", "--format", "lock", "-o", str(d), "--force"])
        assert r.code == 0, r.err
        out[name] = d / "envcheck.lock.toml"
    return out


@pytest.fixture(scope="module")
def full_run(torch_venv, locks):
    """Every check (torch.compile included) against the right lock, once."""
    from tests.conftest import run_cli

    return run_cli(["verify", "--python", str(torch_venv), "--lock", str(locks["right"]), "--json"])


def test_everything_passes_or_skips_with_a_reason(full_run):
    assert full_run.code == 0, full_run.out + full_run.err
    checks = {c["name"]: c for c in full_run.json()["checks"]}
    for name in ("import_torch", "cuda_build", "allocation", "matmul", "cudnn_conv", "distributed", "torch_compile"):
        assert checks[name]["status"] == "pass", checks[name]
    assert "torch 2.13.0+cpu" in checks["import_torch"]["detail"]
    # the libraries real torch loaded, read from /proc/self/maps, and the wheels with their installer
    assert checks["environment"]["status"] == "pass", checks["environment"]
    env = full_run.json()["facts"]["runs"]["environment"]["data"]
    assert any(p.endswith("/torch/lib/libtorch_cpu.so") and "site-packages" in p for p in env["after_import"])
    assert env["accelerators"] == {"cuda": False, "xpu": False, "mps": False}
    (dist,) = full_run.json()["facts"]["packages"]["torch"]
    assert dist["name"] == "torch" and dist["installer"] == "pip" and dist["version"] == "2.13.0+cpu"
    assert "CPU-only build (torch.version.cuda is None); no NVIDIA/AMD/Intel GPU on this machine" in checks["cuda_build"]["detail"]
    assert "cpu float32" in checks["matmul"]["detail"] and "cpu bfloat16" in checks["matmul"]["detail"]
    assert "gloo all_reduce across 2 processes" in checks["distributed"]["detail"]
    assert checks["stream_sync"] == {**checks["stream_sync"], "status": "skip",
                                     "detail": "no CUDA/ROCm device: streams and events need one"}
    assert checks["arch_compat"]["detail"] == "CPU-only build: no GPU kernels to match"
    assert checks["driver"]["detail"] == "not a CUDA build: no NVIDIA driver needed"
    # the lock pins no companion (this venv has none: a missing pin fails, tests/verify/test_replay_verdict.py)
    assert checks["lock"]["status"] == "pass"
    assert "matches" in checks["lock"]["detail"] and "torch 2.13.0+cpu (cpu), Python 3.11" in checks["lock"]["detail"]


def test_facts_describe_the_venv(full_run, torch_venv):
    facts = full_run.json()["facts"]
    assert facts["python"]["executable"] == str(torch_venv)
    assert facts["python"]["version"].startswith("3.11.")
    assert facts["runs"]["import_torch"]["data"]["version"] == "2.13.0+cpu"
    assert facts["packages"]["torch"][0]["version"] == "2.13.0+cpu"
    assert facts["collector"]["workers"] == 1
    assert facts["machine"]["os"] == "linux"
    for row in facts["runs"]["matmul"]["data"]["results"]:
        assert 0 < row["rel_error"] < 0.03


def test_another_release_in_the_lock_fails_with_the_reinstall(cli, torch_venv, locks):
    r = cli(["verify", "--python", str(torch_venv), "--lock", str(locks["older"]), "--checks", "lock", "--json"])
    assert r.code == 1
    (check,) = r.json()["checks"]
    assert check["status"] == "fail"
    assert "torch: lock 2.12.0+cpu, installed 2.13.0+cpu" in check["detail"]
    assert f"`{torch_venv} -m pip install --force-reinstall torch==2.12.0+cpu" in check["fix"]
    assert "--index-url https://download.pytorch.org/whl/cpu`" in check["fix"]


def test_another_variant_in_the_lock_fails_with_its_index(cli, torch_venv, locks):
    r = cli(["verify", "--python", str(torch_venv), "--lock", str(locks["cuda"]), "--checks", "lock,cuda_build", "--json"])
    assert r.code == 1
    checks = {c["name"]: c for c in r.json()["checks"]}
    # a lock that pins a GPU build fails cuda_build on a CPU-only torch (newcomer6 #6: e48ad72)
    assert checks["cuda_build"]["status"] == "fail" and "pins a GPU build" in checks["cuda_build"]["detail"]
    assert "variant: lock cu130, installed cpu" in checks["lock"]["detail"]
    assert "torch==2.13.0+cu130" in checks["lock"]["fix"]
    assert "--index-url https://download.pytorch.org/whl/cu130" in checks["lock"]["fix"]


def test_saved_facts_replay_to_the_same_report(cli, torch_venv, locks, tmp_path):
    saved = tmp_path / "facts.json"
    live = cli(["verify", "--python", str(torch_venv.parent.parent), "--skip", "torch_compile",
                "--save-facts", str(saved), "--json"])
    assert live.code == 0, live.err
    replay = cli(["verify", "--facts", str(saved), "--skip", "torch_compile", "--json"])
    assert replay.code == 0
    assert replay.json()["checks"] == live.json()["checks"]
    assert json.loads(saved.read_text())["runs"]["distributed"]["outcome"] == "ok"


def test_text_report(cli, torch_venv):
    r = cli(["verify", "--python", str(torch_venv), "--checks", "import_torch,matmul,stream_sync"])
    assert r.code == 0
    assert r.out.splitlines()[0] == f"envcheck verify — {torch_venv} (Python {r.out.split('(Python ')[1].split(')')[0]}), torch 2.13.0+cpu"
    assert " PASS matmul" in r.out and " SKIP stream_sync" in r.out
    assert "3 checks: 2 passed, 0 warning(s), 1 skipped, 0 failed" in r.out


def test_another_machines_lock_names_the_machine_it_was_made_for(cli, torch_venv, tmp_path):
    """newcomer5 #9: a lock planned for an RTX 4090 (the lock records its [machine]), verified in this CPU
    venv, must say which machine the lock was made for and that this is why its pins differ — not only
    list the differences. On a machine with a GPU the "this one" side names that GPU instead."""
    out = tmp_path / "rtx4090"
    r = cli(["plan", "--gpu", "RTX 4090", "-o", str(out)])
    assert r.code == 0, r.err
    r = cli(["verify", "--python", str(torch_venv), "--lock", str(out / "envcheck.lock.toml"), "--checks", "lock",
             "--json"])
    assert r.code == 1
    (check,) = r.json()["checks"]
    assert check["status"] == "fail"
    assert ("which was made for another machine (Linux x86_64, GeForce RTX 4090 (sm_89); this one: Linux "
            in check["detail"]), check["detail"]
    assert "that is why its pins are not this machine's: torch: lock " in check["detail"], check["detail"]
    assert check["fix"].startswith("This lock is for another machine (Linux x86_64, GeForce RTX 4090 (sm_89); "
                                   "this one: "), check["fix"]
