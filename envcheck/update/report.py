"""Text output of ``envcheck matrix update`` / ``status``, and the progress bar on stderr."""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, TextIO, Tuple

from envcheck.matrix.model import vkey
from envcheck.matrix.index.status import Gap, Status
from envcheck.update.update import UpdateResult
from envcheck.fsutil import shown

__all__ = ["RichProgress", "print_update", "print_status"]

SHOW = 8  # names listed before "(N more)"


class RichProgress:
    """A rich progress bar on stderr for page fetches (hidden when stderr is not a terminal)."""

    def __init__(self) -> None:
        self._progress: Optional[Any] = None
        self._task: Optional[Any] = None

    def __enter__(self) -> RichProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def start(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from envcheck.ci import progress_allowed

        console = Console(stderr=True)
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("pages"), TimeElapsedColumn(), console=console, transient=True,
                                  disable=not progress_allowed(sys.stderr))
        self._progress.start()
        self._task = self._progress.add_task("index pages", total=total)

    def advance(self, url: str, nbytes: int) -> None:
        if self._progress is not None:
            name = url.rstrip("/").rsplit("/", 1)[-1]
            self._progress.update(self._task, advance=1, description=f"{name} ({nbytes / 1024:,.0f} KiB)")


def _names(items: List[str]) -> str:
    head = ", ".join(items[:SHOW])
    return head + (f" ({len(items) - SHOW} more)" if len(items) > SHOW else "")


def print_update(result: UpdateResult, out: TextIO) -> None:
    """Per package: what the index lists and what changed; then what was written."""
    verb = "would write" if result.dry_run else "wrote"
    out.write(f"{result.index} (channel {result.channel}), checked {result.checked}\n")
    for p in result.packages:
        ch = p.changes
        newest = p.releases[0] if p.releases else "none"
        out.write(f"{p.package}: {p.files} files, {len(p.releases)} releases, newest {newest}\n")
        if ch.first:
            out.write(f"  first record of {p.package} from this index\n")
        for v, variants in sorted(ch.new_releases.items(), key=lambda kv: vkey(kv[0]), reverse=True):
            if not ch.first:
                out.write(f"  new release {v}: {', '.join(x or '(no label)' for x in variants)}\n")
        if ch.new_variants:
            out.write(f"  new variants: {_names(ch.new_variants)}\n")
        if ch.added and not ch.first:
            out.write(f"  files added: {len(ch.added)}\n")
        if ch.gone:
            out.write(f"  files gone: {_names(ch.gone)}\n")
        if ch.rehashed:
            out.write(f"  WARNING sha256 changed for the same file name: {_names(ch.rehashed)}\n")
        if not ch.any:
            out.write("  no change\n")
        out.write(f"  {verb} {shown(p.file)}\n")


def _compact(gaps: List[Gap]) -> List[Tuple[str, str, str, List[str]]]:
    """Group gaps that differ only by release: (variant, platform, message without the release, releases)."""
    groups: Dict[Tuple[str, str, str, str], List[str]] = {}
    for g in gaps:
        msg = g.message.replace(f"torch {g.torch}+{g.variant}", f"torch {{release}}+{g.variant}").replace(
            f"torch {g.torch} ", "torch {release} ")
        groups.setdefault((g.channel, g.variant, g.platform, msg), []).append(g.torch)
    out = []
    for (chan, variant, platform, msg), rels in groups.items():
        rels = sorted(set(rels), key=vkey, reverse=True)
        out.append((f"{variant or '(no label)'} on {platform} [{chan}]", msg, rels[0], rels))
    out.sort(key=lambda t: (vkey(t[2]), t[0]), reverse=True)
    return [(a, b, c, d) for a, b, c, d in out]


def print_status(st: Status, out: TextIO) -> None:
    if not st.indexes:
        out.write("no generated index data yet: run `envcheck matrix update` (see --help)\n")
        return
    out.write(f"newest torch release on record (torch-releases.toml): {st.newest_on_record or 'none'}\n")
    for i in st.indexes:
        out.write(f"{i.package} [{i.channel}] {i.index_url}: newest {i.newest or 'none'}, {i.releases} releases, "
                  f"{i.files} files; last update {i.checked} (last change {i.changed})\n")
    if st.unrecorded:
        out.write(f"releases the index serves that torch-releases.toml lacks: {', '.join(st.unrecorded)}\n")
    if not st.gaps:
        out.write("every release x variant x platform the index serves is covered by torch-builds*.toml\n")
        return
    out.write(f"not covered by torch-builds*.toml ({len(st.gaps)}; plan marks these unverified):\n")
    for what, msg, _newest, rels in _compact(st.gaps):
        shown = ", ".join(rels[:6]) + (f" … {rels[-1]} ({len(rels)} releases)" if len(rels) > 6 else "")
        out.write(f"  {what}: {shown}: {msg.replace('{release}', '*')}\n")

