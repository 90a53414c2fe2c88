"""`envcheck plan` as a user runs it: files, JSON, exit codes, bad input."""

from __future__ import annotations

import sys

import pytest

from envcheck.matrix.load import tomllib


def test_writes_four_files_and_refuses_to_clobber(cli, tmp_path):
    out = tmp_path / "out"
    r = cli(["plan", "--gpu", "RTX 4090", "--python", "3.12", "-o", str(out)])
    assert r.code == 0, r.err
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["Dockerfile", "environment.yml", "envcheck.lock.toml", "requirements.txt"])
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    r2 = cli(["plan", "--gpu", "7900xtx", "-o", str(out)])
    assert r2.code == 2
    assert "refusing to overwrite" in r2.err and "--force" in r2.err
    assert "Traceback" not in r2.err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    r3 = cli(["plan", "--gpu", "7900xtx", "-o", str(out), "--force"])
    assert r3.code == 0
    assert (out / "requirements.txt").read_bytes() != before["requirements.txt"]
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_json_contract(cli):
    r = cli(["plan", "--gpu", "RTX 5090", "--driver", "570.124.06", "--python", "3.11", "--json"])
    assert r.code == 0
    data = r.json()
    ch = data["chosen"]
    for key in ("torch", "variant", "python", "torchvision", "torchaudio", "index_url"):
        assert key in ch
    assert ch["python"] == "3.11" and ch["variant"].startswith("cu12")
    assert data["status"] == "ok"
    assert len(data["candidates"]) > 50
    for c in data["candidates"]:
        assert set(c) >= {"torch", "variant", "python", "accepted", "reasons"}
        assert c["accepted"] == (c["reasons"] == [])
        for reason in c["reasons"]:
            assert set(reason) == {"code", "message"} and reason["message"]
    codes = {r["code"] for c in data["candidates"] for r in c["reasons"]}
    assert {"driver", "gpu-arch"} <= codes


def test_impossible_combination_exits_1_with_every_candidate(cli):
    r = cli(["plan", "--gpu", "RX 5700 XT", "--json"])
    assert r.code == 1
    data = r.json()
    assert data["chosen"] is None and data["status"] == "no_official_build"
    assert all(c["reasons"] for c in data["candidates"])
    text = cli(["plan", "--gpu", "RX 5700 XT"])
    assert text.code == 1 and "gfx1010" in text.out and "--backend cpu" in text.out


def test_unknown_gpu_exit_2_with_close_matches(cli):
    r = cli(["plan", "--gpu", "RTX 4095"])
    assert r.code == 2
    assert "unknown GPU" in r.err and "4090" in r.err
    assert "Traceback" not in r.err


@pytest.mark.parametrize("args, words", [
    (["--python", "python-three"], ["--python", "3.12"]),
    (["--driver", "latest", "--gpu", "T4"], ["--driver", "570.124.06"]),
    (["--distro", "centos77"], ["unknown distro", "centos7"]),
    (["--torch", "~~2"], ["--torch"]),
    (["--backend", "cuda12"], ["--backend", "cu128"]),
    (["--format", "pip,wheel"], ["--format", "wheel"]),
    (["--wsl", "--os", "windows"], ["--wsl"]),
    (["--mirror", "not a url"], ["--mirror"]),
    (["--machine", "/nonexistent/machine.toml"], ["machine.toml", "cannot read"]),
])
@pytest.mark.subprocess
def test_bad_input_is_exit_2_without_traceback(cli, args, words):
    r = cli(["plan", *args])
    assert r.code == 2, (args, r.out, r.err)
    assert "Traceback" not in r.err
    for w in words:
        assert w in r.err, (w, r.err)


