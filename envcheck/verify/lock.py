"""Read ``envcheck.lock.toml`` (written by ``envcheck plan``) for ``verify --lock``.

The file (see :func:`envcheck.render.files.lock_document`) has ``schema``, ``[build]`` (torch,
variant, index_url, python…), ``[expect]`` (what verify must find: ``torch_version``, ``variant``,
``cuda``, ``cudnn``, ``cudnn_version``, ``nccl``, ``arch_list``, ``gpu_arch``, ``driver_*``,
``torchvision``, ``torchaudio``, ``post_install``, ``python``, ``hip``, ``mps``), ``[machine]``
and ``[pip] lines``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from envcheck.errors import DataFileError
from envcheck.machine.model import Machine
from envcheck.matrix.load import read_toml

LOCK_SCHEMA = 1

#: ``[expect]`` keys and the type each must have.
EXPECT_TYPES: Dict[str, type] = {
    "torch_version": str, "variant": str, "python": str, "cuda": str, "cudnn": str,
    "cudnn_version": int, "nccl": str, "hip": str, "arch_list": list, "gpu_arch": list,
    "torchvision": str, "torchaudio": str, "post_install": list, "mps": bool,
}


@dataclass(frozen=True)
class Lock:
    """What a plan promised.

    Attributes:
        path: the file it was read from.
        torch: the release (``"2.13.0"``); ``variant``: ``cpu``, ``cu128``, ``rocm6.3``…
        expect: the ``[expect]`` table (keys of :data:`EXPECT_TYPES` and ``driver_*``).
        index_url: where the plan installs from; ``pip_lines``: the requirement lines
            (index option first, then ``torch==…`` pins).
        machine: the machine the plan was made for, when the file has one.
    """

    path: str
    torch: str
    variant: str
    expect: Dict[str, Any] = field(default_factory=dict)
    index_url: str = ""
    pip_lines: List[str] = field(default_factory=list)
    machine: Optional[Machine] = None

    @property
    def pins(self) -> List[str]:
        """``["torch==2.13.0+cpu", …]``."""
        return [ln for ln in self.pip_lines if "==" in ln and not ln.startswith("-")]

    @property
    def index_option(self) -> str:
        """``--index-url https://download.pytorch.org/whl/cpu`` (or ``--find-links …``)."""
        return next((ln for ln in self.pip_lines if ln.startswith("-")), "")


def load_lock(path: Path) -> Lock:
    """Read and check a lock file.

    Raises:
        DataFileError: unreadable, invalid TOML (also nested too deeply), or a required key missing /
            of the wrong type (the message names the file and the dotted key).
    """
    try:
        doc = read_toml(Path(path))
    except RecursionError:  # tomllib recurses per nesting level ("a = [[[[…")
        raise DataFileError(path, "", "invalid TOML: nested too deeply to read") from None
    return lock_from_dict(doc, path)


def lock_from_dict(doc: Dict[str, Any], path: object = "<lock>") -> Lock:
    """Build a :class:`Lock` from parsed TOML, checking each part.

    Raises:
        DataFileError: see :func:`load_lock`.
    """
    def fail(key: str, msg: str) -> DataFileError:
        return DataFileError(path, key, msg)

    schema = doc.get("schema")
    if schema != LOCK_SCHEMA:
        raise fail("schema", f"expected {LOCK_SCHEMA} (an envcheck.lock.toml from `envcheck plan`), got {schema!r}")
    build = _table(doc, "build", fail)
    expect = _table(doc, "expect", fail)
    for key in ("torch", "variant"):
        if not isinstance(build.get(key), str) or not build.get(key):
            raise fail(f"build.{key}", "missing (required) or not a string")
    for key in ("torch_version", "variant"):
        if key not in expect:
            raise fail(f"expect.{key}", "missing (required)")
    for key, value in expect.items():
        want = EXPECT_TYPES.get(key, str if key.startswith("driver_") else None)
        if want is None:
            continue  # newer keys from a newer envcheck: ignored, not an error
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise fail(f"expect.{key}", f"expected {want.__name__}, got {type(value).__name__} {value!r}")
        if isinstance(value, list) and not all(isinstance(x, str) for x in value):
            raise fail(f"expect.{key}", "expected a list of strings")
    pip = doc.get("pip", {})
    lines = pip.get("lines", []) if isinstance(pip, dict) else None
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        raise fail("pip.lines", "expected a list of strings")
    machine = None
    if "machine" in doc:
        from envcheck.machine.io import machine_from_dict

        machine = machine_from_dict(doc["machine"], path, "machine")
    return Lock(path=str(path), torch=build["torch"], variant=build["variant"], expect=dict(expect),
                index_url=str(build.get("index_url", "")), pip_lines=list(lines), machine=machine)


def _table(doc: Dict[str, Any], name: str, fail: Any) -> Dict[str, Any]:
    value = doc.get(name)
    if not isinstance(value, dict):
        raise fail(name, f"missing [{name}] table" if value is None else f"expected a table, got {type(value).__name__}")
    return value
