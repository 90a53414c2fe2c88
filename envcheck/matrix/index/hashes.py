"""sha256 pins for ``plan --hashes``: every wheel file of the chosen build for one platform+Python.

The hashes come from the generated index data (``matrices/generated-index-*.toml``, written by
``envcheck matrix update``), never from the network at plan time. A requirements file with
``--hash=sha256:…`` lines for each package lets ``pip install --require-hashes`` refuse any other
file. pip's hash-checking mode needs *every* installed distribution pinned with a hash, the
dependencies of torch included (``nvidia-*``, ``filelock``, …): pass those in ``companions`` too
(after ``envcheck matrix update --packages …`` has recorded them), or install with ``--no-deps``.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional

from envcheck.errors import IndexDataMissing
from envcheck.matrix import Matrix
from envcheck.matrix.model import Build
from envcheck.matrix.index.data import IndexData, IndexFile, file_name

__all__ = ["wheel_hashes", "file_versions"]


def _build(matrix: Matrix, torch: str, variant: str, platform: str, channel: Optional[str]) -> Build:
    rows = [b for b in matrix.builds_for(torch)
            if b.variant == variant and platform in b.platforms and (channel is None or b.channel == channel)]
    if not rows:
        on = f" on channel {channel}" if channel else ""
        raise IndexDataMissing(f"no [[build]] row for torch {torch} {variant} on {platform}{on}; "
                               "cannot tell which wheel files to pin")
    return rows[0]


def file_versions(build: Build, torch: str, companions: Mapping[str, str]) -> Dict[str, str]:
    """The exact version each file carries: ``{"torch": "2.7.1+cu128", "torchvision": "0.22.1+cu128"}``.

    A companion version that already has a local label is kept; a build with ``pins`` uses them;
    PyPI and unlabelled builds use bare versions; otherwise the build's variant is appended.
    """
    def exact(pkg: str, version: str) -> str:
        if "+" in version:
            return version
        if build.pins.get(pkg):
            return build.pins[pkg]
        return build.version_of(version)

    out = {"torch": exact("torch", torch)}
    for pkg, v in companions.items():
        out[pkg] = exact(pkg, v)
    return out


def _subindex(matrix: Matrix, channel: str, variant: str) -> Optional[str]:
    """The sub-index that the channel's ``index_url`` points pip at for ``variant``: ``cu128`` for
    ``https://download.pytorch.org/whl/{variant}``; ``None`` when the URL has no ``{variant}``."""
    ch = matrix.channels.get(channel)
    if ch is None or "{variant}" not in ch.index_url:
        return None
    base = ch.index_url.split("{variant}", 1)[0]
    return ch.url_for(variant)[len(base):].strip("/") or None


def _missing(data: IndexData, channel: str, package: str, version: str, platform: str, python: str) -> str:
    fname = file_name(channel, package)
    up = data.updates.get((channel, package))
    if up is None:
        return (f"no index data for {package} on channel {channel} ({fname} is absent): run "
                f"`envcheck matrix update --packages {package}` against that channel's index")
    have = sorted({f"{f.info.version}" for f in data.files(channel, package)
                   if f.info.release == version.split("+")[0]})
    also = f"; that release has: {', '.join(have)}" if have else f"; newest on record: {data.newest(channel, package)}"
    return (f"no {package} {version} wheel for {platform} / Python {python} in {fname} "
            f"(last updated {up.checked}){also}. If the index has it now, run `envcheck matrix update "
            f"--index {up.index_url} --packages {package}`")


def wheel_hashes(
    matrix: Matrix,
    torch: str,
    variant: str,
    companions: Mapping[str, str],
    platform: str,
    python: str,
    channel: Optional[str] = None,
) -> Dict[str, List[str]]:
    """sha256 of every wheel file of the given exact versions for ``platform`` + ``python``.

    Args:
        torch: the torch release (``"2.7.1"``); ``variant`` its variant (``"cu128"``).
        companions: ``{"torchvision": "0.22.1", "torchaudio": "2.7.1"}`` (bare or with label).
        platform: envcheck platform name (``"linux-x86_64"``); ``python``: ``"3.12"`` / ``"3.13t"``.
        channel: the build's channel (default: the first ``[[build]]`` row's for this variant).

    Returns:
        ``{package: [sha256 hex, …]}``, torch first, each list sorted (several files may fit, e.g. a
        wheel and its build-number re-upload; pip accepts any listed hash).

    Raises:
        IndexDataMissing: no build row, no index data for a package, no file of that exact version
            for the platform/Python, or a file without a sha256 in the index.
    """
    b = _build(matrix, torch, variant, platform, channel)
    data = matrix.index_data()
    out: Dict[str, List[str]] = {}
    for pkg, version in file_versions(b, torch, companions).items():
        files: List[IndexFile] = data.select(b.channel, pkg, version, platform, python)
        sub = _subindex(matrix, b.channel, b.variant)
        if sub is not None and any(f.subindex == sub for f in files):
            files = [f for f in files if f.subindex == sub]
        if not files:
            raise IndexDataMissing(_missing(data, b.channel, pkg, version, platform, python))
        bare = [f.info.filename for f in files if not f.sha256]
        if bare:
            raise IndexDataMissing(f"the index listed {bare[0]} without a sha256; it cannot be hash-pinned")
        out[pkg] = sorted({f.sha256 for f in files})
    return out
