"""``pylock.toml`` (PEP 751) for a plan: torch, its companions and every dependency, with wheel URLs
and sha256 as the index serves them.

envcheck decides *what* (the build, its index, the target platform and Python); the dependency
closure of torch (``filelock``, ``sympy``, ``nvidia-*``…) is resolved by uv, the installer that
reads and writes pylock files (``uv pip compile --format pylock.toml``), for the *target* machine
(``--python-platform``/``--python-version``), not for the one envcheck runs on. The result is
checked with :mod:`packaging.pylock` (packaging ≥ 26) before it is returned, and carries the plan
under ``[tool.envcheck]`` (PEP 751 reserves ``[tool]`` for this).

This is the one renderer that reads the network: the plan's index (or its ``--mirror``) and the
default index (PyPI, or ``UV_DEFAULT_INDEX``) must be reachable.
"""

from __future__ import annotations

import os
import sys
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

import tomli_w

from envcheck.errors import CouldNotRun, UsageError
from envcheck.render.common import title, version
from envcheck.resolve.plan import Plan
from envcheck.resolve.rules import span_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

__all__ = ["PylockError", "uv_target", "requirements_in", "render_pylock", "check_pylock"]

UV_TIMEOUT = 600.0  # seconds uv may take in all by default (`plan --timeout S`); past it uv is stopped


class PylockError(CouldNotRun):
    """The lock could not be made (no uv, an index unreachable, a file without a hash). Exit code 3:
    could not run."""


def uv_target(plan: Plan) -> str:
    """uv's ``--python-platform`` for the plan's machine: ``x86_64-manylinux_2_28``,
    ``aarch64-apple-darwin``, ``x86_64-pc-windows-msvc``.

    For Linux the glibc floor is the chosen wheel's manylinux tag (so every dependency picked also
    runs where torch runs); a bare ``linux_*`` tag uses the machine's glibc.
    """
    m = plan.machine
    platform = m.platform
    arch = platform.split("-", 1)[1]
    cpu = {"arm64": "aarch64", "x86": "i686"}.get(arch, arch)
    if m.os == "macos":
        return f"{cpu}-apple-darwin"
    if m.os == "windows":
        return f"{cpu}-pc-windows-msvc"
    tag = plan.build.wheel_tag.get(platform, "")
    found = re.search(r"manylinux_(\d+)_(\d+)", tag)
    if found:
        return f"{cpu}-manylinux_{found.group(1)}_{found.group(2)}"
    if "manylinux2014" in tag:
        return f"{cpu}-manylinux_2_17"
    glibc = m.glibc or plan.build.glibc
    if glibc:
        major, minor = (glibc.split(".") + ["0"])[:2]
        return f"{cpu}-manylinux_{major}_{minor}"
    return f"{cpu}-unknown-linux-gnu"


def requirements_in(plan: Plan) -> str:
    """The input uv resolves: the plan's pins, exact (local labels included), and its ranges (``numpy<2``)."""
    return "".join(f"{req}\n" for req in plan.requirements())


def index_args(plan: Plan) -> List[str]:
    """How uv reaches the build's files.

    The PyTorch index is added with ``--index`` (uv searches it *before* the default index and, by
    its first-index strategy, takes every package it serves from there), and the default index
    stays in place for the dependencies it does not serve — the same reason requirements.txt
    uses ``--extra-index-url``.
    """
    if plan.build.channel == "pypi" or not plan.index_url:
        return []
    if plan.index_kind == "find-links":
        return ["--find-links", plan.index_url]
    return ["--index", plan.index_url]


