"""ENVCHECK_* variables: each one either sets something or is said not to — never silently ignored.

breaker2 F17 / hsmall's leftovers: `ENVCHECK_CONFIG`, `ENVCHECK_OUTPUT` and `ENVCHECK_FORCE` were
dropped without a word, as was a typo (`ENVCHECK_PYHTON`). Now `ENVCHECK_CONFIG` names the settings
file (as uv's UV_CONFIG_FILE does), and a variable that sets nothing is a warning naming it.
`-o`/`--force` stay command-line only: a variable must never make envcheck write or overwrite files.
Real envcheck processes, real files.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.conftest import ROOT
from tests.integrations.test_cli_conventions import settings_of, sh

pytestmark = pytest.mark.subprocess

PLAN = ["plan", "--backend", "cpu", "--os", "linux", "--torch", "2.13.0", "--python", "3.11"]


def _unread(stderr):
    return [ln for ln in stderr.splitlines() if "is not read" in ln]


def test_envcheck_config_names_the_settings_file(tmp_path):
    cfg = tmp_path / "team.toml"
    cfg.write_text('backend = "cpu"\n[plan]\ntorch = "2.13.0"\n')
    doc, s = settings_of(sh(["config", "plan", "--json"], cwd=tmp_path, env={"ENVCHECK_CONFIG": str(cfg)}))
    assert doc["file"] == str(cfg)
    assert s["--backend"]["value"] == "cpu" and s["--backend"]["origin"] == str(cfg)
    assert s["--torch"]["value"] == "2.13.0" and s["--torch"]["origin"] == f"{cfg} [plan]"
    # a plan follows it
    r = sh(["plan", "--format", "pip", "--os", "linux", "--python", "3.11"], cwd=tmp_path, env={"ENVCHECK_CONFIG": str(cfg)})
    assert r.returncode == 0, r.stderr
    assert "torch==2.13.0+cpu" in r.stdout and not _unread(r.stderr)


def test_envcheck_config_ranks_below_the_command_line(tmp_path):
    cfg = tmp_path / "team.toml"
    cfg.write_text('backend = "cpu"\n')
    other = tmp_path / "other.toml"
    other.write_text('backend = "cu128"\n')
    env = {"ENVCHECK_CONFIG": str(cfg)}
    _, s = settings_of(sh(["config", "plan", "--json", "--no-config"], cwd=tmp_path, env=env))
    assert s["--backend"]["origin"] == "default"
    _, s = settings_of(sh(["--config", str(other), "config", "plan", "--json"], cwd=tmp_path, env=env))
    assert s["--backend"]["value"] == "cu128"
    # a file named wins over ENVCHECK_NO_CONFIG, as --config does
    _, s = settings_of(sh(["config", "plan", "--json"], cwd=tmp_path, env={**env, "ENVCHECK_NO_CONFIG": "1"}))
    assert s["--backend"]["value"] == "cpu"


def test_envcheck_config_that_is_missing_is_bad_input(tmp_path):
    r = sh(["plan"], cwd=tmp_path, env={"ENVCHECK_CONFIG": str(tmp_path / "nope.toml")})
    assert r.returncode == 2
    assert r.stderr.strip() == f"envcheck: error: $ENVCHECK_CONFIG {tmp_path / 'nope.toml'}: no such file"


def test_force_and_output_never_come_from_the_environment_and_say_so(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "requirements.txt").write_text("mine\n")
    env = {"ENVCHECK_FORCE": "1", "ENVCHECK_OUTPUT": str(out), "ENVCHECK_PLAN_FORCE": "yes"}
    r = sh([*PLAN, "--format", "pip", "-o", str(out)], cwd=tmp_path, env=env)
    assert r.returncode == 2, r.stderr  # refused overwrite: --force is the command line's only
    assert (out / "requirements.txt").read_text() == "mine\n"
    said = _unread(r.stderr)
    assert len(said) == 3, r.stderr
    assert "$ENVCHECK_FORCE is not read: --force is given on the command line only" in said[0]
    assert "$ENVCHECK_OUTPUT is not read: -o/--output is given on the command line only" in said[1]
    assert "$ENVCHECK_PLAN_FORCE is not read" in said[2]
    # ENVCHECK_OUTPUT alone writes nothing anywhere, and says so
    r = sh([*PLAN, "--format", "pip"], cwd=tmp_path, env={"ENVCHECK_OUTPUT": str(tmp_path / "o2")})
    assert r.returncode == 0 and not (tmp_path / "o2").exists() and len(_unread(r.stderr)) == 1


def test_a_typo_is_named_with_the_close_names(tmp_path):
    r = sh([*PLAN, "--format", "pip"], cwd=tmp_path, env={"ENVCHECK_PYHTON": "3.12", "ENVCHECK_BAKCEND": "cu128"})
    assert r.returncode == 0, r.stderr
    said = _unread(r.stderr)
    assert len(said) == 2, r.stderr
    assert said[0].startswith("envcheck: warning: $ENVCHECK_BAKCEND is not read") and "$ENVCHECK_BACKEND" in said[0]
    assert said[1].startswith("envcheck: warning: $ENVCHECK_PYHTON is not read") and "$ENVCHECK_PYTHON" in said[1]
    # --strict makes them fail, -q hides them
    assert sh([*PLAN, "--format", "pip", "--strict"], cwd=tmp_path, env={"ENVCHECK_PYHTON": "3.12"}).returncode == 1
    assert not _unread(sh([*PLAN, "--format", "pip", "-q"], cwd=tmp_path, env={"ENVCHECK_PYHTON": "3.12"}).stderr)


def test_another_commands_variable_is_not_a_typo(tmp_path):
    env = {"ENVCHECK_TIMEOUT": "5", "ENVCHECK_VERIFY_TIER": "quick", "ENVCHECK_DOCKER_BASE_MIRROR": "http://m.example/debian"}
    r = sh([*PLAN, "--format", "pip"], cwd=tmp_path, env=env)
    assert r.returncode == 0 and not _unread(r.stderr), r.stderr


def test_no_variable_envcheck_itself_reads_is_ever_called_unread():
    """Every ENVCHECK_* name the code reads (its own meaning, READ_ELSEWHERE), the GitHub Action sets
    for its steps, or the tests and benchmarks use, is known — a warning there would be noise."""
    from envcheck.cli import build_parser
    from envcheck.cli.conventions import settings_universe
    from envcheck.settings import _actions, unread_variables

    names = set()
    for folder, pattern in (("envcheck", "*.py"), ("tests", "*.py"), ("benchmarks", "*.py")):
        for f in (ROOT / folder).rglob(pattern):
            names |= set(re.findall(r"\b(ENVCHECK_[A-Z][A-Z0-9_]*[A-Z0-9])\b", f.read_text(encoding="utf-8")))
    names |= set(re.findall(r"\b(ENVCHECK_[A-Z][A-Z0-9_]*[A-Z0-9])\b", (ROOT / "action.yml").read_text()))
    names -= {"ENVCHECK_LOCK_EOF"}  # a here-document's end marker in the scripts, not a variable
    names -= {"ENVCHECK_PYHTON", "ENVCHECK_BAKCEND", "ENVCHECK_FORCE", "ENVCHECK_OUTPUT", "ENVCHECK_PLAN_FORCE"}  # this file's
    parser = build_parser(["plan"])
    from envcheck.cli.conventions import command_path

    _, plan = command_path(parser, ["plan"])
    assert len(names) > 20
    said = unread_variables("plan", _actions(plan), dict.fromkeys(names, "1"), lambda: settings_universe(build_parser()))
    assert said == []


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["plan", "--help"], ["-h"]])
def test_a_config_that_cannot_be_read_still_lets_help_and_version_answer(tmp_path, argv):
    """breaker4 F9: `ENVCHECK_CONFIG=/nope.toml envcheck --help` was exit 2 — the user could not read the
    help that explains the setting. Help and version read no setting: they answer, with a warning."""
    r = sh(argv, cwd=tmp_path, env={"ENVCHECK_CONFIG": str(tmp_path / "nope.toml")})
    assert r.returncode == 0 and r.stdout.strip(), r.stderr
    assert "settings not read" in r.stderr and "no such file" in r.stderr
    r = sh(["plan", "--gpu", "T4"], cwd=tmp_path, env={"ENVCHECK_CONFIG": str(tmp_path / "nope.toml")})
    assert r.returncode == 2 and "no such file" in r.stderr  # a command that would use them still refuses


@pytest.mark.parametrize("make", ["folder", "fifo"])
def test_a_config_that_is_not_a_regular_file_is_said_so(tmp_path, make):
    """breaker4 F9: a folder or a FIFO named as the config was 'no such file'."""
    target = tmp_path / "cfg"
    target.mkdir() if make == "folder" else os.mkfifo(target)
    r = sh(["--config", str(target), "plan", "--gpu", "T4"], cwd=tmp_path)
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr
