"""The recipe (a plan's ordered, typed steps) in every output: comment blocks for requirements.txt,
environment.yml, the Dockerfile and pyproject.uv.toml, and the runnable scripts ``install.sh``
(bash: Linux, WSL, macOS) and ``install.ps1`` (PowerShell: Windows).

The scripts stop at the first failing step, skip steps already done (each step's ``skip_if``),
ask nothing (no prompts: ``-y``, ``DEBIAN_FRONTEND=noninteractive``, ``PIP_NO_INPUT``), and end by
running ``envcheck verify`` (or a lock-free check when envcheck is not installed).

A script is self-contained: it carries the lock its verify step reads (``envcheck.lock.toml``,
written to a temporary folder at that step and removed after), so it runs the same printed to a
file, written alone (``--format script -o DIR``) or copied to another machine — never against a
lock of another plan that happens to sit beside it.
"""

from __future__ import annotations

import re
import shlex

from envcheck.resolve.plan import Plan
from envcheck.resolve.recipe import LOCK_NAME, RecipeStep

TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Mapping

#: the here-document delimiter of the lock carried in install.sh
LOCK_EOF = "ENVCHECK_LOCK_EOF"


def _lock_text(plan: Plan) -> str:
    """The plan's lock, as the script carries it (a line that would end the here-document /
    here-string early is refused: a lock never has one)."""
    from envcheck.render.files import render_lock

    text = render_lock(plan)
    if any(ln.strip() == LOCK_EOF or ln.startswith("'@") for ln in text.split("\n")):  # pragma: no cover
        raise ValueError("the lock holds a line that would end the script's here-document")
    return text


#: how install.sh, install.ps1 and the Dockerfile templates (``ENV VENV=/opt/venv PATH=/opt/venv/bin:$PATH``)
#: put the plan's environment first: its steps' ``python`` is the venv's
BASH_PATH = 'export PATH="$VENV/bin:$PATH"'
PS_PATH = '$env:PATH = "$VENV\\Scripts;$env:PATH"'


def pasteable_env(plan: Plan) -> List[str]:
    """What to run, in the shell the steps are pasted into, before the printed steps: ``$VENV`` (the
    environment's folder; default .venv here, as install.sh's beside it) and its python first on
    PATH, as the scripts and the Dockerfiles set them — without it ``python -m pip`` installs into
    whatever ``python`` is on PATH (newcomer3 #12). ``[]`` when no step runs in a venv."""
    shells = {s.shell for s in plan.recipe if s.kind in ("python", "install")}
    if "powershell" in shells:
        return ["$VENV = if ($env:VENV) { $env:VENV } else { Join-Path $PWD '.venv' }", PS_PATH]
    if "bash" in shells:
        return ['VENV="${VENV:-$PWD/.venv}"', BASH_PATH]
    return []


#: step 0 of every printed or commented recipe, above :func:`pasteable_env`'s lines (newcomer3 #12)
FIRST_STEP = ("first, in the shell you paste the steps into — the environment's folder ($VENV) and its "
              "python first on PATH (install.sh / install.ps1 and the Dockerfile set the same)")


#: a command that ends the shell it runs in: ``exit`` as a word of its own (not ``sys.exit(``, ``$?``)
_EXIT = re.compile(r"(?<![\w.$-])exit(?![\w-])")


def pasted_block(s: RecipeStep, pad: str = "      ") -> List[str]:
    """A step's commands as a person pastes them into an interactive shell: ``$ `` lines, or — for
    a step that would leave that shell (an ``exit``, which closes a terminal or an SSH session:
    newcomer5 #3) or change its folder (a multi-line post-install step's ``cd``) — one ``( … )``
    subshell, as install.sh runs every step; the step's ``export`` lines stay outside it, so the
    variables reach the shell."""
    lines = [ln.strip() for ln in s.lines()]
    if s.shell == "bash" and (any(_EXIT.search(ln) for ln in lines) or (s.kind == "post-install" and len(lines) > 1)):
        env = {f"export {k}={shlex.quote(v)}" for k, v in s.env.items()}
        run = [ln for ln in lines if ln not in env]
        return [pad + "("] + [pad + "  " + ln for ln in run] + [pad + ")"] + [
            f"{pad}$ {ln}" for ln in lines if ln in env]
    return [f"{pad}$ {ln}" for ln in lines]


