"""The wheelhouse: every wheel an image needs, on the host, installed in the build with
``pip install --no-index --find-links`` — the air-gapped path (the build needs no index).

A folder that already holds wheels is used as it is (each pinned package must have its wheel
there); an empty or missing folder is filled by ``pip download`` of the plan's pins for the
*image's* Python and platform (``--python-version``, ``--abi``, ``--platform manylinux_2_N_arch``
for every glibc up to the base image's), from the plan's index, with pip's own configuration
(proxies, find-links, extra indexes) honoured. Where the plan's index cannot serve them and plain
PyPI serves the same build of that release (``[release.pypi]`` in matrices/torch-releases.toml:
``linux-x86_64 = "cu130"``), PyPI's files are used: the same build without the ``+cu130`` label.
"""

from __future__ import annotations

import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from envcheck import fsutil, runner
from envcheck.fsutil import shown
from envcheck.errors import CouldNotRun, UsageError

#: Seconds ``pip download`` may take (a CUDA build with its nvidia-* wheels is ~3 GB).
DOWNLOAD_TIMEOUT = 3600.0
#: The oldest glibc a manylinux tag names (manylinux1 = glibc 2.5, PEP 513/600).
MANYLINUX_FLOOR = 5
#: PEP 600 aliases of the legacy tags (manylinux2014 = manylinux_2_17, 2010 = 2_12, 1 = 2_5).
LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}

Say = Callable[[str], None]
GIVEN = "a wheelhouse given on the host (pip --no-index)"


class WheelhouseError(CouldNotRun):
    """The wheels could not be gathered (pip failed, the index is unreachable), or a given
    wheelhouse lacks some. Exit code 3: could not run."""


@dataclass
class Wheelhouse:
    """Wheels ready for a build.

    Attributes:
        path: the folder.
        pins: what the image installs from it (``{"torch": "2.13.0+cpu"}``).
        origin: how the wheels got there, in words.
        notes: sentences worth telling (PyPI files used for the plan's build…).
        requires: the plan's ranges the folder serves (``{"numpy": "<2"}``), installed beside the pins.
    """

    path: Path
    pins: Dict[str, str]
    origin: str
    notes: List[str] = field(default_factory=list)
    requires: Dict[str, str] = field(default_factory=dict)


def select_pins(plan_pins: Dict[str, str], packages: Optional[Sequence[str]]) -> Dict[str, str]:
    """The plan's pins, or only ``packages`` of them (``--packages torch``).

    Raises:
        UsageError: a package the plan does not pin, or a list without torch.
    """
    if not packages:
        return dict(plan_pins)
    wanted = [p.strip().lower() for p in packages if p.strip()]
    unknown = [p for p in wanted if p not in plan_pins]
    if unknown:
        raise UsageError(f"--packages {','.join(unknown)}: the plan pins only {', '.join(plan_pins)}")
    if "torch" not in wanted:
        raise UsageError("--packages: torch must be one of them (the image is for torch)")
    return {k: v for k, v in plan_pins.items() if k in wanted}


def platform_tags(arch: str, glibc: str) -> List[str]:
    """pip ``--platform`` values for a Linux whose glibc is ``glibc``: every manylinux tag it runs,
    newest first (pip before 24 does not expand ``manylinux_2_36`` to the older ones itself).

    >>> platform_tags("x86_64", "2.17")[:2]
    ['manylinux_2_17_x86_64', 'manylinux2014_x86_64']
    """
    major, minor = (int(x) for x in glibc.split(".")[:2])
    if major != 2:
        raise UsageError(f"glibc {glibc}: expected 2.N")
    tags: List[str] = []
    for n in range(minor, MANYLINUX_FLOOR - 1, -1):
        tags.append(f"manylinux_2_{n}_{arch}")
        if n in LEGACY_MANYLINUX:
            tags.append(f"{LEGACY_MANYLINUX[n]}_{arch}")
    return tags + [f"linux_{arch}"]


def abi_of(python: str) -> str:
    """``"3.11"`` → ``cp311``; ``"3.13t"`` → ``cp313t`` (free-threaded)."""
    ft = python.endswith("t")
    return "cp" + python.rstrip("t").replace(".", "") + ("t" if ft else "")


