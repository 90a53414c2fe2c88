"""Query what the wheel indexes served at the last update (``matrices/generated-index-*.toml``).

:class:`IndexData` is built by :meth:`envcheck.matrix.Matrix.index_data`; file names are parsed
lazily (only for the channel/package asked about), so loading the matrix stays cheap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Tuple

from envcheck.matrix.model import IndexUpdate, IndexWheels, vkey
from envcheck.matrix.index.wheels import WheelInfo, parse_wheel, supports_python

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.matrix import Matrix

__all__ = ["IndexFile", "IndexData", "split_ref", "file_name"]


def file_name(channel: str, package: str) -> str:
    """``generated-index-pytorch-torch.toml``; characters outside ``[a-z0-9._-]`` become ``-``."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", f"{channel}-{package}".lower()).strip("-")
    return f"generated-index-{slug}.toml"


def split_ref(ref: str) -> Tuple[str, str]:
    """``"name.whl#sha256=hex"`` → ``("name.whl", "hex")``; no fragment → ``(name, "")``."""
    name, _, frag = ref.partition("#")
    return name, frag[len("sha256="):] if frag.startswith("sha256=") else ""


@dataclass(frozen=True)
class IndexFile:
    """One wheel file an index serves.

    Attributes:
        info: the parsed file name (release, variant, Pythons, platforms).
        sha256: hex digest, ``""`` when the index gave none.
        channel: the matrix channel the file was read for (``pytorch``, ``pypi``).
        subindex: the folder under the index serving it (``cu128``) or ``""``.
        yanked: PEP 592.
        glibc: glibc floor of a Linux file (``"2.28"``), ``None`` when the tag states none.
        macos: macOS floor of a macOS file (``"11.0"``).
    """

    info: WheelInfo
    sha256: str
    channel: str
    subindex: str
    yanked: bool
    glibc: Optional[str]
    macos: Optional[str]


class IndexData:
    """The generated index rows of a :class:`~envcheck.matrix.Matrix`, indexed for lookups."""

    def __init__(self, matrix: Matrix):
        self.matrix = matrix
        self.updates: Dict[Tuple[str, str], IndexUpdate] = {
            (u.channel, u.package): u for u in matrix.index_updates
        }
        self._rows: Dict[Tuple[str, str], List[IndexWheels]] = {}
        for r in matrix.index_wheels:
            self._rows.setdefault((r.channel, r.package), []).append(r)
        self._files: Dict[Tuple[str, str], List[IndexFile]] = {}

    def __bool__(self) -> bool:
        return bool(self.updates)

    def channels(self) -> List[str]:
        return sorted({c for c, _ in self.updates})

    def packages(self, channel: str) -> List[str]:
        return sorted(p for c, p in self.updates if c == channel)

    def rows(self, channel: str, package: str) -> List[IndexWheels]:
        return self._rows.get((channel, package), [])

    def files(self, channel: str, package: str) -> List[IndexFile]:
        """Every file of ``package`` on ``channel``, parsed (cached)."""
        key = (channel, package)
        if key not in self._files:
            out: List[IndexFile] = []
            for r in self.rows(channel, package):
                yanked = set(r.yanked)
                for ref in r.files:
                    name, sha = split_ref(ref)
                    info = parse_wheel(name)
                    tag = info.platform_tag
                    glibc = self.matrix.glibc_floor(tag) if "linux" in tag else None
                    macos = self.matrix.macos_floor(tag.split(".")[0]) if tag.startswith("macosx") else None
                    out.append(IndexFile(info, sha, channel, r.subindex, name in yanked, glibc, macos))
            self._files[key] = out
        return self._files[key]

    def releases(self, channel: str, package: str) -> List[str]:
        """Release versions (``"2.7.1"``) on record for ``package``, newest first."""
        return sorted({r.version for r in self.rows(channel, package)}, key=vkey, reverse=True)

    def newest(self, channel: str, package: str) -> Optional[str]:
        rel = self.releases(channel, package)
        return rel[0] if rel else None

    def select(
        self,
        channel: str,
        package: str,
        version: str,
        platform: Optional[str] = None,
        python: Optional[str] = None,
        subindex: Optional[str] = None,
    ) -> List[IndexFile]:
        """Files of exactly ``version`` (``"2.7.1+cu128"`` or bare ``"2.7.1"``), optionally only
        those for ``platform`` and ``python`` and served by ``subindex``. Yanked files are left out."""
        return [
            f for f in self.files(channel, package)
            if f.info.version == version and not f.yanked
            and (platform is None or f.info.on_platform(platform))
            and (python is None or supports_python(f.info, python))
            and (subindex is None or f.subindex == subindex)
        ]


def group(files: Iterable[IndexFile]) -> Dict[Tuple[str, str], List[IndexFile]]:
    """Files by (release, variant)."""
    out: Dict[Tuple[str, str], List[IndexFile]] = {}
    for f in files:
        out.setdefault((f.info.release, f.info.variant), []).append(f)
    return out
