"""Read ``matrices/*.toml`` into typed rows, naming the file and key of anything malformed.

Each file holds arrays of tables (``[[build]]``); :data:`TABLES` says which row type each table
name becomes. Conversion checks types and formats field by field and raises
:class:`envcheck.errors.DataFileError` (exit code 2) with the dotted key (``build[12].sm``).
Cross-references between tables are checked by :mod:`envcheck.matrix.validate`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple, Type, TypeVar

from envcheck.errors import DataFileError, UsageError
from envcheck.jsontypes import JSON, JSONObject
from envcheck.matrix import model as m
from envcheck.matrix.model import RECIPE_KINDS  # noqa: F401 (re-exported; the resolver reads it without the loader)
from envcheck.schema import (
    Scalar,
    Table,
    arch_fits_vendor,
    check,
    list_of,
    map_of,
    one_of,
    one_or_list,
    pattern,
    req,
    validate,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

#: one file's rows by table name: ``{"build": [Build, …]}`` (the row types of :data:`TABLES`)
Tables = Dict[str, List[object]]


class _Ctx:
    """Where we are, for error messages."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, key: str, msg: str) -> DataFileError:
        return DataFileError(self.path, key, msg)


#: The kinds of recipe steps, in the order a recipe runs them.
#: What a recipe row's ``when`` may test (see matrices/README.md, "recipe.toml").
RECIPE_WHEN = ("os", "wsl", "tegra", "backend", "vendor", "rocm_min", "rocm_max", "compile", "container", "os_id",
               "freethreaded")

#: Every row carries where it came from and how sure it is.
_COMMON = {"source": req(one_or_list("source")), "confidence": req("confidence"), "note": "str"}


def _by_platform(spec: Any) -> Any:
    return map_of(spec, keys="platform")


_WHEEL_TAG = Scalar("a wheel tag or a table of them per platform",
                    lambda v: isinstance(v, str) or (isinstance(v, dict) and all(
                        k in m.PLATFORMS and isinstance(x, str) for k, x in v.items())),
                    json={"anyOf": [{"type": "string"}, {"type": "object", "propertyNames": {"enum": list(m.PLATFORMS)},
                                                         "additionalProperties": {"type": "string"}}]})


def _is_day(value: Any) -> bool:
    """A day of the calendar written ``2025-06-04`` (``2025-02-30`` is none): checked when a file is
    read, so that :mod:`envcheck.matrix.freshness` can compare the data's days as text."""
    import datetime  # (only where TOML is parsed)

    try:
        return isinstance(value, str) and len(value) == 10 and bool(datetime.date.fromisoformat(value))
    except ValueError:
        return False


_DAY = Scalar("a date like '2025-06-04'", _is_day, json={"type": "string", "format": "date"})
#: a UTC time like 2025-07-09T14:13:16Z on a day of the calendar
_TIME = Scalar("a UTC time like '2025-07-09T14:13:16Z'",
               lambda v: check(v, "timestamp") is None and _is_day(v[:10]),
               json={"type": "string", "format": "date-time"})


def _row(fields: Dict[str, Any], rule: Any = None) -> Table:
    return Table({**fields, **_COMMON}, unknown="strict", rule=rule)


