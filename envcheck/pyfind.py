"""``--python`` takes what people type, as uv and nox do.

* a path to an interpreter (``~/venvs/train/bin/python``);
* an environment folder (a venv or conda env: ``bin/python`` or ``python.exe`` inside);
* a name on ``PATH`` (``python3``, ``python3.11``, ``pypy3``);
* a version (``3.11``, ``3.13t``): ``python3.11`` on ``PATH``, else ``uv python find 3.11`` when
  uv is installed (it knows uv-managed, pyenv and system interpreters).

Paths win over names: ``./python3`` or any text with a path separator is never looked up on PATH.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Optional

from envcheck.errors import UsageError

__all__ = ["find_python", "VERSION_RE"]

VERSION_RE = re.compile(r"(\d+)\.(\d+)(t?)")
_ENV_BINARIES = ("bin/python", "bin/python3", "python.exe", "Scripts/python.exe")
UV_FIND_TIMEOUT = 20.0


def _from_folder(text: str, p: Path) -> str:
    for rel in _ENV_BINARIES:
        if (p / rel).exists():
            return str((p / rel).absolute())
    broken = [rel for rel in _ENV_BINARIES if (p / rel).is_symlink()]
    if broken:
        raise UsageError(f"--python {text}: {broken[0]} is a broken link (to {os.readlink(str(p / broken[0]))}); "
                         "the interpreter this environment was made from is gone — recreate the environment")
    raise UsageError(f"--python {text}: a folder without bin/python (or python.exe) in it; give the "
                     "interpreter itself or a venv/conda environment folder")


def _uv_find(version: str) -> Optional[str]:
    from envcheck.render.pylock import find_uv
    from envcheck.runner import run

    uv = find_uv()
    if not uv:
        return None
    env = dict(os.environ, UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
    r = run([uv, "python", "find", version], timeout=UV_FIND_TIMEOUT, env=env)
    found = r.stdout.strip().splitlines()[-1:] if r.ok else []
    return found[0] if found and os.path.exists(found[0]) else None


def find_python(text: Optional[str], flag: str = "--python") -> str:
    """The interpreter ``text`` names (see the module doc); ``sys.executable`` for ``None``.

    Raises:
        UsageError: empty, a path that does not exist / is a broken link / is not executable, a
            folder with no interpreter, a name not on PATH, a version neither PATH nor uv has.
    """
    from envcheck.runner import which

    if text is None:
        return sys.executable
    if not text.strip():
        raise UsageError(f"{flag} '': give an interpreter (a venv's bin/python), an environment folder, "
                         "a name on PATH (python3.11) or a version (3.11)")
    p = Path(text).expanduser()
    looks_like_path = os.sep in text or (os.altsep and os.altsep in text) or text.startswith(("~", "."))
    if p.is_dir():
        return _from_folder(text, p)
    if p.is_symlink() and not p.exists():
        raise UsageError(f"{flag} {text}: a broken link (to {os.readlink(str(p))})")
    if p.exists():
        if not os.access(str(p), os.X_OK):
            raise UsageError(f"{flag} {text}: not executable")
        return str(p.absolute())
    if looks_like_path:
        raise UsageError(f"{flag} {text}: no such interpreter")
    version = VERSION_RE.fullmatch(text.strip())
    if version:
        major, minor, ft = version.groups()
        on_path = which(f"python{major}.{minor}{ft}")
        if on_path:
            return on_path
        found = _uv_find(text.strip())
        if found:
            return found
        raise UsageError(f"{flag} {text}: no python{major}.{minor}{ft} on PATH"
                         + (" and `uv python find` has none" if _has_uv() else " (install uv to find more: "
                            "it also knows pyenv and uv-managed interpreters)"))
    on_path = which(text)
    if on_path:
        return on_path
    raise UsageError(f"{flag} {text}: not a file, an environment folder, a name on PATH or a version (3.11)")


def _has_uv() -> bool:
    from envcheck.render.pylock import find_uv

    return find_uv() is not None