def find_wheel(directory: Path, name: str, version: str) -> Optional[Path]:
    """The wheel of ``name==version`` in ``directory`` (local labels compared too), if any."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    want_name, want = canonicalize_name(name), Version(version)
    for whl in sorted(directory.glob("*.whl")):
        try:
            wname, wver, _, _ = parse_wheel_filename(whl.name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if wname == want_name and wver == want:
            return whl
    return None


def has_wheel_in_range(directory: Path, name: str, spec: str) -> bool:
    """Whether ``directory`` holds a wheel of ``name`` whose version ``spec`` allows (``""`` = any)."""
    from packaging.specifiers import SpecifierSet
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
    from packaging.version import InvalidVersion

    want, allowed = canonicalize_name(name), SpecifierSet(spec)
    for whl in directory.glob("*.whl"):
        try:
            wname, wver, _, _ = parse_wheel_filename(whl.name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if wname == want and wver in allowed:
            return True
    return False


def missing(directory: Path, pins: Dict[str, str]) -> List[str]:
    """``["torchvision==0.28.0+cpu"]``: pins without a wheel in ``directory``."""
    return [f"{k}=={v}" for k, v in pins.items() if find_wheel(directory, k, v) is None]


def pypi_pins(plan: object, pins: Dict[str, str]) -> Optional[Dict[str, str]]:
    """``pins`` without local labels when plain PyPI serves this very build of the release on the
    plan's platform (matrix ``[release.pypi]``); else ``None``."""
    release, build = plan.release, plan.build  # type: ignore[attr-defined]
    platform = plan.machine.platform  # type: ignore[attr-defined]
    if build.channel == "pypi" or release.pypi.get(platform) != build.variant:
        return None
    bare = {k: v.split("+", 1)[0] for k, v in pins.items()}
    return bare if bare != pins else None


def download_argv(dest: Path, pins: Dict[str, str], python: str, platforms: Sequence[str],
                  index_option: str = "", pip: Sequence[str] = (), requires: Optional[Dict[str, str]] = None) -> List[str]:
    """The ``pip download`` command for ``pins`` (and the ranges ``requires``: ``{"numpy": "<2"}``)
    targeting ``python`` on ``platforms``."""
    argv = list(pip or [sys.executable, "-m", "pip"]) + [
        "download", "--only-binary=:all:", "--dest", str(dest),
        "--python-version", python.rstrip("t"), "--implementation", "cp", "--abi", abi_of(python)]
    for tag in platforms:
        argv += ["--platform", tag]
    argv += shlex.split(index_option)
    return argv + [f"{k}=={v}" for k, v in pins.items()] + [f"{k}{v}" for k, v in (requires or {}).items()]


def pip_download(argv: Sequence[str], say: Say = lambda s: None, timeout: float = DOWNLOAD_TIMEOUT) -> None:
    """Run ``pip download`` through :func:`envcheck.runner.start`, telling each wheel saved.

    Raises:
        WheelhouseError: pip failed or hung (its ERROR lines are in the message).
    """
    stream = runner.start(list(argv))
    end = time.monotonic() + timeout
    out: List[str] = []
    try:
        while True:
            kind, line = stream.readline(max(0.0, end - time.monotonic()))
            if kind == runner.Stream.TIMEOUT:
                stream.kill(after=timeout)
                break
            if kind == runner.Stream.EOF:
                break
            out.append(line)
            if line.startswith(("Saved ", "File was already downloaded", "Collecting ")):
                say(line.strip())
    except BaseException:  # interrupted: pip stops before its folder is cleaned up
        stream.kill()
        stream.finish()
        raise
    res = stream.finish()
    if not res.ok:
        errors = [ln.strip() for ln in (out + res.stderr.splitlines())
                  if ln.startswith("ERROR") or "user requested" in ln] or res.stderr.splitlines()[-3:]
        raise WheelhouseError(f"pip download failed ({res.error}): " + " ".join(errors)[-800:])