#: Each row type's fields (spec language: :mod:`envcheck.schema`); ``source``/``confidence``/``note``
#: added to each. Unknown keys are errors under ``envcheck matrix validate`` (strict), ignored otherwise.
SPECS: Dict[type, Table] = {
    m.Release: _row({
        "version": req("version"),
        "date": _DAY,
        "torchvision": "version_or_empty",
        "torchaudio": "version_or_empty",
        "python": req(_by_platform(list_of("python"))),
        "pypi": _by_platform("str"),
        "pypi_tag": _by_platform("str"),
        "pypi_pins": map_of("as_str"),
        "compile": Table({"python_max": "as_str", "free_threaded": "bool", "windows": "bool"}, unknown="strict"),
    }),
    m.Build: _row({
        "torch": req(one_or_list("version")),
        "variant": req("str"),
        "channel": req("str"),
        "platforms": req(list_of("platform")),
        "wheel_tag": req(_WHEEL_TAG),
        "python": list_of("python"),
        "cuda": "version",
        "cudnn": "version",
        "nccl": "version",
        "sm": list_of("sm"),
        "ptx": list_of("ptx"),
        "rocm": "version",
        "gfx": list_of("gfx"),
        "mps": "bool",
        "mps_min_macos": "version",
        "wsl": "bool",
        "glibc": "version",
        "local_label": "bool",
        "tegra": "bool",
        "post_install": list_of("str"),
        "pins": map_of("str"),
    }),
    m.Channel: _row({"name": req("str"), "index_url": req("url"), "kind": req(one_of("simple", "find-links"))}),
    m.Toolkit: _row({"version": req("version"), "driver_linux": req("version_or_empty"),
                     "driver_windows": req("version_or_empty")}),
    m.Family: _row({"major": req("int"), "min_minor": "int", "floor_linux": req("version"),
                    "floor_windows": req("version_or_empty")}),
    m.NvArch: _row({
        "sm": req("sm"),
        "compute_capability": req("compute_capability"),
        "family": req("str"),
        "first_cuda": req("version_or_empty"),
        "last_cuda": "version_or_empty",
        "sbsa_from_cuda": "version_or_empty",
        "driver_min_linux": "version_or_empty",
        "driver_min_windows": "version_or_empty",
        "driver_last_branch": pattern(r"[0-9]{3}", "a driver branch like '580'"),
        "targets": list_of("sm"),
    }),
    m.Gpu: _row({
        "name": req("str"),
        "vendor": req("vendor"),
        "arch": req("gpu_arch"),
        "family": "str",
        "segment": "str",
        "memory_mib": "int",
        "aliases": list_of("str"),
        "host_arch": one_of("x86_64", "aarch64"),
        "host_os": list_of("os"),
    }, rule=arch_fits_vendor),
    m.XpuFamily: _row({"archs": req(list_of("gpu_arch")), "os": req(list_of("os")), "wsl": req("bool"),
                        "distros": list_of("str")}),
    m.RocmOs: _row({"rocm": req("version"), "distros": req(list_of("str"))}),
    m.RocmWslRelease: _row({"rocm": req("version"), "adrenalin_min": req("version_or_empty"),
                            "gfx": req(list_of("gfx")), "ubuntu": list_of("version")}),
    m.Step: _row({"key": req("str"), "description": req("str"), "shell": req("str"), "env": map_of("str")}),
    m.RecipeRow: _row({
        "key": req("str"),
        "kind": req(one_of(*RECIPE_KINDS)),
        "title": req("str"),
        "runs_in": req(one_of("host", "windows", "linux", "macos")),
        "shell": req(one_of("bash", "powershell", "manual")),
        "root": "bool",
        "commands": "str",
        "check": "str",
        "skip_if": "str",
        "url": "str",
        "env": map_of("str"),
        "when": Table({k: "any" for k in RECIPE_WHEN}, unknown="error"),
        "apt": list_of("str"),
    }),
    m.AmdRoute: _row({
        "key": req("str"),
        "kind": req(one_of("route", "instead", "unsupported")),
        "os": req(list_of("os")),
        "wsl": "bool",
        "gfx": req(list_of("str")),
        "text": req("str"),
        "url": "str",
    }),
    m.Distro: _row({"id": req("str"), "name": req("str"), "aliases": list_of("str"), "glibc": req("version"),
                    "python3": "version", "os_release": map_of("as_str")}),
    m.ManylinuxAlias: _row({"tag": req("str"), "glibc": req("version")}),
    m.VariantProvider: _row({
        "vendor": req(one_of("nvidia", "amd", "intel")), "namespace": req("str"),
        "arch_feature": req("str"), "version_features": req(list_of("str")),
        "arch_override": req("str"), "version_override": req("str"),
        "version_range": list_of("version"), "pep": req("str"),
    }),
    m.Marker: _row({"platform": req("platform"), "sys_platform": req("str"), "platform_machine": req("str")}),
    m.JetpackGen: _row({"major": req("str"), "l4t": req("str"), "distro": req("str"),
                        "channels": req(list_of("str")), "sbsa_cuda": "str"}),
    m.BlasGap: _row({"rocm_min": req("version"), "gfx": req(list_of("gfx")), "channel": "str"}),
    m.KernelDriver: _row({"rocm": req("version"), "amdgpu": "version", "user_space": req(list_of("version"))}),
    m.CudnnFloor: _row({"cudnn_min": req("version"), "cuda": req(list_of("str")), "sm_min": req("sm")}),
    m.Chip: _row({"vendor": req(one_of("nvidia", "amd", "intel")), "pattern": req("regex"),
                  "arch": req("str"), "family": req("str"), "integrated": "bool"}),
    m.TritonWindows: _row({"torch": req("version"), "triton": req("version"), "version": req("str"),
                           "python": req(list_of("python")), "sm_min": req("str"), "step": req("str")}),
    m.Companion: _row({"package": req(one_of("torchvision", "torchaudio")), "version": req("version"),
                       "any": "bool", "python": _by_platform(list_of("python"))}),
    m.CpuArch: _row({"name": req("cpu_arch"), "aliases": req(list_of("str")),
                     "platform": req(map_of("str", keys="os"))}),
    m.MacosRelease: _row({"version": req("version"), "name": req("str"), "darwin": "as_str"}),
    m.CondaForgeRow: _row({
        "torch": req(one_or_list("version")),
        "cuda_version": req(list_of("version")),
        "platforms": req(list_of("platform")),
        "python": list_of("python"),
        "arm_variant": "str",
    }),
    m.CondaSelect: _row({
        "when": req(Table({"free_threaded": "bool", "platform": "platform", "cuda": "bool", "cuda_major": "int",
                           "arm_variant": "str"},
                          unknown="error")),
        "specs": req(list_of("str")),
    }),
    m.PytorchChannelRow: _row({
        "torch": req(one_or_list("version")),
        "pytorch_cuda": list_of("version"),
        "cudatoolkit": list_of("version"),
        "platforms": list_of("platform"),
    }),
    m.NumpyRow: _row({
        "torch": req(list_of("version")),
        "channels": req(list_of("str")),
        "platforms": list_of("platform"),
        "built_against": req(one_of("1.x", "2.x")),
        "requires": req("specifier_or_empty"),
    }),
    m.CondaConstraint: _row({"package": req("str"), "build": "str", "run": list_of("str"), "host": list_of("str"),
                             "run_constrained": list_of("str")}),
    m.BaseImage: _row({
        "backend": req(one_of("cpu", "cuda", "rocm", "rocm-wsl", "xpu")),
        "image": req("str"),
        "template": req("str"),
        "python_from": req(one_of("image", "apt", "uv")),
        "distro": "str",
        "freethreaded": "bool",
        "uv_image": "str",
        "apt": list_of("str"),
        "says": "str",
        "tegra": "bool",
        "cuda": "version",
        "cuda_major": "int",
        "rocm": "version",
        "rocm_min": "version",
        "glibc": "version",
        "run_flags": list_of("str"),
        "env": map_of("str"),
        "prerequisites": list_of("str"),
    }),
    m.ContainerRoute: _row({"host_os": req(one_of("windows", "macos")), "vendor": req(list_of("str")),
                            "wsl": "bool", "says": req("str")}),
    m.CiTarget: _row({"name": req("str"), "args": req(list_of("str")), "description": "str"}),
    m.IndexUpdate: _row({
        "channel": req("str"),
        "package": req("str"),
        "index_url": req("http_url"),
        "pages": req(list_of("http_url")),
        "checked": req(_TIME),
        "changed": req(_TIME),
        "since": "version_or_empty",
        "files": req("int"),
    }),
    m.IndexWheels: _row({
        "channel": req("str"),
        "package": req("str"),
        "version": req("version"),
        "variant": req("str"),
        "subindex": "str",
        "uploaded": "str",
        "files": req(list_of("wheel_ref")),
        "yanked": list_of("str"),
    }),
    m.Diagnosis: _row({
        "id": req(pattern(r"[a-z0-9][a-z0-9-]*", "a short id like 'glibc-too-old'")),
        "checks": list_of("str"),
        "pattern": req("regex"),
        "wsl": "bool",
        "os": "os",
        "cause": req("str"),
        "fix": req("str"),
        "example": req("str"),
        "evidence": "str",
    }),
    m.Limit: _row({
        "name": req(pattern(r"[a-z][a-z0-9_]*", "a snake_case name like 'shm_small_mib'")),
        "value": req("nonneg"),
        "unit": "str",
    }),
    m.Tolerance: _row({
        "check": req("str"),
        "dtype": req(one_of("float64", "float32", "float16", "bfloat16")),
        "rel_error": req("nonneg"),
    }),
}

