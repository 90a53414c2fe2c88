"""``envcheck matrix update``: read a wheel index, rewrite the generated index files.

Which pages are read, and why: by default one page per package, the combined
``<index>/<package>/`` (``https://download.pytorch.org/whl/torch/``, ``https://pypi.org/simple/torch/``).
On download.pytorch.org every link on that page points into the sub-index that serves the file
(``/whl/cu128/torch-2.7.1+cu128-….whl``), so the sub-index of each file is known from one request
instead of one per variant (50+ for torch). ``variants=[…]`` reads ``<index>/<variant>/<package>/``
instead — for indexes or mirrors that have no combined page — and then replaces only the rows of
those sub-indexes, keeping the others as they were.

Order of work: fetch and parse every page → build the new files → check each against the matrix
schema (and that it reads back to the same rows) → only then replace the files, all or nothing
(:func:`envcheck.update.store.replace_all`). Hand-sourced files are never opened for writing.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Protocol, Sequence, Tuple
from urllib.parse import urlsplit

from packaging.utils import canonicalize_name

from envcheck import fsutil
from envcheck.errors import DataFileError, UsageError
from envcheck.matrix import Matrix, load_matrix
from envcheck.matrix.index.data import file_name
from envcheck.matrix.load import load_file, load_text, rows_of
from envcheck.matrix.model import IndexUpdate, IndexWheels, vkey
from envcheck.matrix.userdata import DATA_DIR_ENV, user_index_dir
from envcheck.update.client import IndexClient, Page, page_urls
from envcheck.update.store import Changes, build_rows, diff, render, replace_all, sort_rows

__all__ = ["DEFAULT_INDEX", "DEFAULT_PACKAGES", "PackageResult", "UpdateResult", "run_update", "normalize_index"]

DEFAULT_INDEX = "https://download.pytorch.org/whl/"
DEFAULT_PACKAGES = ("torch", "torchvision", "torchaudio")
_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")  # PEP 508 project names


class Progress(Protocol):
    """What :func:`run_update` reports while fetching (the CLI draws a rich progress bar)."""

    def start(self, total: int) -> None: ...
    def advance(self, url: str, nbytes: int) -> None: ...


@dataclass
class PackageResult:
    """The outcome for one package: its file, what the index lists, what changed."""

    package: str
    file: Path
    pages: List[str]
    files: int
    releases: List[str]
    changes: Changes
    written: bool = False


@dataclass
class UpdateResult:
    index: str
    channel: str
    matrices: Path
    dry_run: bool
    checked: str
    packages: List[PackageResult] = field(default_factory=list)

    def to_json(self) -> Dict[str, object]:
        return {
            "index": self.index, "channel": self.channel, "matrices": str(self.matrices),
            "dry_run": self.dry_run, "checked": self.checked,
            "packages": [{
                "package": p.package, "file": str(p.file), "pages": p.pages, "files": p.files,
                "releases": len(p.releases), "newest": p.releases[0] if p.releases else None,
                "written": p.written, **p.changes.to_json(),
            } for p in self.packages],
        }


def normalize_index(url: str) -> str:
    """``https://download.pytorch.org/whl`` → ``https://download.pytorch.org/whl/``.

    Raises:
        UsageError: not an http(s) URL with a host.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        from envcheck.edge import redact

        raise UsageError(
            f"--index {redact(url)!r} is not an index URL; give the base of a simple index, e.g. "
            f"{DEFAULT_INDEX} or https://pypi.org/simple/"
        )
    return url.strip().rstrip("/") + "/"


def _without_credentials(index: str) -> Tuple[str, Optional[Tuple[str, str]]]:
    """The index URL without its user-info (``https://host/whl/``), and the user name and password it
    held (for the fetch only: breaker5 F1). The URL is what is recorded — in the files, their names,
    the channel, the output and every error — so a password is never written nor printed."""
    from urllib.parse import unquote

    from envcheck.edge import split_credentials

    public, had = split_credentials(index)
    if not had:
        return index, None
    parts = urlsplit(index)
    return public, (unquote(parts.username or ""), unquote(parts.password or ""))


