"""Ctrl-C while Python is still importing envcheck: one line, exit 130, never a traceback.

Real processes and a real SIGINT. To land the signal inside the import deterministically (the
window is tens of milliseconds), a ``sitecustomize`` on PYTHONPATH adds an import audit hook that,
when ``envcheck.cli`` starts importing, writes a mark to a pipe and sleeps: the test sends SIGINT
once the mark arrives, so the signal is delivered mid-import. Before :mod:`envcheck.entry`, Python's
own handler raised KeyboardInterrupt there and printed a traceback. A sweep of early delays without
the hook covers the console script's real timing.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

HOOK = """
import os, sys, time
_fd = int(os.environ["ENVCHECK_TEST_MARK_FD"])
_target = os.environ.get("ENVCHECK_TEST_MARK_MODULE", "envcheck.cli")
def _hook(event, args):
    if event == "import" and args and args[0] == _target:
        os.write(_fd, b"importing\\n")
        time.sleep(5)   # the SIGINT arrives in here, in the middle of the import
sys.addaudithook(_hook)
"""


def sigint_default() -> None:
    """The child starts as from a terminal, with SIGINT at its default: a suite run in the background
    (`nohup … &`) passes SIGINT ignored to its children, and envcheck rightly leaves an ignored SIGINT
    ignored (entry._install) — the child would never see the Ctrl-C this test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def console_script() -> list:
    script = Path(sys.executable).parent / "envcheck"
    return [str(script)] if script.exists() else [shutil.which("envcheck") or "envcheck"]


def interrupt_mid_import(tmp_path: Path, argv: list, module: str) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(HOOK)
    r_fd, w_fd = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(site), "ENVCHECK_TEST_MARK_FD": str(w_fd),
           "ENVCHECK_TEST_MARK_MODULE": module}
    p = subprocess.Popen(argv, env=env, pass_fds=(w_fd,), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=sigint_default)
    os.close(w_fd)
    try:
        ready, _, _ = select.select([r_fd], [], [], 120)
        assert ready, "the child never reached the import"
        assert os.read(r_fd, 64).startswith(b"importing")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        os.close(r_fd)
        if p.poll() is None:
            p.kill()
            p.wait()
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


@pytest.mark.parametrize("how", ["console script", "python -m envcheck"])
@pytest.mark.parametrize("module", ["envcheck.cli", "envcheck.settings"])
def test_sigint_while_importing_is_one_line_and_exit_130(tmp_path, how, module):
    argv = console_script() if how == "console script" else [sys.executable, "-m", "envcheck"]
    r = interrupt_mid_import(tmp_path, [*argv, "plan", "--gpu", "A100", "--format", "pip"], module)
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert r.stderr == "envcheck: interrupted\n", r.stderr
    assert r.stdout == ""


def envcheck_frames(err: str) -> list:
    """The traceback frames in envcheck's own code, except the statement that loads
    :mod:`envcheck.entry` (the first module that can hold a handler: a signal that lands while it is
    being loaded is still before envcheck's first line)."""
    lines = err.splitlines()
    out = []
    for i, ln in enumerate(lines):
        if ln.strip().startswith("File ") and "/envcheck/" in ln and "/bin/envcheck" not in ln:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if code != "from envcheck.entry import main":
                out.append(ln)
    return out


@pytest.mark.parametrize("how", ["console script", "python -m envcheck"])
def test_sigint_at_early_moments_never_prints_a_traceback_from_envcheck(tally, how):
    """No hook: SIGINT at 0–300 ms after the start. Each run finished (0), was interrupted (130, one
    line), or got the signal before envcheck's first line ran — before the interpreter had a handler
    (killed by SIGINT, silent, as any program) or inside the launcher the installer wrote (pip's
    console script imports ``re`` before it imports envcheck; Python prints that traceback and no
    envcheck frame is in it). A traceback through envcheck's code fails."""
    argv = console_script() if how == "console script" else [sys.executable, "-m", "envcheck"]
    codes = []
    for i in range(12):
        p = subprocess.Popen([*argv, "plan", "--gpu", "A100", "--format", "pip"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default)
        time.sleep(i * 0.025)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        tally["vectors.sigint.startup"] += 1
        if err not in ("", "envcheck: interrupted\n"):  # Python's own words: the signal came before envcheck
            tally["sigint.before_envcheck"] += 1
            assert envcheck_frames(err) == [] and err.rstrip().endswith("KeyboardInterrupt"), err
            assert p.returncode in (-signal.SIGINT, 1), (p.returncode, err)  # re-raised, or "Could not import runpy"
            continue
        assert (p.returncode, err) in ((0, ""), (130, "envcheck: interrupted\n"), (-signal.SIGINT, "")), \
            (p.returncode, err)
        codes.append(p.returncode)
    assert 130 in codes, codes  # some landed inside envcheck, before the run was over
