"""render(Plan) → the files a person installs from; :func:`write_outputs` puts them on disk safely.

Formats (``--format``): ``pip`` → requirements.txt, ``conda`` → environment.yml,
``docker`` → Dockerfile, ``lock`` → envcheck.lock.toml (the default set), ``uv`` →
pyproject.uv.toml (``[tool.uv]`` index and sources with platform markers), ``script`` →
install.sh / install.ps1 (the recipe, runnable), ``pixi`` → pixi.toml (conda-forge on its own
terms, system requirements), ``variants`` → variants.env (PREVIEW: the wheel-variant provider
overrides for the machine), ``pylock`` → pylock.toml (PEP 751; dependencies resolved by uv for the
target, reads the index); ``all`` = every one except ``pylock`` (the only format that needs the
network). Every format carries the same recipe steps (:mod:`envcheck.render.recipe`).
"""

from __future__ import annotations

from envcheck.errors import UsageError
from envcheck.resolve.plan import Plan

TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple


def _lazy(module: str, name: str) -> Callable[..., str]:
    """The renderer ``name`` of ``envcheck.render.<module>``, imported when a format is first
    rendered: a command loads only the modules of the formats it asks for (``plan --json`` none)."""

    def renderer(plan: Plan, *args: Any, **options: Any) -> str:
        # __import__, not importlib.import_module: an import statement's path, which -X importtime reports
        found = __import__(f"envcheck.render.{module}", fromlist=[name])
        return getattr(found, name)(plan, *args, **options)

    renderer.__qualname__ = name
    return renderer


FORMATS = {
    "pip": ("requirements.txt", _lazy("files", "render_requirements")),
    "conda": ("environment.yml", _lazy("files", "render_environment")),
    "docker": ("Dockerfile", _lazy("files", "render_dockerfile")),
    "lock": ("envcheck.lock.toml", _lazy("files", "render_lock")),
    "uv": ("pyproject.uv.toml", _lazy("uvproject", "render_uv")),
    "script": ("install.sh", _lazy("recipe", "render_script")),  # install.ps1 for a Windows plan (file_name)
    "pixi": ("pixi.toml", _lazy("pixi", "render_pixi")),
    "variants": ("variants.env", _lazy("variantsenv", "render_variants_env")),
    "pylock": ("pylock.toml", _lazy("pylock", "render_pylock")),
}
NETWORK_FORMATS = ("pylock",)
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
            out.extend(f for f in FORMATS if f not in NETWORK_FORMATS)
            continue
        if f not in FORMATS:
            raise UsageError(f"--format {f!r}: expected a comma-separated list of {', '.join(FORMATS)}")
        out.append(f)
    if not out:
        raise UsageError("--format: give at least one of " + ", ".join(FORMATS))
    return list(dict.fromkeys(out))


#: The text every file of one plan carries (its comment block, its lock), made once while
#: :func:`render` or :func:`render_available` render that plan into several formats: ``id(plan)`` →
#: {key: text}. Kept only for the length of that call, so a plan changed later is rendered afresh.
_SHARED: Dict[int, Dict[object, str]] = {}


def shared(plan: Plan, key: object, make: Callable[[], str]) -> str:
    """``make()``, made once per ``key`` while ``plan`` is being rendered into several formats (else
    each time: a single renderer called on its own)."""
    memo = _SHARED.get(id(plan))
    if memo is None:
        return make()
    if key not in memo:
        memo[key] = make()
    return memo[key]


def render(plan: Plan, formats: Sequence[str] = DEFAULT_FORMATS,
           options: Optional[Mapping[str, Mapping[str, Any]]] = None) -> Dict[str, str]:
    """``{file name: text}`` for each requested format.

    Args:
        options: per-format keyword arguments (``{"uv": {"extra_plans": […]}, "pip": {"style": "project"}}``).
    """
    options = options or {}
    _SHARED[id(plan)] = {}
    try:
        return {file_name(plan, f): FORMATS[f][1](plan, **dict(options.get(f, {}))) for f in formats}
    finally:
        del _SHARED[id(plan)]


def file_name(plan: Plan, fmt: str) -> str:
    """The file a format is written as (``install.ps1`` for a Windows plan's script)."""
    if fmt == "script":
        from envcheck.render.recipe import script_name

        return script_name(plan)
    return FORMATS[fmt][0]


def render_available(plan: Plan, formats: Sequence[str], options: Optional[Mapping[str, Mapping[str, Any]]] = None,
                     explicit: Sequence[str] = ()) -> Tuple[Dict[str, str], List[Tuple[str, str]]]:
    """:func:`render`, except that a format this plan cannot be produced in (its renderer refuses:
    no Docker base image for the backend, …) is left out — ``(file name, why)`` in the second value —
    unless the user named it (``explicit``): then its refusal is raised.

    Raises:
        UsageError: an ``explicit`` format that cannot be produced for this plan (nothing rendered).
    """
    options = options or {}
    files: Dict[str, str] = {}
    skipped: List[Tuple[str, str]] = []
    _SHARED[id(plan)] = {}
    try:
        for f in formats:
            name = file_name(plan, f)
            try:
                files[name] = FORMATS[f][1](plan, **dict(options.get(f, {})))
            except UsageError as exc:
                if f in explicit:
                    raise UsageError(f"--format {f}: {name} cannot be made for this plan: {exc}") from None
                skipped.append((name, str(exc)))
    finally:
        del _SHARED[id(plan)]
    return files, skipped
