"""CI-native results: GitHub Actions annotations and job summary from verify (real commands, the
recorded public cases as facts), and `envcheck lock check` — what the pre-commit hook runs."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import tomli_w

CASES = ROOT / "tests" / "fixtures" / "verify" / "cases"


@pytest.fixture
def gha(monkeypatch, tmp_path):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return summary


def test_verify_annotates_and_summarises_under_github_actions(cli, gha):
    r = cli(["verify", "--facts", str(CASES / "C01.json")])
    assert r.code == 1
    doc = cli(["verify", "--facts", str(CASES / "C01.json"), "--json"]).json()
    failed = [c for c in doc["checks"] if c["status"] == "fail"]
    errors = [ln for ln in r.out.splitlines() if ln.startswith("::error ")]
    assert len(errors) == len(failed) >= 1
    # one workflow command per line: the message's own newlines and colons in the title are escaped
    assert all(re.match(r"::error title=envcheck verify%3A [a-z_]+::", e) for e in errors)
    text = gha.read_text()
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and not ln.startswith("| status")]
    assert len(rows) == 2 * len(doc["checks"])  # two runs appended their tables
    assert "❌ fail" in text and "### envcheck verify" in text


def test_nothing_outside_github_actions(cli, monkeypatch, tmp_path):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "s.md"))
    r = cli(["verify", "--facts", str(CASES / "C01.json")])
    assert "::error" not in r.out + r.err
    assert not (tmp_path / "s.md").exists()


def test_workflow_command_escaping():
    from envcheck.ci import escape_data, escape_property

    assert escape_data("50% done\nnext") == "50%25 done%0Anext"
    assert escape_property("a:b,c") == "a%3Ab%2Cc"


@pytest.fixture
def lock(cli, tmp_path):
    out = tmp_path / "plan"
    r = cli(["plan", "--gpu", "RTX 4090", "--driver", "580.65.06", "--python", "3.12", "--torch", "2.13",
             "--format", "lock", "-o", str(out)])
    assert r.code == 0, r.err
    return out / "envcheck.lock.toml"


def edit(path, fn):
    doc = tomllib.loads(path.read_text())
    fn(doc)
    path.write_text(tomli_w.dumps(doc))
    return path


def test_lock_check_ok_outdated_broken(cli, lock, gha):
    ok = cli(["lock", "check", str(lock), "--json"])
    assert ok.code == 0 and ok.json()["locks"][0]["status"] == "ok"

    def any_torch(doc):
        doc["request"]["torch"] = "*"

    (lock.parent / "outdated.toml").write_text(lock.read_text())
    outdated = edit(lock.parent / "outdated.toml", any_torch)
    r = cli(["lock", "check", str(outdated)])
    assert r.code == 0 and "now chooses torch 2.1" in r.err
    assert "::warning " in r.out  # annotated in CI
    assert cli(["lock", "check", "--strict", str(outdated)]).code == 1

    def old_driver(doc):
        doc["machine"]["nvidia_driver"] = "450.51.05"

    (lock.parent / "broken.toml").write_text(lock.read_text())
    broken = edit(lock.parent / "broken.toml", old_driver)
    r = cli(["lock", "check", str(lock), str(broken), "--json"])
    assert r.code == 1
    st = {d["path"]: d for d in r.json()["locks"]}
    assert st[str(lock)]["status"] == "ok"
    assert st[str(broken)]["status"] == "broken" and any("driver" in x.lower() for x in st[str(broken)]["reasons"])


def test_lock_check_bad_file_is_exit_2(cli, tmp_path):
    f = tmp_path / "envcheck.lock.toml"
    f.write_text("schema = 7\n")
    r = cli(["lock", "check", str(f)])
    assert r.code == 2 and "Traceback" not in r.err
