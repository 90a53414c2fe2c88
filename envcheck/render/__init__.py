"""render(Plan) → the files a person installs from; :func:`write_outputs` puts them on disk safely.

Formats (``--format``): ``pip`` → requirements.txt, ``conda`` → environment.yml,
``docker`` → Dockerfile, ``lock`` → envcheck.lock.toml (the default set), and ``uv`` →
pyproject.uv.toml (``[tool.uv]`` index and sources with platform markers); ``all`` = every one.
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
from envcheck.resolve.plan import Plan

FORMATS = {
    "pip": ("requirements.txt", render_requirements),
    "conda": ("environment.yml", render_environment),
    "docker": ("Dockerfile", render_dockerfile),
    "lock": ("envcheck.lock.toml", render_lock),
    "uv": ("pyproject.uv.toml", render_uv),
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
    return {FORMATS[f][0]: FORMATS[f][1](plan) for f in formats}
