"""Write rendered files without ever losing what the user had — through :mod:`envcheck.fsutil`,
the one atomic, no-clobber writer (kept here under the names the commands already use)."""

from __future__ import annotations


from envcheck import fsutil

TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List

    from envcheck.fsutil import PathLike


def check_output_file(path: PathLike, force: bool = False, flag: str = "-o") -> str:
    """Check, before any work is done, that ``path`` can be written by :func:`write_output_file`.

    Raises:
        UsageError: ``path`` is not a regular file (a device, a folder, a FIFO, a symbolic link),
            a parent is a file.
        OutputExistsError: it exists (a dangling link counts) and ``force`` is false.
    """
    return fsutil.check_target(path, force, flag)


def write_output_file(path: PathLike, text: str, force: bool = False, flag: str = "-o") -> str:
    """Write one user-named file atomically, creating its folder if needed.

    Raises:
        UsageError / OutputExistsError: as :func:`check_output_file`; or the write failed —
            nothing half-written is left.
    """
    return fsutil.write_file(path, text, force, flag)


def write_outputs(directory: PathLike, files: Dict[str, str], force: bool = False) -> List[str]:
    """Write ``files`` (name → text) into ``directory``, all or nothing (see :func:`fsutil.write_set`).

    Raises:
        OutputExistsError: some targets exist and ``force`` is false (nothing is written).
        UsageError: ``directory`` is a file, or cannot be created / written; a target is not a
            regular file.
    """
    return fsutil.write_set(directory, files, force, "-o")
