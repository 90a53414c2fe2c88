"""The command line behaves like the tools people already use (uv, pip, nox): --version with the
data date, colour switches, -q/-v, --strict, config files and ENVCHECK_* variables with their
origins, shell completion scripts the real shells accept."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ENVCHECK = [sys.executable, "-m", "envcheck"]


def sh(args, env=None, cwd=None):
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ENVCHECK_", "GITHUB_"))
            and k not in ("NO_COLOR", "FORCE_COLOR", "CI")}
    full["ENVCHECK_CACHE_DIR"] = os.environ.get("ENVCHECK_CACHE_DIR", "")
    full.update(env or {})
    return subprocess.run([*ENVCHECK, *args], capture_output=True, text=True, env=full, cwd=cwd or ROOT, timeout=300)


# ---- --version names the data date and the newest torch, read from the data here independently

def test_version_names_data_date_and_newest_torch():
    rel = tomllib.loads((ROOT / "matrices" / "torch-releases.toml").read_text())["release"]
    newest = max(rel, key=lambda r: [int(x) for x in r["version"].split(".")])
    latest_date = max(r["date"] for r in rel if r.get("date"))
    r = sh(["--version"])
    assert r.returncode == 0
    assert f"newest torch {newest['version']}" in r.stdout
    assert f"matrix data {latest_date}" in r.stdout


def test_stale_data_is_a_warning_after_60_days(matrix):
    from envcheck.matrix.freshness import data_date, staleness

    day, _ = data_date(matrix)
    assert staleness(matrix, today=day + dt.timedelta(days=60)) is None
    text = staleness(matrix, today=day + dt.timedelta(days=61))
    assert "61 days old" in text and "matrix update" in text


def test_a_release_newer_than_known_says_so(cli):
    r = cli(["plan", "--torch", "9.0", "--backend", "cpu"])
    assert r.code == 2 and "newer than any release envcheck knows" in r.err


# ---- colour

@pytest.mark.parametrize("args,env,colored", [
    (["--color", "always"], {}, True),
    (["--color", "never"], {"FORCE_COLOR": "1"}, False),
    ([], {"FORCE_COLOR": "1"}, True),
    ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    ([], {}, False),  # a pipe is not a terminal
    (["--color", "always"], {"TERM": "dumb", "NO_COLOR": "1"}, True),  # the flag wins over the environment
])
def test_color_switches(args, env, colored):
    r = sh([*args, "gpus", "4090"], env=env)
    assert r.returncode == 0, r.stderr
    assert ("\x1b[" in r.stdout) is colored


def test_color_after_the_command_and_bad_value():
    assert "\x1b[" in sh(["gpus", "4090", "--color", "always"]).stdout
    r = sh(["gpus", "--color", "sometimes"])
    assert r.returncode == 2 and "Traceback" not in r.stderr


# ---- strict, quiet

# --prefer newest: the newest release's rows are unverified, so this plan carries caveats
STRICT = ["plan", "--gpu", "RTX 4090", "--driver", "580.65.06", "--python", "3.12", "--format", "pip", "--prefer", "newest"]


def test_strict_fails_on_warnings(cli):
    assert cli(STRICT).code == 0
    r = cli([*STRICT, "--strict"])
    assert r.code == 1 and "--strict" in r.err
    clean = cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--os", "linux",
                 "--format", "pip", "--strict"])
    assert clean.code == 0, clean.err


def test_quiet_drops_warnings_but_strict_still_counts(cli, monkeypatch):
    import envcheck.matrix.freshness as fr

    monkeypatch.setattr(fr, "STALE_DAYS", -100000)  # every dataset is "stale" now
    loud = cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--os", "linux", "--format", "pip"])
    assert "warning: the matrix data is" in loud.err
    quiet = cli(["plan", "-q", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--os", "linux",
                 "--format", "pip", "--strict"])
    assert "warning" not in quiet.err.replace("--strict: 1 warning", "")
    assert quiet.code == 1


@pytest.mark.subprocess  # plan -o probes this machine (docker info)
@pytest.mark.parametrize("quiet", [["-q"], ["-qq"], ["--quiet"]])
def test_quiet_drops_plans_notes_and_keeps_its_answer(cli, tmp_path, quiet):
    """newcomer6 #7: `-q`/`-qq` changed nothing in plan: its notes ("Dockerfile not made: …") and the
    download's progress went to stderr whatever the verbosity. -q drops notes; stdout is the same."""
    argv = ["plan", "--gpu", "Arc B580", "--python", "3.12", "--os", "linux", "--format", "all"]
    loud = cli([*argv, "-o", str(tmp_path / "loud")])
    assert loud.code == 0 and "note: Dockerfile not made" in loud.err, loud.err
    quiet_run = cli([*argv, "-o", str(tmp_path / "quiet"), *quiet])
    assert quiet_run.code == 0 and quiet_run.err == ""
    assert quiet_run.out.replace(str(tmp_path / "quiet"), str(tmp_path / "loud")) == loud.out
    assert sorted(p.name for p in (tmp_path / "quiet").iterdir()) == sorted(p.name for p in (tmp_path / "loud").iterdir())