def check_pylock(text: str) -> Dict[str, Any]:
    """Parse and validate a pylock document with :mod:`packaging.pylock`.

    Raises:
        PylockError: not TOML, or not a valid PEP 751 lock.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PylockError(f"pylock.toml is not TOML: {exc}") from None
    try:
        from packaging.pylock import Pylock, PylockValidationError
    except ImportError:  # packaging < 26: no validator; the structure is still checked by uv
        return doc
    try:
        Pylock.from_dict(doc).validate()
    except PylockValidationError as exc:
        raise PylockError(f"pylock.toml is not a valid PEP 751 lock: {exc}") from None
    return doc


def find_uv() -> Optional[str]:
    """uv: ``ENVCHECK_UV``, then ``PATH``, then the one the ``uv`` package installed beside this Python."""
    from envcheck.runner import which

    if os.environ.get("ENVCHECK_UV"):
        return os.environ["ENVCHECK_UV"]
    found = which("uv")
    if found:
        return found
    try:
        from uv import find_uv_bin  # the PyPI package `uv`

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return None


def _uv() -> str:
    found = find_uv()
    if not found:
        raise PylockError("--format pylock needs uv to resolve torch's dependencies for the target machine: "
                          "`python -m pip install uv` (or put it on PATH, or set ENVCHECK_UV)")
    return found


def render_pylock(plan: Plan, timeout: float = UV_TIMEOUT) -> str:
    """``pylock.toml`` text for ``plan``.

    Every wheel carries the sha256 the index lists (PEP 751 requires a hash per file, so a lock is
    always hash-pinned; ``--hashes`` changes nothing here).

    Raises:
        PylockError: uv missing or failing (its last lines are quoted), a file the index lists
            without a sha256, or the result is not a valid PEP 751 lock.
    """
    from envcheck.runner import run

    python = plan.python or f"{plan.machine.python or ''}"
    if not python:
        raise UsageError("--format pylock needs a target Python: give --python X.Y")
    with tempfile.TemporaryDirectory(prefix="envcheck-pylock-") as tmp:
        req = Path(tmp) / "requirements.in"
        out = Path(tmp) / "pylock.toml"
        req.write_text(requirements_in(plan), encoding="utf-8")
        argv = [_uv(), "pip", "compile", str(req), "--format", "pylock.toml", "-o", str(out), "--quiet",
                "--python-version", python, "--python-platform", uv_target(plan),
                "--no-header", *index_args(plan)]
        env = dict(os.environ)
        env.setdefault("UV_NO_PROGRESS", "1")
        # uv's own wait for one request (UV_HTTP_TIMEOUT, 30 s by default) never outlasts the whole deadline
        own = env.get("UV_HTTP_TIMEOUT", "")
        if not (own.isdigit() and 0 < int(own) <= timeout):
            env["UV_HTTP_TIMEOUT"] = str(max(1, min(30, int(timeout))))
        r = run(argv, timeout=timeout, env=env)
        if not r.ok:
            tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-8:])
            hint = "; give it more time with `plan --timeout S`" if "timed out" in (r.error or "") else ""
            raise PylockError(f"uv could not lock torch {plan.pins.get('torch')} for {uv_target(plan)} / Python "
                              f"{python}: {r.error}{hint}\n{tail}".rstrip())
        raw = out.read_text(encoding="utf-8")
    doc = tomllib.loads(raw)
    missing = [p["name"] for p in doc.get("packages", [])
               for w in p.get("wheels", []) if not (w.get("hashes") or {}).get("sha256")]
    if missing:
        raise PylockError(f"the index gave no sha256 for {', '.join(sorted(set(missing)))}; a PEP 751 lock "
                          "needs one per file (pick an index or mirror that lists hashes)")
    check_pylock(raw)
    doc.setdefault("created-by", "uv")
    # uv writes ">=3.11" for --python-version 3.11, but it resolved for that Python alone (markers
    # evaluated for it, wheels chosen for it): the lock covers no other
    doc["requires-python"] = span_spec(python.rstrip("t"), python.rstrip("t"))
    doc["tool"] = {"envcheck": _tool_table(plan)}
    head = [f"# {title(plan)}",
            f"# Written by envcheck {version()} (`envcheck plan --format pylock`), dependencies resolved by uv for",
            f"# {uv_target(plan)} / Python {python}. Install: uv pip install -r pylock.toml"]
    from envcheck.render.recipe import recipe_comment

    head.append(recipe_comment(plan))
    text = "\n".join(head) + "\n" + tomli_w.dumps(doc)
    check_pylock(text)
    return text


def _tool_table(plan: Plan) -> Dict[str, Any]:
    b = plan.build
    table: Dict[str, Optional[Any]] = {
        "envcheck": version(),
        "torch": plan.pins.get("torch"),
        "variant": b.variant,
        "index-url": plan.index_url or None,
        "platform": plan.machine.platform,
        "python": plan.python or None,
        "machine": plan.machine.describe(),
    }
    return {k: v for k, v in table.items() if v is not None}
