"""render(Plan) → the files a person installs from; :func:`write_outputs` puts them on disk safely.

Formats (``--format``): ``pip`` → requirements.txt, ``conda`` → environment.yml,
``docker`` → Dockerfile, ``lock`` → envcheck.lock.toml (the default set), ``uv`` →
pyproject.uv.toml (``[tool.uv]`` index and sources with platform markers), and ``script`` →
install.sh / install.ps1 (the recipe, runnable); ``all`` = every one. Every format carries the
same recipe steps (:mod:`envcheck.render.recipe`).
"""

from __future__ import annotations

from typing import Dict, List, Sequence

from envcheck.errors import UsageError
from envcheck.render.files import (
    render_dockerfile,
    render_environment,
    render_lock,
    render_requirements,
    render_uv,
)
from envcheck.render.recipe import render_script, script_name
from envcheck.resolve.plan import Plan

FORMATS = {
    "pip": ("requirements.txt", render_requirements),
    "conda": ("environment.yml", render_environment),
    "docker": ("Dockerfile", render_dockerfile),
    "lock": ("envcheck.lock.toml", render_lock),
    "uv": ("pyproject.uv.toml", render_uv),
    "script": ("install.sh", render_script),  # install.ps1 for a Windows plan (script_name)
}
DEFAULT_FORMATS = ("pip", "conda", "docker", "lock")


def parse_formats(text: str) -> list:
    """``"pip,conda"`` → ``["pip", "conda"]``.

    Raises:
        UsageError: an unknown format.
    """
    out: List[str] = []
    for f in (x.strip().lower() for x in text.split(",")):
        if not f:
            continue
        if f == "all":
            out.extend(FORMATS)
            continue
        if f not in FORMATS:
            raise UsageError(f"--format {f!r}: expected a comma-separated list of {', '.join(FORMATS)}")
        out.append(f)
    if not out:
        raise UsageError("--format: give at least one of " + ", ".join(FORMATS))
    return list(dict.fromkeys(out))


def render(plan: Plan, formats: Sequence[str] = DEFAULT_FORMATS) -> Dict[str, str]:
    """``{file name: text}`` for each requested format."""
    return {(script_name(plan) if f == "script" else FORMATS[f][0]): FORMATS[f][1](plan) for f in formats}
