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
from pathlib import Path

#: environment variable naming the folder (overrides the platform default)
DATA_DIR_ENV = "ENVCHECK_DATA_DIR"


def user_data_dir() -> Path:
    """envcheck's per-user data folder (see the module docstring); it may not exist yet."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    home = Path(os.path.expanduser("~"))
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base) / "envcheck" if base else home / "AppData" / "Local" / "envcheck"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "envcheck"
    base = os.environ.get("XDG_DATA_HOME")
    return (Path(base) if base and os.path.isabs(base) else home / ".local" / "share") / "envcheck"


def user_index_dir(data_dir: os.PathLike[str] | str | None = None) -> Path:
    """Where ``envcheck matrix update`` writes ``generated-index-*.toml`` and ``plan`` reads them:
    ``index/`` of the data folder — ``data_dir`` (``matrix update --data-dir``) when given, else
    :func:`user_data_dir` (``$ENVCHECK_DATA_DIR``…). One rule for the flag and the variable: a
    folder named either way means the same place (breaker3 F10)."""
    return (Path(data_dir) if data_dir else user_data_dir()) / "index"