def script_name(plan: Plan) -> str:
    """``install.ps1`` for a Windows plan, ``install.sh`` otherwise (Linux, WSL, macOS)."""
    return "install.ps1" if plan.machine.os == "windows" and not plan.machine.wsl else "install.sh"


def recipe_comment(plan: Plan, prefix: str = "# ", commands: bool = True, venv: bool = True) -> str:
    """The numbered recipe as comment lines: marker, title, where it runs, page, commands — after
    step 0 (``$VENV`` and its python first on PATH), unless ``venv`` is false (conda, pixi: their
    own environment replaces the [python] and [install] steps)."""
    n = len(plan.recipe)
    lines = [f"recipe ({n} steps, in order; `envcheck plan --format script` writes them as one script):"]
    first = pasteable_env(plan) if commands and venv else []
    if first:  # followed by hand, the steps' `python -m pip` must be the venv's (newcomer3 #12)
        lines.append(f"  0 {FIRST_STEP}")
        lines += [f"      $ {ln}" for ln in first]
    for i, s in enumerate(plan.recipe, 1):
        lines.append(f"  {i}/{n} {s.marker}: {s.title} — {s.where}")
        if s.url:
            lines.append(f"      page: {s.url}")
        if commands:
            lines += pasted_block(s)
        if s.check:
            lines.append(f"      check: {s.check.strip()}")
    return "\n".join(prefix + ln for ln in lines)


# ---------------------------------------------------------------------------------------------
# bash


def _bash_step(i: int, n: int, s: RecipeStep, lock: str = "") -> List[str]:
    say = shlex.quote(f"{i}/{n} {s.marker}: {s.title} ({s.where})")
    out = [f"# ---- {i}/{n} {s.marker}", f"step {say}"]
    if s.shell == "manual" or s.runs_in == "windows":  # done by hand (on WSL: on Windows), checked from here
        todo = shlex.quote(f"not done yet ({s.where}): {s.title}" + (f" — {s.url}" if s.url else ""))
        if s.check:
            out.append(f"if ! {{ {s.check.strip()}; }} >/dev/null 2>&1; then")
            out.append(f"  fail {todo}")
            out.append("fi")
            out.append(f"ok {shlex.quote('checked: ' + s.check.strip())}")
        else:
            out.append(f"note {todo}")
        return out
    body = [ln.rstrip() for ln in s.lines()]
    if s.kind == "verify" and lock:  # the lock this script carries, in a folder of its own for this step
        body = ['LOCKDIR="$(mktemp -d)"', "trap 'rm -rf \"$LOCKDIR\"' EXIT",
                f'cat > "$LOCKDIR/{LOCK_NAME}" <<\'{LOCK_EOF}\'', *lock.rstrip("\n").split("\n"), LOCK_EOF,
                'cd "$LOCKDIR"', *body]
    env = [f"export {k}={shlex.quote(v)}" for k, v in sorted(s.env.items())]
    run = [ln for ln in body if not any(ln.strip() == e for e in env)]
    if s.skip_if:
        out.append(f"if {{ {s.skip_if.strip()}; }} >/dev/null 2>&1; then")
        out.append("  ok 'already done'")
        out.append("else")
        if run:
            out += ["  (", "    set -euo pipefail"] + _indent(run, "    ", s, lock) + ["  )"]
        out.append("fi")
    elif run:
        out += ["(", "  set -euo pipefail"] + _indent(run, "  ", s, lock) + [")"]
    out += env  # at the top level: the variables must reach the verify step
    return out


def _indent(lines: List[str], pad: str, s: RecipeStep, lock: str) -> List[str]:
    """``lines`` indented by ``pad`` — except a here-document's body and end, which must stay as they are."""
    if s.kind != "verify" or not lock:
        return [pad + ln for ln in lines]
    start = next(i for i, ln in enumerate(lines) if ln.endswith(f"<<'{LOCK_EOF}'"))
    end = lines.index(LOCK_EOF, start)
    return [pad + ln for ln in lines[:start + 1]] + lines[start + 1:end + 1] + [pad + ln for ln in lines[end + 1:]]