def test_json_stdout_is_one_document_and_annotations_go_to_stderr(tmp_path):
    case = ROOT / "tests" / "fixtures" / "verify" / "cases" / "C01.json"
    r = sh(["verify", "--facts", str(case), "--json"], env={"GITHUB_ACTIONS": "true",
                                                           "GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")})
    doc = json.loads(r.stdout)
    assert doc["schema"] == "envcheck.verify.v1"
    assert "::error " in r.stderr


def test_plan_caveats_are_github_annotations(tmp_path):
    """newcomer M15 (README: "plan's warnings ... become ::warning annotations"): a plan whose driver runs
    the build only under minor-version compatibility has a caveat; under GITHUB_ACTIONS=true it is a
    ::warning (workflow commands: docs.github.com/actions/reference/workflow-commands-for-github-actions),
    on stdout for the text plan, on stderr when stdout carries a file (--format pip) or JSON."""
    args = ["plan", "--gpu", "GTX 1080", "--driver", "470.82.01", "--python", "3.11"]
    r = sh(args, env={"GITHUB_ACTIONS": "true"})
    assert r.returncode == 0, r.stderr
    assert any(line.startswith("::warning ") and "[driver]" in line for line in r.stdout.splitlines()), r.stdout
    r = sh([*args, "--format", "pip"], env={"GITHUB_ACTIONS": "true"})
    assert "::warning" not in r.stdout and "::warning " in r.stderr
    r = sh([*args, "--json"], env={"GITHUB_ACTIONS": "true"})
    json.loads(r.stdout)
    assert "::warning " in r.stderr
    assert "::warning" not in sh(args, env={"GITHUB_ACTIONS": ""}).stdout


# ---- config files and environment variables

@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.envcheck]\nmirror = ["https://m.example/whl"]\n\n'
        '[tool.envcheck.plan]\nbackend = "cu130"\npython = "3.12"\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    return tmp_path, sub


def settings_of(r):
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    return doc, {s["flag"]: s for s in doc["settings"]}


def test_config_found_upward_with_origins(project):
    root, sub = project
    doc, s = settings_of(sh(["config", "plan", "--json"], cwd=sub))
    assert doc["file"] == str(root / "pyproject.toml")
    assert s["--backend"]["value"] == "cu130" and s["--backend"]["origin"].endswith("[plan]")
    assert s["--mirror"]["value"] == ["https://m.example/whl"]
    assert s["--torch"]["origin"] == "default"


