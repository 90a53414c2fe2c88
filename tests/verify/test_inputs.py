"""Bad input is exit 2 with the file and key named, never a traceback."""

from __future__ import annotations

import json

import pytest

from tests.verify.conftest import CASES

GOOD_LOCK = """\
schema = 1
[build]
torch = "2.13.0"
variant = "cpu"
index_url = "https://download.pytorch.org/whl/cpu"
[expect]
torch_version = "2.13.0+cpu"
variant = "cpu"
python = "3.11"
[pip]
lines = ["--index-url https://download.pytorch.org/whl/cpu", "torch==2.13.0+cpu"]
"""


def test_missing_interpreter(cli, tmp_path):
    r = cli(["verify", "--python", str(tmp_path / "nope" / "python")])
    assert r.code == 2
    assert f"--python {tmp_path / 'nope' / 'python'}: no such interpreter" in r.err
    assert "Traceback" not in r.err


def test_folder_without_python(cli, tmp_path):
    r = cli(["verify", "--python", str(tmp_path)])
    assert r.code == 2
    assert "a folder without bin/python" in r.err


@pytest.mark.parametrize("text, key, words", [
    ("schema = 1\n[build\n", "", "invalid TOML"),
    (GOOD_LOCK.replace('variant = "cpu"\npython', 'python'), "expect.variant", "missing (required)"),
    (GOOD_LOCK.replace('python = "3.11"', 'cudnn_version = "9.1"'), "expect.cudnn_version", "expected an integer, got a string \"9.1\""),
    (GOOD_LOCK.replace("schema = 1", "schema = 7"), "schema", "expected 1"),
    (GOOD_LOCK.replace('[build]\ntorch = "2.13.0"\n', '[build]\n'), "build.torch", "missing"),
    (GOOD_LOCK.replace('lines = [', 'lines = [1, '), "pip.lines[0]", "expected printable text on one line"),
])
def test_malformed_lock(cli, tmp_path, text, key, words):
    lock = tmp_path / "envcheck.lock.toml"
    lock.write_text(text)
    r = cli(["verify", "--lock", str(lock), "--facts", str(CASES / "C01.json")])
    assert r.code == 2
    where = f"{lock}: {key}:" if key else f"{lock}:"
    assert where in r.err and words in r.err, r.err
    assert "Traceback" not in r.err


@pytest.mark.parametrize("doc, key, words", [
    ("{not json", "", "invalid JSON"),
    (json.dumps({"schema": 1}), "runs", "missing (required): {probe name: {outcome, data}}"),
    (json.dumps({"schema": 1, "runs": {"matmul": {"outcome": "maybe"}}}), "runs.matmul.outcome", "expected one of"),
    (json.dumps({"schema": 1, "runs": {"warp_drive": {"outcome": "ok"}}}), "runs.warp_drive", "unknown probe; known probes: import_torch,"),
    (json.dumps({"schema": 1, "runs": {}, "machine": {"os": "beos"}}), "machine.os", ""),
    (json.dumps({"checks": [], "facts": {"schema": 1, "runs": {"matmul": []}}}), "facts.runs.matmul", "expected a table"),
])
def test_malformed_facts(cli, tmp_path, doc, key, words):
    f = tmp_path / "facts.json"
    f.write_text(doc)
    r = cli(["verify", "--facts", str(f)])
    assert r.code == 2
    where = f"{f}: {key}:" if key else f"{f}:"
    assert where in r.err and words in r.err, r.err


def test_unknown_check_name(cli):
    r = cli(["verify", "--checks", "matmull", "--facts", str(CASES / "C01.json")])
    assert r.code == 2
    assert "unknown check 'matmull'; did you mean matmul?" in r.err


def test_nothing_left_to_run(cli):
    r = cli(["verify", "--checks", "matmul", "--skip", "matmul", "--facts", str(CASES / "C01.json")])
    assert r.code == 2
    assert "leave no check to run" in r.err


def test_save_facts_refuses_to_overwrite(cli, tmp_path):
    out = tmp_path / "facts.json"
    out.write_text("mine")
    r = cli(["verify", "--facts", str(CASES / "C01.json"), "--save-facts", str(out)])
    assert r.code == 2
    assert "pass --force" in r.err
    assert out.read_text() == "mine"
    r = cli(["verify", "--facts", str(CASES / "C01.json"), "--save-facts", str(out), "--force"])
    assert r.code == 1
    assert json.loads(out.read_text())["runs"]["cuda_build"]["data"]["devices"][0]["capability"] == [12, 0]


def test_help_lists_every_check_and_examples(cli):
    from envcheck.verify.checks import CHECKS

    r = cli(["verify", "--help"])
    assert r.code == 0
    for name in CHECKS:
        assert f"\n  {name} " in r.out, name
    assert "envcheck verify --facts node07.json" in r.out
    assert "exit codes: 0 every check passed" in r.out


def test_json_checks_have_the_contract_keys(cli):
    r = cli(["verify", "--facts", str(CASES / "C06.json"), "--json"])
    doc = r.json()
    assert set(doc) == {"schema", "checks", "facts"}  # schemas/envcheck.verify.v1.json
    for c in doc["checks"]:
        assert {"name", "status", "seconds", "detail", "fix"} <= set(c) <= {"name", "status", "seconds", "detail",
                                                                               "fix", "rule"}
        assert c["status"] in ("pass", "fail", "skip", "warn")
    assert [c["rule"] for c in doc["checks"] if c["status"] == "fail"] == ["glibc-too-old"]