def run_time_env(plan: Plan) -> Dict[str, str]:
    """The environment variables the recipe's steps set that torch needs at run time (newcomer M9:
    a step's ``export`` lasts only for the script)."""
    out: Dict[str, str] = {}
    for s in plan.recipe:
        out.update(s.env)
    return out


def persist_note(env: Mapping[str, str]) -> str:
    """The sentence that tells a person to keep ``env`` set (the scripts also add it to the venv's
    activate script)."""
    pairs = " ".join(f"{k}={v}" for k, v in sorted(env.items()))
    return (f"run time: torch needs {pairs} in every shell that runs it; install.sh adds it to the venv activate script "
            "(install.ps1: Activate.ps1) — running the venv python without activating it, "
            "set it yourself (e.g. in ~/.bashrc)")


def _bash_persist(env: Mapping[str, str]) -> List[str]:
    """Lines that append ``env`` to ``$VENV/bin/activate`` once (the venv is this script's own)."""
    out = ["", "# the variables torch needs at run time: kept in the venv's activate script (once)"]
    for k, v in sorted(env.items()):
        line = shlex.quote(f"export {k}={shlex.quote(v)}  # added by envcheck install.sh")
        out.append(f'grep -qs {shlex.quote("export " + k + "=")} "$VENV/bin/activate" || '
                   f'printf \'%s\\n\' {line} >> "$VENV/bin/activate"')
    out.append(f"note {shlex.quote(persist_note(env))}")
    return out


def render_bash(plan: Plan) -> str:
    from envcheck.render.common import title, version

    n = len(plan.recipe)
    head = [
        "#!/usr/bin/env bash",
        "# shellcheck disable=SC2016  # step labels print $VENV literally",
        f"# {title(plan)}",
        f"# Written by envcheck {version()} (`envcheck plan --format script`). Run: bash install.sh",
        "# Stops at the first failing step; re-running skips what is done; asks nothing.",
        "# VENV=/path bash install.sh puts the environment elsewhere (default: .venv beside this file).",
        "set -euo pipefail",
        'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"',
        'cd "$HERE"',
        'VENV="${VENV:-$HERE/.venv}"',
        '# the lock of this plan travels inside this script (its verify step); VENV may be relative to here',
        'case "$VENV" in /*) ;; *) VENV="$HERE/$VENV" ;; esac',
        BASH_PATH,
        "export DEBIAN_FRONTEND=noninteractive PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1",
    ] + ([f"# offline (plan --download): every pip call takes its wheels from {plan.offline}/ beside this file",
          f'export PIP_NO_INDEX=1 PIP_FIND_LINKS="$HERE/{plan.offline}"'] if plan.offline else []) + [
        'step() { printf \'\\n==> %s\\n\' "$1"; }',
        'ok() { printf \'    %s\\n\' "$1"; }',
        'note() { printf \'    note: %s\\n\' "$1"; }',
        'fail() { printf \'envcheck install: %s\\n\' "$1" >&2; exit 1; }',
        "# root for the steps that need it: sudo when not root already (never a password prompt: -n)",
        'sudo() { if [ "$(id -u)" = 0 ]; then "$@"; else command sudo -n "$@"; fi; }',
        "trap 'printf \"envcheck install: stopped at a failing step (exit %s)\\n\" \"$?\" >&2' ERR",
    ]
    body: List[str] = []
    lock = _lock_text(plan)
    for i, s in enumerate(plan.recipe, 1):
        body.append("")
        body += _bash_step(i, n, s, lock)
    keep = run_time_env(plan)
    tail = (_bash_persist(keep) if keep else []) + ["", "printf '\\n==> done: every step passed\\n'"]
    return "\n".join(head + body + tail) + "\n"


# ---------------------------------------------------------------------------------------------
# PowerShell


