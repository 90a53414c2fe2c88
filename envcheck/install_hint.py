"""How to add an extra to, or update, *this* envcheck — read from how it was installed.

The name ``envcheck`` on PyPI belongs to an unrelated project, so a hint such as
``pip install 'envcheck[docker]'`` or ``pip install -U envcheck`` would fetch the wrong package in a
fresh environment. The hints here name what the extra actually pulls (read from the installed
distribution's ``Requires-Dist`` lines, i.e. pyproject.toml's ``[project.optional-dependencies]``)
and, for envcheck itself, the place it was installed from (PEP 610 ``direct_url.json``: a checkout,
a VCS URL or an archive).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List, Optional
from urllib.parse import unquote, urlparse

DIST = "envcheck"
#: said when envcheck's origin is unknown: the PyPI name is taken by another project
PYPI_NOTE = "the 'envcheck' on PyPI is an unrelated project"


def _metadata():  # type: ignore[no-untyped-def]
    """The installed distribution of this package, or ``None`` (run from a source tree, or the
    ``envcheck`` installed is not this one)."""
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        dist = metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        return None
    from envcheck import __version__

    return dist if dist.version == __version__ else None


def _source_requirements() -> Optional[List[str]]:
    """``Requires-Dist``-like lines built from pyproject.toml beside the package (a source tree)."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - exercised on 3.9/3.10 only
            import tomli as tomllib
        doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        extras: Dict[str, List[str]] = doc["project"]["optional-dependencies"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return [f"{req}; extra == '{name}'" for name, reqs in extras.items() for req in reqs]


def extra_requirements(extra: str) -> List[str]:
    """The requirements the extra ``extra`` pulls, e.g. ``['docker>=6.1']`` (envcheck's own
    self-references such as ``envcheck[docker,update]`` expanded); ``[]`` when unknown."""
    from packaging.requirements import InvalidRequirement, Requirement

    dist = _metadata()
    lines = (dist.requires or []) if dist is not None else (_source_requirements() or [])
    out: List[str] = []
    seen = set()
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is None or not req.marker.evaluate({"extra": extra}):
            continue
        if req.name.lower() == DIST:  # a self-reference (`all = ["envcheck[docker,...]"]`)
            for sub in sorted(req.extras):
                for r in extra_requirements(sub):
                    if r not in seen:
                        seen.add(r)
                        out.append(r)
            continue
        text = f"{req.name}{req.specifier}"
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def _direct_url() -> Optional[dict]:
    dist = _metadata()
    if dist is None:
        return None
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("url"), str) else None


def _local_dir(url: str) -> Optional[str]:
    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme == "file" else None


def install_target(extra: str = "") -> Optional[str]:
    """A ``pip install`` argument that installs *this* envcheck (with ``[extra]``), or ``None`` when
    its origin is not on record: ``-e '/path/to/checkout[all]'``, ``'git+https://…#egg=…'``…"""
    data = _direct_url()
    if data is None:
        return None
    url = data["url"]
    suffix = f"[{extra}]" if extra else ""
    if "dir_info" in data:
        path = _local_dir(url)
        if path is None:
            return None
        editable = isinstance(data["dir_info"], dict) and data["dir_info"].get("editable")
        return f"{'-e ' if editable else ''}'{path}{suffix}'"
    if "vcs_info" in data and isinstance(data["vcs_info"], dict):
        vcs = data["vcs_info"].get("vcs", "git")
        return f"'{DIST}{suffix} @ {vcs}+{url}'"
    return f"'{DIST}{suffix} @ {url}'"


def extra_hint(extra: str) -> str:
    """``pip install 'docker>=6.1'`` (+ how to install every extra with this envcheck)."""
    reqs = extra_requirements(extra)
    target = install_target("all")
    every = (f"every extra: pip install {target}" if target is not None
             else "every extra: pip install '.[all]' in the envcheck checkout")
    if not reqs:
        return every
    return "pip install " + " ".join(f"'{r}'" for r in reqs) + f" ({every})"


def update_hint() -> str:
    """How to update this envcheck: from its checkout, VCS URL or archive (never PyPI's name)."""
    data = _direct_url()
    if data is not None and "dir_info" in data:
        path = _local_dir(data["url"])
        if path is not None:
            pull = f"git -C '{path}' pull" if (Path(path) / ".git").exists() else f"update {path}"
            if isinstance(data["dir_info"], dict) and data["dir_info"].get("editable"):
                return f"`{pull}`: an editable install, nothing to reinstall"
            return f"`{pull}` then `pip install --upgrade '{path}'`"
    target = install_target()
    if target is not None:
        return f"`pip install --upgrade {target}`"
    return f"reinstall a newer envcheck from where this one came ({PYPI_NOTE})"