def test_env_beats_config_and_the_command_line_beats_env(project):
    root, sub = project
    _, s = settings_of(sh(["config", "plan", "--json"], cwd=sub, env={"ENVCHECK_BACKEND": "cpu"}))
    assert (s["--backend"]["value"], s["--backend"]["origin"]) == ("cpu", "$ENVCHECK_BACKEND")
    _, s = settings_of(sh(["config", "plan", "--json"], cwd=sub, env={"ENVCHECK_PLAN_PYTHON": "3.11"}))
    assert s["--python"]["value"] == "3.11"
    r = sh(["plan", "--gpu", "RTX 4090", "--torch", "2.13.0", "--format", "pip", "--style", "project"], cwd=sub,
           env={"ENVCHECK_BACKEND": "cpu"})
    assert "--extra-index-url https://m.example/whl/cpu" in r.stdout  # env backend + config mirror
    r = sh(["plan", "--gpu", "RTX 4090", "--torch", "2.13.0", "--backend", "cu126", "--format", "pip"], cwd=sub,
           env={"ENVCHECK_BACKEND": "cpu"})
    assert "+cu126" in r.stdout  # the flag wins


def test_envcheck_toml_wins_and_no_config(project):
    root, sub = project
    (root / "a" / "envcheck.toml").write_text('[plan]\nbackend = "cpu"\n')
    doc, s = settings_of(sh(["config", "plan", "--json"], cwd=sub))
    assert doc["file"] == str(root / "a" / "envcheck.toml") and s["--backend"]["value"] == "cpu"
    doc, s = settings_of(sh(["--no-config", "config", "plan", "--json"], cwd=sub))
    assert doc["file"] is None and s["--backend"]["value"] == "auto"
    doc, s = settings_of(sh(["config", "plan", "--json"], cwd=sub, env={"ENVCHECK_NO_CONFIG": "1"}))
    assert doc["file"] is None


@pytest.mark.parametrize("text,env,words", [
    # newcomer6 #7: a typo in a command's table got no suggestion, the same typo in ENVCHECK_* did
    ('[plan]\nbakend = "cpu"\n', {}, "'bakend' is not a flag of `envcheck plan`; did you mean backend?"),
    ('[plan]\nexplain = "maybe"\n', {}, "is a switch"),
    ("[plan\n", {}, "not valid TOML"),
    ("", {"ENVCHECK_OS": "beos"}, "'beos' is not one of"),
])
def test_bad_settings_are_one_line_exit_2(tmp_path, text, env, words):
    (tmp_path / "envcheck.toml").write_text(text)
    r = sh(["plan", "--backend", "cpu", "--format", "pip"], cwd=tmp_path, env=env)
    assert r.returncode == 2, r.stdout
    assert words in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("name,text,words", [
    # newcomer3 #8: each of these was silently dropped (plan ran for 3.11 / with no GPU, exit 0)
    ("envcheck.toml", 'pyhton = "3.12"\n', "envcheck.toml: 'pyhton' at the top level is not a flag of any envcheck "
                                           "command; did you mean python"),
    ("envcheck.toml", 'python = "3.12"\n[tool.envcheck.plan]\ngpu = ["RTX 4090"]\n',
     "envcheck.toml: [tool.envcheck…] is pyproject.toml's table name; in envcheck.toml write [plan]"),
    ("my.toml", 'gpus = ["H100"]\n', "my.toml: 'gpus' at the top level is not a flag of any envcheck command; "
                                     "did you mean gpu?"),
    ("envcheck.toml", '[paln]\nbackend = "cpu"\n', "envcheck.toml: [paln] is not a command's table; did you mean plan"),
    ("pyproject.toml", '[tool.envcheck]\nbakend = "cpu"\n', "pyproject.toml: 'bakend' at [tool.envcheck] is not a flag"),
    ("pyproject.toml", '[tool.envcheck.paln]\nbackend = "cpu"\n',
     "pyproject.toml: [tool.envcheck.paln] is not a command's table; did you mean plan"),
    ("envcheck.toml", 'force = true\n', "envcheck.toml: 'force' is given on the command line only"),
])
def test_unknown_config_names_are_exit_2_naming_file_and_key(tmp_path, name, text, words):
    (tmp_path / name).write_text(text)
    args = ["--config", name] if name == "my.toml" else []
    for command in (["plan", "--backend", "cpu", "--format", "pip"], ["config", "plan"]):
        r = sh([*args, *command], cwd=tmp_path)
        assert r.returncode == 2, (command, r.stdout)
        assert words in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1


