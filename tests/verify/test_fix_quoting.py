"""Printed `fix:` commands are quoted for the shell they are pasted into (#15): an interpreter at a
path with spaces, ``$``, quotes and ``;`` gives commands that ``shlex.split`` turns back into
exactly the intended argv and that ``bash -n`` accepts — through a real venv at such a path, real
``verify`` and ``explain --facts``; a Windows environment gets PowerShell quoting.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.subprocess

#: A folder name a shell would split, expand and end a command at, if printed bare.
HOSTILE_DIR = "we i$rd 'q' \"d\";x $(id)"


def commands(fix: str) -> list:
    """The backtick-quoted commands of a fix text."""
    return re.findall(r"`([^`]+)`", fix)


def bash_accepts(line: str, tmp_path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    script = tmp_path / "cmd.sh"
    script.write_text(line + "\n")
    r = subprocess.run([bash, "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, (line, r.stderr)


@pytest.fixture(scope="module")
def hostile_python(tmp_path_factory):
    """A real venv (no torch) whose path has spaces, ``$``, quotes, ``;`` and ``$(…)``."""
    root = tmp_path_factory.mktemp("q") / HOSTILE_DIR / "venv"
    root.parent.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    return str(root / "bin" / "python")


def with_interpreter(fix: str, py: str) -> list:
    """The commands of ``fix`` that run ``py``, split as a POSIX shell would."""
    out = [shlex.split(c) for c in commands(fix)]
    return [argv for argv in out if argv and argv[0] == py]


def test_verify_fix_for_a_hostile_interpreter_path(cli, hostile_python, tmp_path):
    r = cli(["verify", "--python", hostile_python, "--checks", "import_torch", "--json", "--timeout", "60"])
    (imp,) = [c for c in r.json()["checks"] if c["name"] == "import_torch"]
    assert imp["status"] == "fail" and imp["rule"] == "torch-not-installed", imp
    runs = with_interpreter(imp["fix"], hostile_python)
    assert runs, imp["fix"]
    argv = runs[0]
    assert argv[1:4] == ["-m", "pip", "install"] and argv[4] == "--index-url"
    assert argv[5].startswith("https://") and argv[6].startswith("torch==")
    for c in commands(imp["fix"]):
        bash_accepts(c, tmp_path)
    # the facts replay to the same commands
    saved = tmp_path / "facts.json"
    saved.write_text(json.dumps(r.json()))
    again = cli(["verify", "--facts", str(saved), "--json"])
    (imp2,) = [c for c in again.json()["checks"] if c["name"] == "import_torch"]
    assert with_interpreter(imp2["fix"], hostile_python) == runs


def test_explain_fix_for_a_hostile_interpreter_path(cli, hostile_python, tmp_path):
    r = cli(["verify", "--python", hostile_python, "--checks", "import_torch", "--json", "--timeout", "60"])
    saved = tmp_path / "facts.json"
    saved.write_text(json.dumps(r.json()))
    msg = "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.2 as it may crash."
    e = cli(["explain", "--facts", str(saved), "--no-probe", "--json", msg])
    assert e.code == 0, e.err
    fixes = [f["fix"] for f in e.json()["findings"]]
    runs = [argv for fx in fixes for argv in with_interpreter(fx, hostile_python)]
    assert ["-m", "pip", "install", "numpy<2"] in [a[1:] for a in runs], fixes
    for fx in fixes:
        for c in commands(fx):
            bash_accepts(c, tmp_path)
    # and in the text a person reads, the same words
    t = cli(["explain", "--facts", str(saved), "--no-probe", msg])
    assert shlex.quote(hostile_python) + " -m pip install" in t.out


def test_a_windows_environment_gets_powershell_quoting(cli, hostile_python, tmp_path):
    """Facts from Windows: a quoted program path needs PowerShell's call operator, and a single
    quote inside single quotes is doubled."""
    r = cli(["verify", "--python", hostile_python, "--checks", "import_torch", "--json", "--timeout", "60"])
    doc = r.json()
    facts = doc.get("facts", doc)
    facts["platform"]["os"] = "windows"
    facts["python"]["executable"] = "C:\\Users\\O'Brien\\my env $x\\Scripts\\python.exe"
    saved = tmp_path / "facts.json"
    saved.write_text(json.dumps(doc))
    msg = "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.2 as it may crash."
    e = cli(["explain", "--facts", str(saved), "--no-probe", "--json", msg])
    fixes = " ".join(f["fix"] for f in e.json()["findings"])
    assert "`& 'C:\\Users\\O''Brien\\my env $x\\Scripts\\python.exe' -m pip install 'numpy<2'`" in fixes, fixes


def test_shell_words_round_trip():
    """Generated words: POSIX quoting splits back to the same argv (bash's own reading is the
    test above); PowerShell words never leave a quote, ``$``, ``;`` or space outside quotes."""
    from hypothesis import given, settings, strategies as st

    from envcheck.edge import shell_command

    @settings(derandomize=True, max_examples=300, deadline=None, database=None)
    @given(st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=0,
                            max_size=20), min_size=1, max_size=6))
    def posix(argv):
        assert shlex.split(shell_command(argv)) == argv

    posix()
    assert shell_command(["C:\\Python312\\python.exe", "-m", "pip"], windows=True) == "C:\\Python312\\python.exe -m pip"
    assert shell_command(["C:\\a b\\python.exe", "x;y", "it's", "$env:X"], windows=True) == \
        "& 'C:\\a b\\python.exe' 'x;y' 'it''s' '$env:X'"
    assert shell_command(["x", "a\u2019b"], windows=True) == "x 'a\u2019\u2019b'"


def test_the_wsl_libhsa_fix_pasted_into_bash_removes_the_bundled_library(tmp_path, cli):
    """The fix is a multi-line step (rocm-wsl.toml remove-bundled-libhsa) printed on one line: pasted
    as printed, `location=… cd "${location}…"` expanded ${location} before the assignment ("cd: too
    many arguments", nothing removed; newcomer3 #6). Run as printed in real bash against a stand-in
    `python` whose `pip show torch` names a folder holding the bundled library."""
    r = cli(["explain", "--no-probe", "--gpu", "RX 7900 XTX", "--wsl", "RuntimeError: No HIP GPUs are available"])
    fix = next(line for line in r.out.splitlines() if line.strip().startswith("fix:"))
    line = next(c for c in commands(fix) if "libhsa" in c)
    site = tmp_path / "site packages"
    (site / "torch" / "lib").mkdir(parents=True)
    (site / "torch" / "lib" / "libhsa-runtime64.so.1").write_text("")
    (site / "torch" / "lib" / "libtorch.so").write_text("")
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "python").write_text(f"#!/bin/sh\nprintf 'Name: torch\\nLocation: %s\\n' '{site}'\n")
    (stub / "python").chmod(0o755)
    env = {"PATH": f"{stub}:/usr/bin:/bin", "HOME": str(tmp_path)}
    p = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, (line, p.stderr)
    assert sorted(x.name for x in (site / "torch" / "lib").iterdir()) == ["libtorch.so"], line
