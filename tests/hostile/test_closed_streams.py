"""Small inputs that used to end in a traceback or a silent loss (breaker F17): a closed stdin, a
closed stdout, a config file nested thousands deep. Each is one line on stderr with its exit code."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

pytestmark = pytest.mark.subprocess  # real processes with real closed file descriptors

ENVCHECK = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "envcheck"))


def sh(script, cwd):
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_explain_with_stdin_closed_is_nothing_to_explain(tmp_path):
    r = sh(f"{ENVCHECK} explain <&-", tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert "nothing to explain" in r.stderr


def test_plan_with_stdout_closed_is_an_output_error_not_a_lost_plan(tmp_path):
    r = subprocess.run(["bash", "-c", f"{ENVCHECK} plan --gpu H100 >&- 2>err.txt; echo $?"], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    err = (tmp_path / "err.txt").read_text()
    assert r.stdout.strip() == "1" and "cannot write the output" in err and "Traceback" not in err, err


@pytest.mark.parametrize("doc", ["a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 3000 + "1" + "}" * 3000])
def test_a_config_nested_thousands_deep_is_one_line(tmp_path, doc):
    (tmp_path / "deep.toml").write_text(doc + "\n")
    r = sh(f"{ENVCHECK} --config deep.toml plan --gpu H100", tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr[-500:]
