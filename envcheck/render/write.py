"""Write rendered files without ever losing what the user had.

All-or-nothing: every target is checked before anything is written; each file is written to a
temporary file in the same folder and moved into place with :func:`os.replace` (atomic on POSIX
and Windows), so a crash leaves either the old file or the new one, never half of either.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Dict, List

from envcheck.errors import OutputExistsError, UsageError


def write_temp_beside(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends, flushed to disk) to a new temporary file in
    ``path``'s folder, with ``path``'s permissions (0644 for a new file); the caller moves it into
    place with :func:`os.replace`. The temporary file is removed if writing fails."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, (path.stat().st_mode & 0o7777) if path.exists() else 0o644)
    except BaseException:
        _unlink(tmp)
        raise
    return Path(tmp)


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (UTF-8, ``\\n`` line ends)."""
    tmp = write_temp_beside(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(p: os.PathLike[str] | str) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass


def not_regular(paths: List[Path]) -> None:
    """Refuse targets that exist and are not regular files (a device such as /dev/null, a folder,
    a FIFO) — even with ``--force``, which only lets a *file* be replaced.

    Raises:
        UsageError: listing them.
    """
    odd = [str(t) for t in paths if t.exists() and not t.is_file()]
    if odd:
        raise UsageError("refusing to replace something that is not a regular file (even with --force):\n"
                         + "\n".join(f"  {p}" for p in odd))


def check_output_file(path: Path, force: bool = False, flag: str = "-o") -> Path:
    """Check, before any work is done, that ``path`` can be written by :func:`write_output_file`.

    Raises:
        UsageError: ``path`` is not a regular file (a device, a folder), a parent is a file.
        OutputExistsError: it exists and ``force`` is false.
    """
    path = Path(path)
    if str(path) in ("", ".") or path.name in ("", ".", ".."):
        raise UsageError(f"{flag} {path}: give a file name")
    not_regular([path])
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{flag} {path}: {parent} is not a directory")
            break
    if path.exists() and not force:
        raise OutputExistsError([str(path)])
    return path


def write_output_file(path: Path, text: str, force: bool = False, flag: str = "-o") -> Path:
    """Write one user-named file atomically, creating its folder if needed (checked first with
    :func:`check_output_file`).

    Raises:
        UsageError / OutputExistsError: as :func:`check_output_file`; or the folder cannot be
            created or written (disk full, permission denied) — nothing half-written is left.
    """
    path = check_output_file(path, force, flag)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None
    return path


def write_outputs(directory: Path, files: Dict[str, str], force: bool = False) -> List[Path]:
    """Write ``files`` (name → text) into ``directory``, creating it if needed.

    Raises:
        OutputExistsError: some targets exist and ``force`` is false (nothing is written).
        UsageError: ``directory`` is a file, or cannot be created / written; a target is not a
            regular file.
    """
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise UsageError(f"-o {d}: exists and is not a directory")
    targets = [d / name for name in files]
    not_regular(targets)
    if not force:
        existing = [str(t) for t in targets if t.exists()]
        if existing:
            raise OutputExistsError(existing)
    try:
        d.mkdir(parents=True, exist_ok=True)
        for t in targets:
            write_atomic(t, files[t.name])
    except OSError as exc:
        raise UsageError(f"-o {d}: cannot write: {exc.strerror or exc}") from None
    return targets
