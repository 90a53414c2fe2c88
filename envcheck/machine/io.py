"""Read and write machine files (``envcheck probe -o machine.toml``, ``plan --machine FILE``).

Layout::

    schema = 1
    [machine]
    os = "linux"
    arch = "x86_64"
    glibc = "2.35"
    nvidia_driver = "570.124.06"
    [[machine.gpus]]
    vendor = "nvidia"
    name = "NVIDIA GeForce RTX 4090"
    arch = "sm_89"
    memory_mib = 24564
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

from envcheck.edge import NAME_MAX, check_name
from envcheck.errors import DataFileError, UsageError
from envcheck.jsontypes import JSON, JSONObject
from envcheck.machine.model import CPU_ARCHES, OSES, GpuDevice, Machine
from envcheck.matrix.model import VENDORS, vkey
from envcheck.matrix.patterns import GFX_RE, PY_RE, SM_RE

SCHEMA = 1

_VERSION_FIELDS = ("glibc", "macos", "nvidia_driver", "cuda_driver_max", "amd_driver", "rocm",
                   "amd_linux_driver", "jetpack")


def machine_from_dict(data: JSON, path: object = "<machine>", prefix: str = "machine") -> Machine:
    """Build a :class:`Machine` from plain data, checking every field.

    Raises:
        DataFileError: a field has the wrong type or an impossible value (names the key).
    """

    def fail(key: str, msg: str) -> DataFileError:
        return DataFileError(path, f"{prefix}.{key}" if key else prefix, msg)

    if not isinstance(data, dict):
        raise fail("", "expected a table")
    known = set(Machine.field_names())
    for k in data:
        if k not in known:
            raise fail(k, f"unknown key; known keys: {', '.join(sorted(known))}")
    kw: Dict[str, Any] = {}
    for k, v in data.items():
        if k == "gpus":
            if not isinstance(v, list):
                raise fail(k, "expected an array of tables ([[machine.gpus]])")
            kw[k] = [_gpu(g, fail, i) for i, g in enumerate(v)]
        elif k in ("how", "unknown"):
            if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
                raise fail(k, "expected a table of strings")
            for kk, vv in v.items():
                _text(kk, fail, f"{k}.<key>", 64)
                _text(str(vv), fail, f"{k}.{kk}", 1000)
            kw[k] = dict(v)
        elif k == "docker":
            if not isinstance(v, dict):
                raise fail(k, "expected a table")
            _plain(v, fail, k)
            kw[k] = dict(v)
        elif k in ("wsl", "container", "tegra"):
            if not isinstance(v, bool):
                raise fail(k, f"expected true or false, got {v!r}")
            kw[k] = v
        elif k in ("python_bits", "wsl_version"):
            if not isinstance(v, int) or isinstance(v, bool):
                raise fail(k, f"expected an integer, got {v!r}")
            kw[k] = v
        else:
            if not isinstance(v, str):
                raise fail(k, f"expected a string, got {type(v).__name__} {v!r}")
            kw[k] = _text(v, fail, k)
    m = Machine(**kw)
    if m.os not in OSES:
        raise fail("os", f"expected one of {', '.join(OSES)}, got {m.os!r}")
    if m.arch not in CPU_ARCHES:
        raise fail("arch", f"expected one of {', '.join(CPU_ARCHES)}, got {m.arch!r}")
    if m.python_bits not in (32, 64):
        raise fail("python_bits", f"expected 32 or 64, got {m.python_bits!r}")
    if m.python is not None and not PY_RE.fullmatch(m.python):
        raise fail("python", f"expected a version like '3.12' or '3.13t', got {m.python!r}")
    for k in _VERSION_FIELDS:
        val = getattr(m, k)
        if val is not None:
            try:
                vkey(val)
            except ValueError:
                raise fail(k, f"expected a version like '2.35', got {val!r}") from None
    return m


def _gpu(g: Any, fail, i: int) -> GpuDevice:
    key = f"gpus[{i}]"
    if not isinstance(g, dict):
        raise fail(key, "expected a table")
    allowed = set(GpuDevice.__dataclass_fields__)
    for k in g:
        if k not in allowed:
            raise fail(f"{key}.{k}", f"unknown key; known keys: {', '.join(sorted(allowed))}")
    for k in ("vendor", "name", "arch"):
        if not isinstance(g.get(k), str) or not g.get(k):
            raise fail(f"{key}.{k}", "missing (required string)")
    if g["vendor"] not in VENDORS:
        raise fail(f"{key}.vendor", f"expected one of {', '.join(VENDORS)}, got {g['vendor']!r}")
    if g["vendor"] == "nvidia":
        if not SM_RE.fullmatch(g["arch"]):
            raise fail(f"{key}.arch", f"expected an NVIDIA arch like 'sm_89' or 'sm_90a', got {g['arch']!r}")
        # sm_90a / sm_100f name the arch-specific targets of a 9.0 / 10.0 GPU: the GPU is sm_90 / sm_100
        g = {**g, "arch": g["arch"].rstrip("af")}
    if g["vendor"] == "amd" and (not GFX_RE.fullmatch(g["arch"]) or g["arch"].endswith("-generic")):
        raise fail(f"{key}.arch", f"expected an AMD arch like 'gfx1100' (a GPU is never a -generic target), "
                                  f"got {g['arch']!r}")
    for k in ("vendor", "name", "arch", "uuid", "how"):
        if g.get(k) is not None:
            if not isinstance(g[k], str):
                raise fail(f"{key}.{k}", f"expected a string, got {type(g[k]).__name__}")
            _text(g[k], fail, f"{key}.{k}")
    for k in ("memory_mib", "index"):
        if k in g and (not isinstance(g[k], int) or isinstance(g[k], bool)):
            raise fail(f"{key}.{k}", f"expected an integer, got {g[k]!r}")
    for k in ("integrated", "serve", "mig"):
        if k in g and not isinstance(g[k], bool):
            raise fail(f"{key}.{k}", f"expected true or false, got {g[k]!r}")
    return GpuDevice(**g)


def _text(value: str, fail, key: str, max_len: int = NAME_MAX) -> str:
    """A string field of a machine file: printable, one line, bounded (it reaches the title and
    comments of every rendered file)."""
    try:
        return check_name(value, "value", max_len)
    except UsageError as exc:
        raise fail(key, str(exc).split(": ", 1)[1]) from None


def _plain(value: Any, fail, key: str, depth: int = 0) -> None:
    """Every string inside a nested table/array is printable on one line."""
    if depth > 8:
        raise fail(key, "nested too deeply")
    if isinstance(value, dict):
        for kk, vv in value.items():
            _text(str(kk), fail, f"{key}.<key>", 64)
            _plain(vv, fail, f"{key}.{kk}", depth + 1)
    elif isinstance(value, list):
        for i, vv in enumerate(value):
            _plain(vv, fail, f"{key}[{i}]", depth + 1)
    elif isinstance(value, str):
        _text(value, fail, key, 1000)


def load_machine(path: Path) -> Machine:
    """Read a machine file.

    Raises:
        DataFileError: unreadable, not TOML, no ``[machine]`` table, or a bad field.
    """
    from envcheck.matrix.load import read_toml  # TOML parsing only when a file is read

    data = read_toml(Path(path))
    if "machine" not in data:
        raise DataFileError(path, "machine", "missing [machine] table (write one with `envcheck probe -o FILE`)")
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise DataFileError(path, "schema", f"this envcheck reads schema {SCHEMA}, the file says {schema!r}")
    return machine_from_dict(data["machine"], path)


def machine_document(machine: Machine, comment: Optional[str] = None) -> JSONObject:
    """The TOML document for a machine file."""
    return {"schema": SCHEMA, "machine": machine.to_dict()}