def test_malformed_machine_file_names_file_and_key(cli, tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('schema = 1\n[machine]\nos = "linux"\n[[machine.gpus]]\nvendor = "nvidia"\nname = "x"\narch = "ampere"\n')
    r = cli(["plan", "--machine", str(f)])
    assert r.code == 2
    assert str(f) in r.err and "machine.gpus[0].arch" in r.err


def test_machine_file_round_trip(cli, tmp_path, matrix):
    import tomli_w

    from envcheck.machine.describe import apply_flags
    from envcheck.machine.io import load_machine, machine_document

    m = apply_flags(matrix, None, gpus=["A100"], driver="535.104.05", distro="ubuntu22.04", python="3.11")
    f = tmp_path / "node.toml"
    f.write_bytes(tomli_w.dumps(machine_document(m)).encode())
    assert load_machine(f) == m
    r = cli(["plan", "--machine", str(f), "--json"])
    assert r.code == 0
    data = r.json()
    assert data["machine"]["glibc"] == "2.35" and data["chosen"]["python"] == "3.11"
    # a flag overrides one fact of the file
    r2 = cli(["plan", "--machine", str(f), "--python", "3.12", "--json"])
    assert r2.json()["chosen"]["python"] == "3.12"


def test_mirror_rewrites_every_file(cli, tmp_path):
    out = tmp_path / "o"
    mirror = "https://artifacts.example.com/pytorch-whl"
    r = cli(["plan", "--gpu", "RTX 4090", "--python", "3.12", "--mirror", mirror, "-o", str(out),
             "--format", "all"])
    assert r.code == 0, r.err
    for name in ("requirements.txt", "Dockerfile", "envcheck.lock.toml", "pyproject.uv.toml"):
        text = (out / name).read_text()
        assert mirror + "/cu" in text, name
        assert "download.pytorch.org/whl/cu" not in text.replace("# ", "").split("rejected:")[0] or name == "x"
    lock = tomllib.loads((out / "envcheck.lock.toml").read_text())
    assert lock["build"]["index_url"].startswith(mirror)


def test_explain_lists_candidates(cli):
    r = cli(["plan", "--gpu", "GTX 1080 Ti", "--explain"])
    assert r.code == 0
    assert "every candidate" in r.out
    assert "sm_61" in r.out


def test_help_teaches(cli):
    r = cli(["plan", "--help"])
    assert r.code == 0
    for word in ("examples:", "--gpu", "exit codes", "--explain", "ranks" if False else "newest torch"):
        assert word in r.out


@pytest.mark.subprocess
def test_plan_never_imports_torch(tmp_path):
    import subprocess

    code = ("import sys; from envcheck.cli import main; rc = main(['plan','--gpu','RTX 4090','--json']); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_exit_1_says_what_the_readme_and_help_say(cli):
    """newcomer3 #13: README/--help said exit 1 lists "every candidate"; the default output counts the
    reasons (one example each) and --explain/--json list every candidate. The sentences say so now."""
    import re
    from pathlib import Path

    args = ["plan", "--gpu", "RTX 5090", "--driver", "550.54.15", "--python", "3.11"]
    text = cli(args)
    assert text.code == 1
    checked = int(re.search(r"\((\d+) candidates checked, none fits\)", text.out).group(1))
    reasons = re.findall(r"^  ([a-z-]+) +(\d+)  e\.g\. ", text.out, re.M)
    assert reasons and len(text.out.splitlines()) < checked  # counted, not listed one by one
    doc = cli([*args, "--json"]).json()
    assert len(doc["candidates"]) == checked and not any(c["accepted"] for c in doc["candidates"])
    assert {code for code, _ in reasons} <= {r["code"] for c in doc["candidates"] for r in c["reasons"]}
    explained = cli([*args, "--explain"]).out
    assert "every candidate" in explained and "torch 2.15.0+cu132" in explained
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    assert ("1 none fits (the reasons, counted with an example each, and what you can do; `--explain` and `--json` "
            "list every candidate with its reasons)") in readme
    assert "every candidate is listed" not in readme
    help_text = " ".join(cli(["plan", "--help"]).out.split())
    assert "--explain and --json list every candidate with its reasons" in help_text