def _ps_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def render_powershell(plan: Plan) -> str:
    from envcheck.render.common import title, version

    n = len(plan.recipe)
    out = [
        f"# {title(plan)}",
        f"# Written by envcheck {version()} (`envcheck plan --format script`).",
        "# Run: powershell -ExecutionPolicy Bypass -File install.ps1",
        "# Stops at the first failing step; re-running skips what is done; asks nothing.",
        "$ErrorActionPreference = 'Stop'",
        "$ProgressPreference = 'SilentlyContinue'",
        "$HERE = Split-Path -Parent $MyInvocation.MyCommand.Path",
        "Set-Location $HERE",
        "$VENV = if ($env:VENV) { $env:VENV } else { Join-Path $HERE '.venv' }",
        PS_PATH,
        "$env:PIP_NO_INPUT = '1'",
        "function Assert-Ok([string]$What) { if ($LASTEXITCODE -ne 0) { throw \"envcheck install: $What failed (exit $LASTEXITCODE)\" } }",
    ]
    for i, s in enumerate(plan.recipe, 1):
        label = f"{i}/{n} {s.marker}: {s.title} ({s.where})"
        out += ["", f"# ---- {i}/{n} {s.marker}", f"Write-Host {_ps_quote('==> ' + label)}"]
        if s.shell == "manual":
            todo = f"not done yet ({s.where}): {s.title}" + (f" - {s.url}" if s.url else "")
            if s.check:
                # $LASTEXITCODE cleared first: a check made of cmdlets sets none (it throws when not done),
                # and a native command's code from an earlier step must not decide this one
                out.append(f"try {{ $global:LASTEXITCODE = 0; & {{ {s.check.strip()} }} *> $null; "
                           "$done = ($LASTEXITCODE -eq 0) } catch { $done = $false }")
                out.append(f"if (-not $done) {{ throw {_ps_quote(todo)} }}")
            else:
                out.append(f"Write-Host {_ps_quote('note: ' + todo)}")
            continue
        run = [ln.strip() for ln in s.lines()]
        if s.kind == "verify":  # the lock this script carries, in a folder of its own for this step
            out += ["$LOCKDIR = Join-Path ([System.IO.Path]::GetTempPath()) ('envcheck-' + [guid]::NewGuid())",
                    "New-Item -ItemType Directory -Path $LOCKDIR | Out-Null",
                    "$LOCK = @'", *_lock_text(plan).rstrip("\n").split("\n"), "'@",
                    f"[System.IO.File]::WriteAllText((Join-Path $LOCKDIR '{LOCK_NAME}'), $LOCK)  # UTF-8, no BOM",
                    "Push-Location $LOCKDIR",
                    "try {"]
            out += [f"  {ln}" for ln in run] + [f"  Assert-Ok {_ps_quote(s.marker)}",
                                                "} finally { Pop-Location; Remove-Item -Recurse -Force $LOCKDIR }"]
            continue
        if s.skip_if:
            out.append(f"if ({s.skip_if.strip()}) {{ Write-Host '    already done' }} else {{")
            out += [f"  {ln}" for ln in run] + [f"  Assert-Ok {_ps_quote(s.marker)}", "}"]
        else:
            out += run + [f"Assert-Ok {_ps_quote(s.marker)}"]
        out += [f"$env:{k} = {_ps_quote(v)}" for k, v in sorted(s.env.items())]
    keep = run_time_env(plan)
    if keep:  # kept in the venv's Activate.ps1 (once)
        act = "(Join-Path $VENV 'Scripts\\Activate.ps1')"
        out += ["", "# the variables torch needs at run time: kept in the venv's activation script (once)"]
        for k, v in sorted(keep.items()):
            line = f"$env:{k} = {_ps_quote(v)}  # added by envcheck install.ps1"
            out.append(f"if (-not (Select-String -Quiet -SimpleMatch -Path {act} -Pattern {_ps_quote('$env:' + k + ' =')})) "
                       f"{{ Add-Content -Path {act} -Value {_ps_quote(line)} }}")
        out.append(f"Write-Host {_ps_quote('note: ' + persist_note(keep))}")
    out += ["", "Write-Host '==> done: every step passed'"]
    return "\r\n".join(out) + "\r\n"


def render_script(plan: Plan) -> str:
    """``install.sh`` or ``install.ps1`` (see :func:`script_name`)."""
    return render_powershell(plan) if script_name(plan) == "install.ps1" else render_bash(plan)