#: file-name pattern → {table name → row type}. A file may hold several tables.
TABLES: List[Tuple[re.Pattern[str], Dict[str, type]]] = [
    (re.compile(r"torch-releases\.toml"), {"release": m.Release}),
    (re.compile(r"torch-builds.*\.toml"), {"build": m.Build, "channel": m.Channel}),
    (re.compile(r"cuda\.toml"), {"toolkit": m.Toolkit, "family": m.Family, "arch": m.NvArch,
                                        "cudnn_floor": m.CudnnFloor}),
    (re.compile(r"gpus.*\.toml"), {"gpu": m.Gpu, "xpu_family": m.XpuFamily}),
    (re.compile(r"recipe\.toml"), {"recipe": m.RecipeRow}),
    (re.compile(r"amd-routes\.toml"), {"route": m.AmdRoute}),
    (re.compile(r"rocm-wsl\.toml"), {"release": m.RocmWslRelease, "step": m.Step}),
    (re.compile(r"platforms\.toml"), {"distro": m.Distro, "manylinux": m.ManylinuxAlias, "macos": m.MacosRelease,
                                            "marker": m.Marker, "cpu_arch": m.CpuArch,
                                            "jetpack": m.JetpackGen, "rocm_os": m.RocmOs}),
    (re.compile(r"companions\.toml"), {"companion": m.Companion}),
    (re.compile(r"gpu-chips\.toml"), {"chip": m.Chip}),
    (re.compile(r"rocm-libs\.toml"), {"blas_gap": m.BlasGap, "kernel_driver": m.KernelDriver}),
    (re.compile(r"triton-windows\.toml"), {"triton_windows": m.TritonWindows, "step": m.Step}),
    (re.compile(r"conda\.toml"), {"conda_forge": m.CondaForgeRow, "pytorch_channel": m.PytorchChannelRow,
                                         "constraint": m.CondaConstraint, "conda_select": m.CondaSelect}),
    (re.compile(r"numpy\.toml"), {"numpy": m.NumpyRow}),
    (re.compile(r"variants\.toml"), {"variant_provider": m.VariantProvider}),
    (re.compile(r"docker\.toml"), {"base_image": m.BaseImage, "ci_target": m.CiTarget,
                                         "container_route": m.ContainerRoute}),
    (re.compile(r"diagnoses\.toml"), {"diagnosis": m.Diagnosis, "tolerance": m.Tolerance, "limit": m.Limit}),
    # written by `envcheck matrix update` (envcheck/update/); one file per (channel, package)
    (re.compile(r"generated-index-[a-z0-9._-]+\.toml"), {"update": m.IndexUpdate, "wheels": m.IndexWheels}),
]


