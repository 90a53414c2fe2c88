"""newcomer5 #3: the printed recipe is pasted into an interactive shell (step 0 says so), but steps
held ``exit 1`` on their failure path — and the RHEL ``python-venv-rpm`` step ``then exit 0`` on
success and a last line ``exit 1`` — which closes the user's terminal or SSH session. In every
pasted form (plan's text, the recipe comments of requirements.txt, environment.yml, the Dockerfile,
pyproject.uv.toml, variants.env) a step that exits runs in a ``( … )`` subshell, as install.sh runs
it; a PowerShell step stops with ``throw``, never ``exit``.

Checked as a class: every recipe row and post-install step of the matrix (every OS), and the
printed and written forms of the golden machines."""

from __future__ import annotations

import re

import pytest

from envcheck.matrix import load_matrix
from envcheck.render.recipe import pasted_block
from envcheck.resolve.recipe import RecipeStep
from tests.conftest import run_cli
from tests.golden.cases import PLAN_CASES

EXIT = re.compile(r"(?<![\w.$-])exit(?![\w-])")


def bare_exits(lines):
    """The ``exit`` commands of pasted lines outside a ``( … )`` block: each ``$ `` line is pasted
    as is; a line ``(`` opens a subshell block that a line ``)`` closes."""
    out, depth = [], 0
    for ln in lines:
        body = ln.strip().lstrip("#").strip()
        if body == "(":
            depth += 1
        elif body == ")":
            depth -= 1
        elif body.startswith("$ ") and EXIT.search(body) and depth == 0:
            out.append(body)
    assert depth == 0, lines
    return out


def _steps():
    m = load_matrix()
    for row in m.recipe:
        yield row.key, RecipeStep(kind=row.kind, key=row.key, title=row.title, runs_in="linux", shell=row.shell,
                                  commands=row.commands, env=dict(row.env))
    for key, st in m.steps.items():
        yield key, RecipeStep(kind="post-install", key=key, title=st.description, runs_in="linux",
                              commands=st.shell, env=dict(st.env))


@pytest.mark.parametrize("key,step", list(_steps()), ids=lambda v: v if isinstance(v, str) else "")
def test_no_pasted_step_exits_the_shell(key, step):
    lines = pasted_block(step)
    assert not bare_exits(lines), (key, lines)
    if step.shell == "powershell":
        assert not any(EXIT.search(ln) for ln in lines), (key, lines)  # PowerShell: throw, not exit
    if any(EXIT.search(ln) for ln in step.lines()) and step.shell == "bash":
        assert lines[0].strip() == "(" and lines[-1 - len(step.env)].strip() == ")", lines


def test_the_rpm_step_that_exits_on_success_runs_in_a_subshell():
    r = run_cli(["plan", "--distro", "centos7", "--gpu", "V100"])
    assert r.code == 0, r.err
    block = r.out[r.out.index("python-venv-rpm"):]
    assert "then exit 0; fi" in block  # the step itself is unchanged (install.sh runs it as is) …
    assert not bare_exits(r.out.splitlines()), r.out  # … but pasted, it runs in a subshell


@pytest.mark.parametrize("name", sorted(PLAN_CASES))
def test_printed_and_written_recipes_never_exit_the_shell(name, tmp_path):
    r = run_cli(["plan", *PLAN_CASES[name], "--format", "all", "-o", str(tmp_path)])
    if r.code == 2:
        r = run_cli(["plan", *PLAN_CASES[name], "-o", str(tmp_path), "--force"])  # no Docker base: the rest
    printed = run_cli(["plan", *PLAN_CASES[name]])
    assert not bare_exits(printed.out.splitlines()), printed.out
    for f in tmp_path.iterdir():
        if f.name in ("install.sh", "install.ps1", "envcheck.lock.toml"):
            continue  # scripts run each step in a subshell; the lock is data
        assert not bare_exits(f.read_text().splitlines()), (f.name, f.read_text())
