"""``envcheck matrix status``: how fresh the index data is, and what the sourced facts miss.

A torch release x variant x platform the index serves is *covered* when torch-builds*.toml has a
``[[build]]`` row for it (same file version, same channel — or, for files without a local label,
any channel, since PyPI and download.pytorch.org serve the same unlabelled files) that carries
what ``plan`` decides from: the kernel list (``sm``/``ptx`` for CUDA, ``gfx`` for ROCm) and, for
CUDA, the cuDNN version. Everything else is a :class:`Gap`, with a stable ``code``:

* ``release``: the release has no ``[[release]]`` row in torch-releases.toml;
* ``no-build``: no ``[[build]]`` row for this variant on this platform (files without a label are
  matched to the variant torch-releases.toml says PyPI serves there, ``[release.pypi]``);
* ``no-kernels`` / ``no-cudnn``: the row lacks its kernel list / cuDNN version;
* ``python``: the index has Pythons the row does not list (plan would refuse them);
* ``not-on-index``: the row lists a platform or Python for which the index has no file.

``plan`` marks builds with a gap "unverified" rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from envcheck.matrix import Matrix
from envcheck.matrix.model import PLATFORMS, Build, python_key, vkey
from envcheck.matrix.index.data import IndexFile, group

__all__ = ["Gap", "IndexStatus", "Status", "status", "gaps"]

TORCH = "torch"


@dataclass(frozen=True)
class Gap:
    """One release x variant x platform the hand-sourced facts do not fully cover."""

    torch: str
    variant: str
    channel: str
    platform: str
    code: str
    message: str
    pythons: Tuple[str, ...] = ()

    def to_json(self) -> Dict[str, object]:
        return {"torch": self.torch, "variant": self.variant, "channel": self.channel,
                "platform": self.platform, "code": self.code, "message": self.message,
                "pythons": list(self.pythons)}


@dataclass(frozen=True)
class IndexStatus:
    """One generated file: which index, when read, what it holds."""

    channel: str
    package: str
    index_url: str
    checked: str
    changed: str
    files: int
    releases: int
    newest: Optional[str]


@dataclass
class Status:
    """Attributes:
        newest_on_record: newest release in torch-releases.toml.
        indexes: one entry per generated file.
        unrecorded: torch releases an index serves that torch-releases.toml lacks, newest first.
        gaps: every :class:`Gap`, newest release first.
    """

    newest_on_record: Optional[str]
    indexes: List[IndexStatus] = field(default_factory=list)
    unrecorded: List[str] = field(default_factory=list)
    gaps: List[Gap] = field(default_factory=list)

    def to_json(self) -> Dict[str, object]:
        return {
            "newest_on_record": self.newest_on_record,
            "indexes": [vars(i) for i in self.indexes],
            "unrecorded": self.unrecorded,
            "uncovered": [g.to_json() for g in self.gaps],
        }


def status(matrix: Matrix) -> Status:
    """The whole report for ``matrix`` (no network: it reads the generated files only)."""
    data = matrix.index_data()
    st = Status(matrix.releases[0].version if matrix.releases else None)
    for (chan, pkg), u in sorted(data.updates.items()):
        rel = data.releases(chan, pkg)
        st.indexes.append(IndexStatus(chan, pkg, u.index_url, u.checked, u.changed, u.files, len(rel),
                                      rel[0] if rel else None))
    on_index = {v for chan in data.channels() for v in data.releases(chan, TORCH)}
    st.unrecorded = sorted((v for v in on_index if v not in matrix.release_by_version), key=vkey, reverse=True)
    for chan in data.channels():
        st.gaps += gaps(matrix, chan)
    st.gaps.sort(key=lambda g: (vkey(g.torch), g.variant, g.platform, g.code), reverse=True)
    return st


def _platforms_of(files: Sequence[IndexFile]) -> Dict[str, Set[str]]:
    """platform → Pythons the files serve there (envcheck platforms only)."""
    out: Dict[str, Set[str]] = {}
    for f in files:
        for p in f.info.platforms:
            if p in PLATFORMS:
                out.setdefault(p, set()).update(f.info.pythons)
    return out


def _file_version(b: Build, release: str) -> str:
    return b.pins.get(TORCH) or b.version_of(release)


def _rows_for(matrix: Matrix, channel: str, release: str, variant: str, platform: str) -> List[Build]:
    version = f"{release}+{variant}" if variant else release
    same = [b for b in matrix.builds_for(release)
            if platform in b.platforms and _file_version(b, release) == version]
    own = [b for b in same if b.channel == channel]
    if own or variant:
        return own
    if same:
        return same
    # an unlabelled file elsewhere (plain PyPI's linux wheel is the cu126 build, say): the variant
    # torch-releases.toml says PyPI serves on this platform, from any channel
    rel = matrix.release_by_version.get(release)
    pv = rel.pypi.get(platform) if rel else None
    return [b for b in matrix.builds_for(release) if b.variant == pv and platform in b.platforms] if pv else []


def _row_gaps(rows: Sequence[Build], pythons_listed: Sequence[str],
              on_index: Set[str]) -> List[Tuple[str, str, Tuple[str, ...]]]:
    out: List[Tuple[str, str, Tuple[str, ...]]] = []
    if any(b.cuda and not (b.sm or b.ptx) for b in rows):
        out.append(("no-kernels", "the [[build]] row has no kernel list (sm/ptx)", ()))
    if any(b.cuda and not b.cudnn for b in rows):
        out.append(("no-cudnn", "the [[build]] row has no cuDNN version", ()))
    if any(b.rocm and not b.gfx for b in rows):
        out.append(("no-kernels", "the [[build]] row has no gfx target list", ()))
    cpy = {p for p in on_index if not p.endswith("+") and p != "any"}
    extra = tuple(sorted(cpy - set(pythons_listed), key=python_key))
    if extra and not any(p == "any" or p.endswith("+") for p in on_index):
        out.append(("python", f"the index has Python {', '.join(extra)} the [[build]] row does not list", extra))
    missing = tuple(sorted(set(pythons_listed) - cpy, key=python_key))
    if missing and cpy:
        out.append(("not-on-index", f"the row lists Python {', '.join(missing)} but the index has no such file", missing))
    return out


def gaps(matrix: Matrix, channel: str) -> List[Gap]:
    """Every gap between the torch files ``channel``'s index serves and torch-builds*.toml."""
    data = matrix.index_data()
    out: List[Gap] = []
    files = [f for f in data.files(channel, TORCH) if not f.yanked]
    groups = group(files)
    for (release, variant), fs in groups.items():
        rel = matrix.release_by_version.get(release)
        label = f"{release}+{variant}" if variant else release
        for platform, pythons in sorted(_platforms_of(fs).items()):
            if rel is None:
                out.append(Gap(release, variant, channel, platform, "release",
                               f"torch {release} has no [[release]] row in torch-releases.toml"))
                continue
            rows = _rows_for(matrix, channel, release, variant, platform)
            if not rows:
                out.append(Gap(release, variant, channel, platform, "no-build",
                               f"no [[build]] row for torch {label} on {platform}"))
                continue
            listed = sorted({p for b in rows for p in (b.python or rel.python.get(platform, ()))}, key=python_key)
            where = ", ".join(f"{b.file} build[{b.index}]" for b in rows)
            same_channel = all(b.channel == channel for b in rows)
            for code, msg, pys in _row_gaps(rows, listed, pythons):
                if code in ("python", "not-on-index") and not same_channel:
                    continue  # a row of another channel lists that channel's Pythons
                out.append(Gap(release, variant, channel, platform, code, f"{where}: {msg}", pys))
    out += _rows_not_on_index(matrix, channel, groups)
    return out


def _rows_not_on_index(matrix: Matrix, channel: str, groups: Dict[Tuple[str, str], List[IndexFile]]) -> List[Gap]:
    """Rows of ``channel`` whose release the index has, but not on the row's platform."""
    out = []
    releases = {r for r, _ in groups}
    for b in matrix.builds:
        if b.channel != channel:
            continue
        for release in b.torch:
            if release not in releases:
                continue
            version = _file_version(b, release)
            base, _, label = version.partition("+")
            fs = groups.get((base, label), [])
            have = _platforms_of(fs)
            for platform in b.platforms:
                if platform not in have:
                    out.append(Gap(release, label, channel, platform, "not-on-index",
                                   f"{b.file} build[{b.index}] lists torch {version} on {platform}, "
                                   "but the index serves no such file"))
    return out