def read_toml(path: Path) -> JSONObject:
    """Parse one TOML file.

    Raises:
        DataFileError: unreadable file or invalid TOML (message carries line and column).
    """
    from envcheck.fsutil import read_input

    try:
        raw = read_input(path)  # a regular file, size-capped: never a FIFO or /dev/zero
    except UsageError as exc:
        raise DataFileError(path, "", str(exc).split(": ", 1)[-1]) from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(path, "", f"invalid TOML: {exc}") from None
    except RecursionError:
        raise DataFileError(path, "", "nested too deeply to be a TOML data file") from None
    except UnicodeDecodeError as exc:
        raise DataFileError(path, "", f"not UTF-8 text (byte {exc.start}): TOML files must be UTF-8") from None
    except IsADirectoryError:
        raise DataFileError(path, "", "is a directory, not a TOML file") from None


def convert_row(cls: type, raw: JSON, ctx: _Ctx, key: str, strict: bool = False) -> object:
    """Turn one raw TOML table into a ``cls`` row, checking every field against :data:`SPECS`.

    Raises:
        DataFileError: missing or ill-typed field (and, with ``strict``, an unknown key).
    """
    kwargs = validate(raw, SPECS[cls], ctx.path, key, strict=strict, freeze=True)
    return _fixups(cls, kwargs, ctx, key)