def prepare(plan: object, directory: Path, pins: Dict[str, str], glibc: str,
            say: Say = lambda s: None, pip: Sequence[str] = (), requires: Optional[Dict[str, str]] = None,
            timeout: Optional[float] = None, flag: str = "--wheelhouse") -> Wheelhouse:
    """Wheels for ``pins`` in ``directory``: checked when it holds wheels, downloaded when empty.

    Args:
        plan: the Plan (its index option, Python, platform, release).
        glibc: the base image's glibc (``"2.36"``): the newest manylinux tag accepted.
        pip: the pip command (default: this interpreter's ``python -m pip``).
        timeout: seconds every pip download of this call may take in all (default
            :data:`DOWNLOAD_TIMEOUT`): one deadline, also across the retry from plain PyPI.
        flag: the flag that named ``directory`` (``plan --download``; ``docker build --wheelhouse``), for the error.
        requires: ranges to gather beside the pins (default: the plan's, ``{"numpy": "<2"}``); a
            given folder without a wheel in a range leaves that range out (said in the notes: torch
            imports without NumPy, with a warning).

    Raises:
        WheelhouseError: a given wheelhouse lacks pinned wheels, or the download failed.
    """
    directory = Path(directory)
    alt = pypi_pins(plan, pins)
    pypi_note = ("plain PyPI serves this very build ({} on {}, matrices/torch-releases.toml [release.pypi]): "
                 "installing its files, {}".format(plan.build.variant, plan.machine.platform,  # type: ignore[attr-defined]
                                                   ", ".join(f"{k}=={v}" for k, v in (alt or {}).items())))
    ranges = dict(plan.requires if requires is None else requires)  # type: ignore[attr-defined]
    if directory.is_dir() and any(directory.glob("*.whl")):
        served = {k: v for k, v in ranges.items() if has_wheel_in_range(directory, k, v)}
        left = [f"{k}{v}: no wheel in {shown(directory)}; left out of the install (add one: pip download '{k}{v}' -d "
                f"{shown(directory)})" for k, v in ranges.items() if k not in served]
        miss = missing(directory, pins)
        if not miss:
            return Wheelhouse(directory, dict(pins), GIVEN, left, served)
        if alt and not missing(directory, alt):
            return Wheelhouse(directory, alt, GIVEN, [pypi_note] + left, served)
        raise WheelhouseError(
            f"{shown(directory)} has no wheel for {', '.join(miss)}: add them (pip download … -d {shown(directory)}), "
            f"point {flag} at an empty folder to download them, or leave companions out with --packages torch")
    with fsutil.undo_on_failure(directory):  # a failed download leaves no folder or wheel of its own
        directory.mkdir(parents=True, exist_ok=True)
        return _download(plan, directory, pins, glibc, say, pip, ranges, alt, pypi_note,
                         time.monotonic() + (timeout or DOWNLOAD_TIMEOUT))


def _download(plan: object, directory: Path, pins: Dict[str, str], glibc: str, say: Say, pip: Sequence[str],
              ranges: Dict[str, str], alt: Optional[Dict[str, str]], pypi_note: str, end: float) -> Wheelhouse:
    python = plan.python or f"{sys.version_info[0]}.{sys.version_info[1]}"  # type: ignore[attr-defined]
    platforms = platform_tags(plan.machine.arch, glibc)  # type: ignore[attr-defined]
    index = plan.index_option  # type: ignore[attr-defined]
    say(f"pip download {' '.join(f'{k}=={v}' for k, v in pins.items())} for Python {python} "
        f"({index or 'pip’s configured index'})")
    try:
        pip_download(download_argv(directory, pins, python, platforms, index, pip, ranges), say,
                     max(0.1, end - time.monotonic()))
        return Wheelhouse(directory, dict(pins), f"pip download from {index or 'pip’s configured index'}",
                          requires=ranges)
    except WheelhouseError as first:
        if not alt:
            raise
        say(f"the plan's index could not serve them ({first}); trying plain PyPI's files of the same build")
        try:
            pip_download(download_argv(directory, alt, python, platforms, "", pip, ranges), say,
                         max(0.1, end - time.monotonic()))
        except WheelhouseError as second:
            raise WheelhouseError(f"{first}\n  and from pip's configured index: {second}") from None
        return Wheelhouse(directory, alt, "pip download from pip's configured index", [pypi_note], ranges)
