"""Wheel file names → what they are built for: release, variant, Python, platform.

A name is parsed with :func:`packaging.utils.parse_wheel_filename` (PEP 427 / PEP 425); the rest
is a translation of its tags into envcheck's names (matrices/README.md "Names used throughout"):

* version ``2.7.1+cu128`` → release ``"2.7.1"`` and variant ``"cu128"`` (the local label verbatim,
  so odd labels such as ``cpu.cxx11.abi`` or ``cu117.with.pypi.cudnn`` stay variants of their own;
  ``""`` when the file carries no label);
* interpreter/ABI tag ``cp313-cp313t`` → Python ``"3.13t"`` (free-threaded, PEP 703), ``cp312-cp312``
  or ``cp312-none`` → ``"3.12"``, ``cp39-abi3`` → ``"3.9+"`` (any later CPython, not free-threaded),
  ``py3-none`` → ``"any"``;
* platform tag → platform name: ``manylinux*``/``linux`` + ``x86_64``/``aarch64`` → ``linux-…``,
  ``win_amd64``/``win_arm64`` → ``windows-…``, ``macosx_*_arm64``/``_x86_64``/``_universal2`` →
  ``macos-…``, ``any`` → every platform. Tags with no envcheck platform (``musllinux``, ``s390x``,
  ``win32``, ``i686``) map to none: the file is recorded but never chosen.

The glibc floor of a tag is not decided here: it needs the legacy manylinux aliases in
``matrices/platforms.toml`` (:meth:`envcheck.matrix.Matrix.glibc_floor`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Tuple

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

__all__ = ["WheelInfo", "parse_wheel", "supports_python", "BadWheelName"]

# PEP 425 platform-tag parts → envcheck platform names (the naming convention of the tags, not
# facts about any release; see packaging.tags for how the tags are formed).
_LINUX = re.compile(r"(?:many|)linux(?:1|2010|2014|_\d+_\d+)?_(x86_64|aarch64)$")
_WIN = {"win_amd64": "windows-x86_64", "win_arm64": "windows-arm64"}
_MAC = re.compile(r"macosx_\d+_\d+_(arm64|x86_64|intel|universal2)$")
_MAC_ARCH = {
    "arm64": ("macos-arm64",),
    "x86_64": ("macos-x86_64",),
    "intel": ("macos-x86_64",),
    "universal2": ("macos-arm64", "macos-x86_64"),
}
ANY_PLATFORM = "any"


class BadWheelName(ValueError):
    """A ``.whl`` name that packaging cannot parse (the message says why)."""


@dataclass(frozen=True)
class WheelInfo:
    """One wheel file, parsed.

    Attributes:
        filename: as served (``torch-2.7.1+cu128-cp313-cp313t-manylinux_2_28_x86_64.whl``).
        package: canonical project name (``torch``).
        release: public version without the local label (``"2.7.1"``).
        variant: the local label (``"cu128"``, ``"cpu.cxx11.abi"``) or ``""``.
        build: the wheel build number (``"1"`` in ``torch-2.0.0-1-cp310-…``) or ``""``.
        pythons: envcheck Python names the file installs on (``("3.13t",)``, ``("any",)``, ``("3.9+",)``).
        platforms: envcheck platform names (``("linux-x86_64",)``; ``("any",)`` for pure wheels;
            ``()`` for platforms envcheck does not model).
        platform_tag: the platform tags joined with ``.`` as in the file name
            (``manylinux_2_17_x86_64.manylinux2014_x86_64``), for glibc/macOS floors.
    """

    filename: str
    package: str
    release: str
    variant: str
    build: str
    pythons: Tuple[str, ...]
    platforms: Tuple[str, ...]
    platform_tag: str

    @property
    def version(self) -> str:
        """The full version the file carries: ``"2.7.1+cu128"`` or ``"2.7.1"``."""
        return f"{self.release}+{self.variant}" if self.variant else self.release

    def on_platform(self, platform: str) -> bool:
        """Whether the file installs on envcheck platform ``platform`` (``linux-x86_64``)."""
        return platform in self.platforms or ANY_PLATFORM in self.platforms


def _python_name(interpreter: str, abi: str) -> Optional[str]:
    m = re.fullmatch(r"(cp|py)(\d)(\d*)", interpreter)
    if not m:
        return None  # pp39 (PyPy), ...: not a CPython envcheck plans for
    kind, major, minor = m.groups()
    if kind == "py" or not minor:
        return ANY_PLATFORM if kind == "py" else None
    base = f"{major}.{minor}"
    if abi == "abi3":
        return f"{base}+"
    if abi.endswith("t") and abi.startswith("cp"):
        return f"{base}t"
    return base


def _platforms(platform: str) -> Tuple[str, ...]:
    if platform == ANY_PLATFORM:
        return (ANY_PLATFORM,)
    m = _LINUX.match(platform)
    if m:
        return (f"linux-{m.group(1)}",)
    if platform in _WIN:
        return (_WIN[platform],)
    m = _MAC.match(platform)
    if m:
        return _MAC_ARCH[m.group(1)]
    return ()


def _sorted_unique(items: set[str]) -> Tuple[str, ...]:
    return tuple(sorted(items))


@lru_cache(maxsize=65536)
def parse_wheel(filename: str) -> WheelInfo:
    """Parse a wheel file name (PEP 427) into a :class:`WheelInfo`.

    Raises:
        BadWheelName: not a valid wheel name (packaging's message, e.g. an invalid version).
    """
    try:
        name, version, build, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename as exc:
        raise BadWheelName(str(exc)) from None
    pythons: set[str] = set()
    platforms: set[str] = set()
    plat_tags: dict[str, None] = {}
    for t in tags:
        py = _python_name(t.interpreter, t.abi)
        if py:
            pythons.add(py)
        platforms.update(_platforms(t.platform))
        plat_tags[t.platform] = None
    label = version.local or ""
    return WheelInfo(
        filename=filename,
        package=str(canonicalize_name(name)),
        release=version.public,
        variant=label,
        build="".join(str(x) for x in build) if build else "",
        pythons=_sorted_unique(pythons),
        platforms=_sorted_unique(platforms),
        platform_tag=".".join(_tag_order(filename, plat_tags)),
    )


def _tag_order(filename: str, plat_tags: dict[str, None]) -> Tuple[str, ...]:
    """The platform tags in file-name order (tags come back from packaging as an unordered set)."""
    last = filename[: -len(".whl")].rsplit("-", 1)[-1]
    named = [p for p in last.split(".") if p in plat_tags]
    return tuple(named) if named else tuple(sorted(plat_tags))


def python_key(py: str) -> Tuple[int, int, bool]:
    """``"3.13t"`` → ``(3, 13, True)``; ``"3.9+"`` → ``(3, 9, False)``; ``"any"`` → ``(0, 0, False)``."""
    m = re.fullmatch(r"(\d+)\.(\d+)(t?)\+?", py)
    if not m:
        return (0, 0, False)
    return int(m.group(1)), int(m.group(2)), bool(m.group(3))


def supports_python(info: WheelInfo, python: str) -> bool:
    """Whether the file installs on CPython ``python`` (``"3.12"``; ``"3.13t"`` free-threaded).

    ``cpXY-abi3`` files install on X.Y and later (not on free-threaded builds, which have no
    stable ABI); ``py3`` files on any Python 3.
    """
    want = python_key(python)
    for p in info.pythons:
        if p == python or (p == ANY_PLATFORM and want[0] == 3):
            return True
        if p.endswith("+"):
            have = python_key(p)
            if not want[2] and want[0] == have[0] and want[1] >= have[1]:
                return True
    return False