def test_config_shows_a_repeatable_flag_as_the_values_given(tmp_path):
    """newcomer3 #13: `envcheck config plan` showed `--gpu [["RTX 4090"]]` (argparse's list per use)."""
    (tmp_path / "envcheck.toml").write_text('[plan]\ngpu = ["RTX 4090", "H100"]\n')
    r = sh(["config", "plan"], cwd=tmp_path)
    line = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("--gpu "))
    assert '["RTX 4090", "H100"]' in line and "[[" not in line, line
    _, s = settings_of(sh(["config", "plan", "--json"], cwd=tmp_path))
    assert s["--gpu"]["value"] == ["RTX 4090", "H100"]
    _, s = settings_of(sh(["config", "plan", "--json"], cwd=tmp_path, env={"ENVCHECK_GPU": "T4,A100"}))
    assert s["--gpu"]["value"] == ["T4", "A100"]


def test_keys_and_tables_of_other_commands_are_not_typos(tmp_path):
    """A top-level key only verify has (checks), docker build's table, verify's table: all fine for plan;
    ENVCHECK_* variables behave as before (an unknown one is not a setting)."""
    (tmp_path / "envcheck.toml").write_text('checks = "matmul"\nbackend = "cpu"\n[verify]\ntimeout = 5\n'
                                            '[docker-build]\ntag = "x:1"\n')
    r = sh(["plan", "--torch", "2.13.0", "--format", "pip"], cwd=tmp_path, env={"ENVCHECK_PYHTON": "3.12"})
    assert r.returncode == 0, r.stderr
    assert "torch==2.13.0+cpu" in r.stdout
    _, s = settings_of(sh(["config", "verify", "--json"], cwd=tmp_path))
    assert s["--checks"]["value"] == "matmul" and s["--timeout"]["value"] == 5.0


def test_a_shared_key_never_reaches_a_flag_that_means_something_else(tmp_path):
    """newcomer M2: `[tool.envcheck] python = "3.12"` (plan's target version) made `envcheck verify`
    test an interpreter named 3.12 (exit 2); a shared `mirror` (a download.pytorch.org mirror) would
    become docker base's Debian mirror. Shared keys reach only flags of that meaning; a command's own
    table or variable still sets its own flag."""
    (tmp_path / "pyproject.toml").write_text('[tool.envcheck]\npython = "3.12"\nmirror = ["https://m.example/whl"]\n')
    _, s = settings_of(sh(["config", "plan", "--json"], cwd=tmp_path))
    assert s["--python"]["value"] == "3.12" and s["--mirror"]["value"] == ["https://m.example/whl"]
    _, s = settings_of(sh(["config", "verify", "--json"], cwd=tmp_path, env={"ENVCHECK_PYTHON": "3.11"}))
    assert (s["--python"]["value"], s["--python"]["origin"]) == (None, "default")
    assert s["--python"]["env"] == "ENVCHECK_VERIFY_PYTHON"
    _, s = settings_of(sh(["config", "docker", "base", "--json"], cwd=tmp_path))
    assert s["--mirror"]["value"] is None
    _, s = settings_of(sh(["config", "verify", "--json"], cwd=tmp_path, env={"ENVCHECK_VERIFY_PYTHON": sys.executable}))
    assert s["--python"]["value"] == sys.executable
    _, s = settings_of(sh(["config", "docker", "base", "--json"], cwd=tmp_path,
                          env={"ENVCHECK_DOCKER_BASE_MIRROR": "http://deb.example/debian"}))
    assert s["--mirror"]["value"] == "http://deb.example/debian"
    (tmp_path / "pyproject.toml").write_text('[tool.envcheck.verify]\npython = "/no/such/python"\n')
    _, s = settings_of(sh(["config", "verify", "--json", "--config", str(tmp_path / "pyproject.toml")], cwd=tmp_path))
    assert s["--python"]["value"] == "/no/such/python"


