"""Replay recorded machines: a fixture tree (``root/``) plus the commands it answers (``commands.toml``).

Each folder under tests/fixtures/probe/machines/ holds one machine; its SOURCES.md says where every
recorded file comes from. ``commands.toml`` rows: ``argv`` (a leading ``/`` means a path inside the
tree), ``stdout`` (a file in the folder), optional ``stderr`` (text), ``returncode`` (default 0).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple, Union

from envcheck.runner import Replay, Result

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "probe"
MACHINES = FIXTURES / "machines"

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def recorded(argv, stdout: str = "", returncode: int = 0, stderr: str = "", error: Optional[str] = None) -> Result:
    """A Result as :func:`envcheck.runner.run` builds it: a finished command, or (``error``) one that did not finish."""
    if error is not None:
        return Result(tuple(argv), None, stdout, stderr, 0.0, error)
    name = os.path.basename(str(argv[0]))
    return Result(tuple(argv), returncode, stdout, stderr, 0.0,
                  None if returncode == 0 else f"{name} exited with status {returncode}")


def machine_replay(name: str, overrides: Optional[Dict[Tuple[str, ...], Union[str, Result]]] = None) -> Tuple[Path, Replay]:
    """``(root, replay)`` for the fixture machine ``name``; ``overrides`` add or replace answers."""
    folder = MACHINES / name
    root = folder / "root"
    outputs: Dict[Union[str, Tuple[str, ...]], Union[str, Result]] = {}
    spec = tomllib.loads((folder / "commands.toml").read_text())
    for row in spec.get("command", []):
        argv = tuple(str(root / a.lstrip("/")) if i == 0 and a.startswith("/") else a
                     for i, a in enumerate(row["argv"]))
        stdout = (folder / row["stdout"]).read_text() if row.get("stdout") else ""
        outputs[argv] = recorded(argv, stdout, row.get("returncode", 0), row.get("stderr", ""))
    for argv, answer in (overrides or {}).items():
        argv = tuple(str(root / a.lstrip("/")) if i == 0 and a.startswith("/") else a for i, a in enumerate(argv))
        outputs[argv] = answer if isinstance(answer, Result) else recorded(argv, answer)
    return root, Replay(outputs)