def _channel_base(index_url: str) -> str:
    return index_url.replace("{variant}", "").rstrip("/") + "/"


def resolve_channel(matrix: Matrix, index: str, name: Optional[str]) -> Tuple[str, str]:
    """The channel name the files are recorded under, and the confidence to give them.

    ``name`` wins; otherwise the ``[[channel]]`` whose ``index_url`` (without ``{variant}``) is
    ``index``; otherwise the index's host name (confidence ``community``).
    """
    if name:
        ch = matrix.channels.get(name)
        return name, ch.confidence if ch else "community"
    for ch in matrix.channels.values():
        if ch.kind == "simple" and _channel_base(ch.index_url) == index:
            return ch.name, ch.confidence
    return urlsplit(index).netloc, "community"


def floors(matrix: Matrix) -> Dict[str, str]:
    """The oldest release kept per package: the oldest torch release in torch-releases.toml and
    the torchvision/torchaudio paired with it (older files are not recorded)."""
    if not matrix.releases:
        return {}
    oldest = matrix.releases[-1]
    return {"torch": oldest.version, "torchvision": oldest.torchvision, "torchaudio": oldest.torchaudio}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _source_for(page_url: str) -> str:
    # matrices/README.md allows https:// URLs as sources; a plain-http index (a local mirror, the
    # tests' server) is recorded through the free-form derived: form.
    return page_url if page_url.startswith("https://") else f"derived:read by envcheck matrix update from {page_url}"


def _old(path: Path) -> Tuple[Optional[List[IndexWheels]], Optional[IndexUpdate]]:
    if not path.exists():
        return None, None
    tables = load_file(path, strict=True)
    ups = rows_of(tables, "update", IndexUpdate)
    return rows_of(tables, "wheels", IndexWheels), (ups[0] if ups else None)


def _check(path: Path, text: str, rows: Sequence[IndexWheels]) -> None:
    """Read the rendered text back through the matrix loader; it must give the same rows."""
    back = load_text(path, text, strict=True)
    if list(back.get("wheels", [])) != list(rows):
        raise DataFileError(path, "wheels", "the rendered file does not read back to the rows built (a bug)")