@pytest.mark.parametrize("command, table, key", [
    (["verify"], "verify", "python"), (["fleet", "slurm", "--nodes", "1"], "fleet-slurm", "envcheck"),
    (["fleet", "slurm", "--nodes", "1"], "fleet-slurm", "python")])
def test_a_found_config_file_never_chooses_the_program_envcheck_runs(tmp_path, command, table, key):
    """breaker4 F3: a cloned repository's pyproject.toml set `[tool.envcheck.verify] python = "./evil.sh"`
    and `envcheck verify` in it ran that file. A file found from the working folder may not name a
    program to run (exit 2, nothing run); the same file named with --config, or the variable, may."""
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    evil.chmod(0o755)
    (tmp_path / "pyproject.toml").write_text(f'[tool.envcheck.{table}]\n{key} = "./evil.sh"\n')
    r = sh(command, cwd=tmp_path)
    assert r.returncode == 2 and "found from the working folder" in r.stderr and f"--{key}" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not marker.exists()
    named = [w for w in command if not w.startswith("-") and not w.isdigit()]  # the command's words
    _, s = settings_of(sh(["config", *named, "--json", "--config", str(tmp_path / "pyproject.toml")], cwd=tmp_path))
    assert s[f"--{key}"]["value"] == "./evil.sh"


def test_every_flag_name_has_one_meaning_across_commands():
    """The class behind M2: a flag name used by several commands must mean one thing in all of them,
    or the commands where it means another thing are in settings.OWN_MEANING (no shared key reaches
    them). Meaning is read as (metavar, kind of action); `--os` and `--report` differ only in metavar."""
    import argparse

    from envcheck.cli import build_parser
    from envcheck.settings import OWN_MEANING, _actions

    def subs(parser, path=()):
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    yield path + (name,), sp
                    yield from subs(sp, path + (name,))

    meanings: dict = {}
    for path, sp in subs(build_parser(None)):
        for dest, a in _actions(sp).items():
            if ("-".join(path), dest) in OWN_MEANING:
                continue
            meta = None if dest in ("os", "report") else a.metavar
            meanings.setdefault(dest, set()).add((meta, type(a).__name__))
    assert {d: m for d, m in meanings.items() if len(m) > 1} == {}


def test_config_file_flag(tmp_path):
    assert "no such file" in sh(["--config", str(tmp_path / "none.toml"), "gpus"]).stderr
    f = tmp_path / "team.toml"
    f.write_text('[plan]\nbackend = "cpu"\n')
    _, s = settings_of(sh(["config", "plan", "--json", "--config", str(f)], cwd=tmp_path))
    assert s["--backend"]["value"] == "cpu"


# ---- completion

@pytest.mark.parametrize("shell,check", [("bash", ["bash", "-n"]), ("zsh", ["zsh", "-n"]), ("fish", ["fish", "-n"]),
                                         ("powershell", None)])
