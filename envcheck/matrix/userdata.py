"""Where envcheck keeps what ``envcheck matrix update`` fetched: a per-user data folder, never the
installed package.

``$ENVCHECK_DATA_DIR`` if set; else the platform's place for a user's application data —
``$XDG_DATA_HOME/envcheck`` (default ``~/.local/share/envcheck``) on Linux and other Unixes,
``~/Library/Application Support/envcheck`` on macOS, ``%LOCALAPPDATA%\\envcheck`` on Windows (the
folders platformdirs' ``user_data_dir`` names; computed here so that ``plan`` needs no extra
package). ``plan`` reads the shipped matrices plus the ``generated-index-*.toml`` files here.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # pathlib is imported only when a Path is asked for (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

#: environment variable naming the folder (overrides the platform default)
DATA_DIR_ENV = "ENVCHECK_DATA_DIR"


def user_data_path() -> str:
    """envcheck's per-user data folder (see the module docstring), as a string; it may not exist yet."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return env
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return os.path.join(base, "envcheck") if base else os.path.join(home, "AppData", "Local", "envcheck")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", "envcheck")
    base = os.environ.get("XDG_DATA_HOME")
    return os.path.join(base if base and os.path.isabs(base) else os.path.join(home, ".local", "share"), "envcheck")


def user_data_dir() -> Path:
    """:func:`user_data_path` as a :class:`pathlib.Path`."""
    from pathlib import Path

    return Path(user_data_path())


def user_index_path(data_dir: os.PathLike[str] | str | None = None) -> str:
    """Where ``envcheck matrix update`` writes ``generated-index-*.toml`` and ``plan`` reads them:
    ``index/`` of the data folder — ``data_dir`` (``matrix update --data-dir``) when given, else
    :func:`user_data_path` (``$ENVCHECK_DATA_DIR``…). One rule for the flag and the variable: a
    folder named either way means the same place (breaker3 F10)."""
    return os.path.join(os.fspath(data_dir) if data_dir else user_data_path(), "index")


def user_index_dir(data_dir: os.PathLike[str] | str | None = None) -> Path:
    """:func:`user_index_path` as a :class:`pathlib.Path`."""
    from pathlib import Path

    return Path(user_index_path(data_dir))