def _fixups(cls: type, kw: Dict[str, Any], ctx: _Ctx, key: str) -> object:
    if cls is m.Release:
        comp = kw.pop("compile", {}) or {}
        if comp.get("python_max") is not None:
            kw["compile_python_max"] = comp["python_max"]
        for name in ("free_threaded", "windows"):
            if name in comp:
                kw[f"compile_{name}"] = comp[name]
    if cls is m.Build:
        tag = kw.get("wheel_tag")
        if isinstance(tag, str):
            kw["wheel_tag"] = {p: tag for p in kw["platforms"]}
        missing = [p for p in kw["platforms"] if p not in kw["wheel_tag"]]
        if missing:
            raise ctx.fail(f"{key}.wheel_tag", f"no wheel tag for platform {missing[0]}")
        kw["file"] = ctx.path.name
        kw["index"] = int(key.rsplit("[", 1)[1].rstrip("]"))
    return cls(**kw)


def load_file(path: Path, strict: bool = False) -> Tables:
    """Load one matrix file into ``{table name: [rows]}`` (unknown files → empty).

    Raises:
        DataFileError: the file or one of its rows is malformed.
    """
    tables = next((t for rx, t in TABLES if rx.fullmatch(path.name)), None)
    if tables is None:
        if strict and not path.name.startswith("generated-"):
            raise DataFileError(path, "", "not a known matrix file (see matrices/README.md)")
        return {}
    return convert_tables(path, read_toml(path), strict)


def load_text(path: Path, text: str, strict: bool = True) -> Tables:
    """Check ``text`` as the content of matrix file ``path`` (not read from disk): what
    ``envcheck matrix update`` runs on a generated file before it replaces the old one.

    Raises:
        DataFileError: invalid TOML, an unknown file name, or a malformed row.
    """
    tables = next((t for rx, t in TABLES if rx.fullmatch(path.name)), None)
    if tables is None:
        raise DataFileError(path, "", "not a known matrix file (see matrices/README.md)")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(path, "", f"invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DataFileError(path, "", f"not UTF-8 text (byte {exc.start}): TOML files must be UTF-8") from None
    except IsADirectoryError:
        raise DataFileError(path, "", "is a directory, not a TOML file") from None
    return convert_tables(path, data, strict)


def convert_tables(path: Path, data: JSONObject, strict: bool = False) -> Tables:
    """Rows of one parsed matrix file, by table name (see :data:`TABLES`).

    Raises:
        DataFileError: a malformed row (or, with ``strict``, an unknown table).
    """
    tables = next((t for rx, t in TABLES if rx.fullmatch(path.name)), {})
    ctx = _Ctx(path)
    out: Tables = {}
    for tname, cls in tables.items():
        rows = data.get(tname, [])
        if not isinstance(rows, list):
            raise ctx.fail(tname, "expected an array of tables ([[" + tname + "]])")
        out[tname] = [convert_row(cls, r, ctx, f"{tname}[{i}]", strict) for i, r in enumerate(rows)]
    if strict:
        extra = sorted(k for k in data if k not in tables and not isinstance(data[k], (str, int)))
        if extra:
            raise ctx.fail(extra[0], f"unknown table; this file holds {', '.join(tables)}")
    return out


_Row = TypeVar("_Row")


def rows_of(tables: Tables, name: str, cls: Type[_Row]) -> List[_Row]:
    """The ``name`` rows of one file's :data:`Tables`, typed (each is a ``cls`` by construction)."""
    rows = tables.get(name, [])
    assert all(isinstance(r, cls) for r in rows), (name, cls)
    return rows  # type: ignore[return-value]  # checked just above


def load_dir(directory: Path, strict: bool = False) -> Mapping[str, Tables]:
    """Load every ``*.toml`` in ``directory``: ``{file name: {table: [rows]}}``.

    Raises:
        DataFileError: the folder is missing or a file is malformed.
    """
    if not directory.is_dir():
        raise DataFileError(directory, "", "matrix folder not found")
    return {p.name: load_file(p, strict) for p in sorted(directory.glob("*.toml"))}