def test_completion_scripts_parse_in_their_shells(shell, check, tmp_path):
    r = sh(["completion", shell])
    assert r.returncode == 0 and "envcheck" in r.stdout
    if check is None:
        assert "Register-ArgumentCompleter" in r.stdout
        return
    if not shutil.which(check[0]):
        pytest.skip(f"{check[0]} is not installed (.ci/run installs it)")
    f = tmp_path / f"envcheck.{shell}"
    f.write_text(r.stdout)
    res = subprocess.run([*check, str(f)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


def test_bash_completes_gpu_names_through_the_real_script(tmp_path):
    """bash sources the script and asks it, as a user's <Tab> would; envcheck answers from the matrix."""
    script = tmp_path / "envcheck.bash"
    script.write_text(sh(["completion", "bash"]).stdout)
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "envcheck").write_text(f"#!/bin/sh\nexec {sys.executable} -m envcheck \"$@\"\n")
    (shim / "envcheck").chmod(0o755)
    line = "envcheck plan --gpu rtx409"
    prog = (f"source {script}; COMP_LINE='{line}'; COMP_POINT={len(line)}; COMP_WORDS=(envcheck plan --gpu rtx409); "
            "COMP_CWORD=3; _python_argcomplete envcheck; printf '%s\\n' \"${COMPREPLY[@]}\"")
    env = dict(os.environ, PATH=f"{shim}:{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    r = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, env=env, timeout=120)
    got = set(r.stdout.split())
    assert "rtx4090" in got, r.stdout + r.stderr
    assert all(g.lower().startswith("rtx409") for g in got)
    line = "envcheck pl"
    prog = (f"source {script}; COMP_LINE='{line}'; COMP_POINT={len(line)}; COMP_WORDS=(envcheck pl); COMP_CWORD=1; "
            "_python_argcomplete envcheck; printf '%s\\n' \"${COMPREPLY[@]}\"")
    r = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, env=env, timeout=120)
    assert r.stdout.split() == ["plan"]


def _zsh_listing(raw):
    """The words zsh lists below the command line (escape sequences and redraws removed)."""
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|.\x08", "", raw)
    words = []
    for ln in text.split("\n")[1:]:  # the listing: the lines below the command line, up to each redraw (\r)
        ln = ln.split("\r")[0]
        if "--gpu" not in ln and "READY" not in ln:
            words += re.split(r"\s--(?:\s|$)", ln)[0].split()
    return words


def _zsh_complete(env, fpath, line, expect, deadline=60.0):
    """An interactive zsh in a pseudo-terminal, its completion system on (compinit) with envcheck's
    script in fpath: type LINE, press Tab twice, read what it lists (until EXPECT shows, or the deadline)."""
    import pty
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:  # the child: zsh itself
        os.execvpe("zsh", ["zsh", "-f", "-i"], env)
    out = b""

    def read(until, seconds):
        nonlocal out
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until(out):
            if select.select([fd], [], [], 0.25)[0]:
                try:
                    out += os.read(fd, 65536)
                except OSError:
                    return

    try:
        os.write(fd, f"PS1='> '; fpath=({fpath} $fpath); autoload -Uz compinit; compinit -u -D; "
                     "setopt nobeep; LISTMAX=10000; print READY-$((6*7))\n".encode())
        read(lambda b: b"READY-42" in b, deadline)
        out = b""
        os.write(fd, (line + "\t\t").encode())
        read(lambda b: expect in _zsh_listing(b.decode(errors="replace")), deadline)
        read(lambda b: False, 1.0)  # the rest of the listing
        return _zsh_listing(out.decode(errors="replace"))
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def _shell_completions(shell, typed, tmp_path, expect):
    """What the real shell offers for `envcheck plan --gpu TYPED<Tab>` with envcheck's own script
    (bash: the completion function as bash calls it; zsh: an interactive zsh in a pseudo-terminal,
    the completion system listing the matches; fish: `complete -C`)."""

    script = tmp_path / f"envcheck.{shell}"
    script.write_text(sh(["completion", shell]).stdout)
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "envcheck").write_text(f"#!/bin/sh\nexec {sys.executable} -m envcheck \"$@\"\n")
    (shim / "envcheck").chmod(0o755)
    env = dict(os.environ, PATH=f"{shim}:{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    line = f"envcheck plan --gpu {typed}"
    if shell == "bash":
        prog = (f"source {script}; COMP_LINE='{line}'; COMP_POINT={len(line)}; COMP_WORDS=({line}); "
                "COMP_CWORD=3; _python_argcomplete envcheck; printf '%s\\n' \"${COMPREPLY[@]}\"")
        r = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, env=env, timeout=120)
        return r.stdout.split()
    if shell == "fish":
        prog = f"source {script}; complete -C '{line}'"
        r = subprocess.run(["fish", "-c", prog], capture_output=True, text=True, env=env, timeout=120)
        return [w.split("\t")[0] for w in r.stdout.splitlines()]
    (tmp_path / "zfunc").mkdir(exist_ok=True)
    (tmp_path / "zfunc" / "_envcheck").write_text(script.read_text())
    return _zsh_complete(env, tmp_path / "zfunc", line, expect)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("typed,expect", [("H1", "H100"), ("RTX", "RTX4090"), ("7900", "7900xtx"),
                                          ("rtx409", "rtx4090")])