def run_update(
    *,
    index: str = DEFAULT_INDEX,
    packages: Sequence[str] = DEFAULT_PACKAGES,
    matrices: Optional[Path] = None,
    channel: Optional[str] = None,
    variants: Optional[Sequence[str]] = None,
    dry_run: bool = False,
    client: Optional[IndexClient] = None,
    progress: Optional[Progress] = None,
    data_dir: Optional[Path] = None,
) -> UpdateResult:
    """Read ``packages`` from ``index`` and rewrite ``generated-index-<channel>-<package>.toml`` in
    ``data_dir``'s ``index/`` (the same place ``ENVCHECK_DATA_DIR=data_dir`` makes ``plan`` read) —
    by default the ``matrices`` folder when one is given, else the per-user data folder's
    (:func:`envcheck.matrix.userdata.user_index_dir`); never the installed package. The
    hand-sourced facts are read from ``matrices`` (default: the shipped ones plus the user's data).

    Returns:
        What was read and what changed, per package (``written`` false with ``dry_run``).

    Raises:
        UsageError: a bad ``index`` URL, package name or ``matrices`` folder (exit 2).
        IndexFetchError: a page could not be fetched or parsed (exit 3). Nothing is written then.
    """
    index, auth = _without_credentials(normalize_index(index))
    bad = [p for p in packages if p.strip() and not _NAME.fullmatch(p.strip())]
    if bad:
        raise UsageError(f"--packages: {bad[0]!r} is not a package name (letters, digits, '.', '_', '-')")
    names = [str(canonicalize_name(p.strip())) for p in packages if p.strip()]
    if not names:
        raise UsageError("--packages is empty; e.g. --packages torch,torchvision,torchaudio")
    directory = user_index_dir(data_dir) if data_dir else Path(matrices) if matrices else user_index_dir()
    fsutil.recover(directory)  # a run killed mid-commit left its journal: roll that set back first
    matrix = load_matrix(Path(matrices) if matrices else None)
    made_here = not data_dir and not matrices and not dry_run
    # a failed update leaves no folder it created (breaker4 F7): what the user had stays
    with fsutil.undo_on_failure(directory) if made_here else contextlib.nullcontext():
        if made_here:
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UsageError(f"cannot create the data folder {fsutil.shown(directory)}: {exc.strerror or exc} "
                                 f"(set {DATA_DIR_ENV} or --data-dir)") from None
        chan, confidence = resolve_channel(matrix, index, channel)
        since = floors(matrix)
        subs = [v.strip().strip("/") for v in variants or [] if v.strip()]
        own = client or IndexClient()
        if auth is not None:  # sent to the index's host only (requests drops it on a redirect elsewhere)
            own.session.auth = auth
        try:
            pages = _fetch_all(own, index, names, subs, progress)
        finally:
            if client is None:
                own.close()
        result = UpdateResult(index, chan, directory, dry_run, _now())
        texts: Dict[str, str] = {}
        for pkg in names:
            res, text = _one_package(pkg, pages[pkg], subs, index, chan, confidence, since.get(pkg, ""),
                                     directory, result.checked)
            result.packages.append(res)
            texts[res.file.name] = text
        if not dry_run:
            replace_all(directory, texts)
            for p in result.packages:
                p.written = True
        return result


def _or_none(subs: Sequence[str]) -> List[Optional[str]]:
    """The sub-directories, or one ``None`` (the index root) when there are none."""
    return [*subs] if subs else [None]


def _fetch_all(client: IndexClient, index: str, names: Sequence[str], subs: Sequence[str],
               progress: Optional[Progress]) -> Dict[str, List[Tuple[Page, Optional[str]]]]:
    plan = [(pkg, url, sub) for pkg in names
            for url, sub in zip(page_urls(index, pkg, list(subs)), _or_none(subs))]
    if progress:
        progress.start(len(plan))
    out: Dict[str, List[Tuple[Page, Optional[str]]]] = {p: [] for p in names}
    for pkg, url, sub in plan:
        page = client.get_page(url)
        out[pkg].append((page, sub))
        if progress:
            progress.advance(url, page.nbytes)
    return out


def _one_package(pkg: str, pages: List[Tuple[Page, Optional[str]]], subs: Sequence[str], index: str,
                 chan: str, confidence: str, since: str, directory: Path, checked: str) -> Tuple[PackageResult, str]:
    rows: List[IndexWheels] = []
    for page, sub in pages:
        rows += build_rows(((link, sub) for link in page.links), package=pkg, channel=chan, index_url=index,
                           page_url=page.url, since=since, source=_source_for(page.url), confidence=confidence)
    path = directory / file_name(chan, pkg)
    old_rows, old_update = _old(path)
    if subs and old_rows:  # per-variant pages replace only their own sub-indexes
        rows += [r for r in old_rows if r.subindex not in subs]
    rows = sort_rows(rows)
    changes = diff(old_rows, rows)
    nfiles = sum(len(r.files) for r in rows)
    update = IndexUpdate(
        channel=chan, package=pkg, index_url=index, pages=tuple(p.url for p, _ in pages),
        checked=checked, changed=checked if changes.any or old_update is None else old_update.changed,
        since=since, files=nfiles, source=(_source_for(pages[0][0].url),), confidence=confidence,
    )
    text = render(update, rows)
    _check(path, text, rows)
    releases = sorted({r.version for r in rows}, key=vkey, reverse=True)
    return PackageResult(pkg, path, list(update.pages), nfiles, releases, changes), text