def test_gpu_completion_matches_like_envcheck_gpus(shell, typed, expect, tmp_path):
    """breaker F19: `--gpu H1`, `--gpu RTX`, `--gpu 7900` completed nothing (only lower-case aliases,
    case-sensitively). Now, in each real shell, the GPUs `envcheck gpus QUERY` lists complete — any case,
    names and aliases — and every word offered is a GPU of that list that --gpu takes."""
    if not shutil.which(shell):
        pytest.skip(f"{shell} is not installed (.ci/run installs it)")
    from envcheck.matrix import load_matrix

    got = _shell_completions(shell, typed, tmp_path, expect)
    assert expect in got, got
    matrix = load_matrix()
    listed = {g.name for g in matrix.search_gpus(typed)}
    offered = [w for w in got if w not in ("envcheck", "plan", "gpu")]
    for word in offered:
        assert matrix.find_gpu(word).name in listed, (word, typed)


# ---- progress

class _Tty:
    def isatty(self):
        return True


@pytest.mark.parametrize("env,shown", [({}, True), ({"CI": "true"}, False), ({"CI": "1"}, False),
                                       ({"TERM": "dumb"}, False), ({"CI": "false"}, True)])
def test_progress_only_on_a_terminal_and_never_under_ci(env, shown):
    from envcheck.ci import progress_allowed

    assert progress_allowed(_Tty(), env) is shown
    assert progress_allowed(io.StringIO(), {}) is False  # not a terminal


def test_verbose_says_where_settings_came_from(tmp_path):
    (tmp_path / "envcheck.toml").write_text('[plan]\nbackend = "cpu"\n')
    args = ["plan", "--os", "linux", "--format", "pip"]
    loud = sh(["-v", *args], cwd=tmp_path, env={"ENVCHECK_PYTHON": "3.11"})
    assert f"config file: {tmp_path / 'envcheck.toml'}" in loud.stderr
    assert "--python = '3.11' (from $ENVCHECK_PYTHON)" in loud.stderr
    assert "--backend = 'cpu'" in loud.stderr
    plain = sh(args, cwd=tmp_path, env={"ENVCHECK_PYTHON": "3.11"})
    assert "config file" not in plain.stderr and plain.stdout == loud.stdout


def test_variables_the_code_reads_itself_never_become_flag_defaults():
    """Any ENVCHECK_* name the code reads on its own (its own meaning) must be in READ_ELSEWHERE when
    it has the name a flag's variable would have — else the two meanings collide."""
    import re as _re

    from envcheck.cli import build_parser
    from envcheck.cli.conventions import each_parser
    from envcheck.settings import ENV_PREFIX, READ_ELSEWHERE, _actions

    flag_vars = set()
    for path, p in each_parser(build_parser()):
        for dest in _actions(p):
            flag_vars.add(f"{ENV_PREFIX}{dest.upper()}")
            if path:
                flag_vars.add(f"{ENV_PREFIX}{'-'.join(path).upper()}_{dest.upper()}")
    read = set()
    for f in (ROOT / "envcheck").rglob("*.py"):
        if f.name != "settings.py":
            read |= set(_re.findall(r"[\"'](ENVCHECK_[A-Z][A-Z_]*[A-Z])[\"']", f.read_text(encoding="utf-8")))
    assert (read & flag_vars) <= READ_ELSEWHERE, sorted((read & flag_vars) - READ_ELSEWHERE)
