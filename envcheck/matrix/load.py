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
from typing import Any, Callable, Dict, List, Mapping, Tuple, Type, TypeVar

from envcheck.errors import DataFileError, UsageError
from envcheck.jsontypes import JSON, JSONObject
from envcheck.matrix import model as m
from envcheck.matrix.model import RECIPE_KINDS  # noqa: F401 (re-exported; the resolver reads it without the loader)
from envcheck.matrix.patterns import GFX_RE, PTX_RE, PY_RE, SM_RE  # noqa: F401 (re-exported)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

SOURCE_FORMS = (
    re.compile(r"https://\S+"),
    re.compile(r"[\w.-]+/[\w.-]+:[^@\s]+(@[0-9a-f]{7,40})?"),
    re.compile(r"[\w.-]+/[\w.-]+#\d+"),
    re.compile(r"pypi:[\w.-]+==\S+"),
    re.compile(r"wheel:\S+\.whl"),
    re.compile(r"derived:.+"),
)
TIMESTAMP_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
WHEEL_REF_RE = re.compile(r"[^\s#/]+\.whl(#sha256=[0-9a-f]{64})?")

Conv = Callable[[Any, str], Any]
#: one file's rows by table name: ``{"build": [Build, …]}`` (the row types of :data:`TABLES`)
Tables = Dict[str, List[object]]


class _Ctx:
    """Where we are, for error messages."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, key: str, msg: str) -> DataFileError:
        return DataFileError(self.path, key, msg)


def _str(ctx: _Ctx) -> Conv:
    def conv(v: Any, key: str) -> str:
        if not isinstance(v, str):
            raise ctx.fail(key, f"expected a string, got {type(v).__name__} {v!r}")
        return v

    return conv


def _version(ctx: _Ctx, allow_empty: bool = False) -> Conv:
    def conv(v: Any, key: str) -> str:
        s = _str(ctx)(v, key)
        if s == "" and allow_empty:
            return s
        try:
            m.vkey(s)
        except ValueError:
            raise ctx.fail(key, f"expected a version like '12.8.0', got {s!r}") from None
        return s

    return conv


def _int(ctx: _Ctx) -> Conv:
    def conv(v: Any, key: str) -> int:
        if not isinstance(v, int) or isinstance(v, bool):
            raise ctx.fail(key, f"expected an integer, got {v!r}")
        return v

    return conv


def _number(ctx: _Ctx) -> Conv:
    def conv(v: Any, key: str) -> float:
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
            raise ctx.fail(key, f"expected a non-negative number, got {v!r}")
        return float(v)

    return conv


def _regex(ctx: _Ctx) -> Conv:
    def conv(v: Any, key: str) -> str:
        s = _str(ctx)(v, key)
        try:
            re.compile(s)
        except re.error as exc:
            raise ctx.fail(key, f"invalid regular expression: {exc}") from None
        return s

    return conv


def _bool(ctx: _Ctx) -> Conv:
    def conv(v: Any, key: str) -> bool:
        if not isinstance(v, bool):
            raise ctx.fail(key, f"expected true or false, got {v!r}")
        return v

    return conv


def _pattern(ctx: _Ctx, rx: re.Pattern[str], what: str) -> Conv:
    def conv(v: Any, key: str) -> str:
        s = _str(ctx)(v, key)
        if not rx.fullmatch(s):
            raise ctx.fail(key, f"expected {what}, got {s!r}")
        return s

    return conv


def _list(ctx: _Ctx, item: Conv) -> Conv:
    def conv(v: Any, key: str) -> Tuple[Any, ...]:
        if not isinstance(v, list):
            raise ctx.fail(key, f"expected a list, got {type(v).__name__} {v!r}")
        return tuple(item(x, f"{key}[{i}]") for i, x in enumerate(v))

    return conv


def _str_or_list(ctx: _Ctx, item: Conv) -> Conv:
    def conv(v: Any, key: str) -> Tuple[Any, ...]:
        if isinstance(v, str):
            return (item(v, key),)
        return _list(ctx, item)(v, key)

    return conv


def _choice(ctx: _Ctx, choices: Tuple[str, ...]) -> Conv:
    def conv(v: Any, key: str) -> str:
        s = _str(ctx)(v, key)
        if s not in choices:
            raise ctx.fail(key, f"expected one of {', '.join(choices)}; got {s!r}")
        return s

    return conv


def _table(ctx: _Ctx, value: Conv, keys: Tuple[str, ...] = ()) -> Conv:
    def conv(v: Any, key: str) -> Dict[str, Any]:
        if not isinstance(v, dict):
            raise ctx.fail(key, f"expected a table, got {type(v).__name__} {v!r}")
        out = {}
        for k, x in v.items():
            if keys and k not in keys:
                raise ctx.fail(f"{key}.{k}", f"unknown key; expected one of {', '.join(keys)}")
            out[k] = value(x, f"{key}.{k}")
        return out

    return conv


def _source(ctx: _Ctx) -> Conv:
    def one(v: Any, key: str) -> str:
        s = _str(ctx)(v, key)
        if not any(rx.fullmatch(s) for rx in SOURCE_FORMS):
            raise ctx.fail(
                key,
                f"source {s!r} is not an https:// URL, owner/repo:path[@commit], owner/repo#N, "
                "pypi:name==version, wheel:file.whl or derived:… (see matrices/README.md)",
            )
        return s

    return _str_or_list(ctx, one)


def _wheel_tag(ctx: _Ctx) -> Conv:
    def conv(v: Any, key: str) -> Any:
        if isinstance(v, str):
            return v  # expanded per platform in _build_fixups
        return _table(ctx, _str(ctx), m.PLATFORMS)(v, key)

    return conv


def _compile(ctx: _Ctx) -> Conv:
    def conv(v: Any, key: str) -> Any:
        return _table(ctx, lambda x, k: x, ())(v, key)

    return conv


# field name -> (converter factory, required)
Spec = Dict[str, Tuple[Callable[[_Ctx], Conv], bool]]

#: The kinds of recipe steps, in the order a recipe runs them.
#: What a recipe row's ``when`` may test (see matrices/README.md, "recipe.toml").
RECIPE_WHEN = ("os", "wsl", "backend", "vendor", "rocm_min", "rocm_max", "compile", "container")

_COMMON: Spec = {
    "source": (_source, True),
    "confidence": (lambda c: _choice(c, m.CONFIDENCE_LEVELS), True),
    "note": (_str, False),
}


def _platform_map(value: Callable[[_Ctx], Conv]) -> Callable[[_Ctx], Conv]:
    return lambda c: _table(c, value(c), m.PLATFORMS)


def _py_list(c: _Ctx) -> Conv:
    return _list(c, _pattern(c, PY_RE, "a Python version like '3.12' or '3.13t'"))


SPECS: Dict[type, Spec] = {
    m.Release: {
        "version": (_version, True),
        "date": (_str, False),
        "torchvision": (lambda c: _version(c, allow_empty=True), False),
        "torchaudio": (lambda c: _version(c, allow_empty=True), False),
        "python": (_platform_map(_py_list), True),
        "pypi": (_platform_map(_str), False),
        "pypi_tag": (_platform_map(_str), False),
        "pypi_pins": (lambda c: _table(c, lambda x, k: str(x)), False),
        "compile": (_compile, False),
    },
    m.Build: {
        "torch": (lambda c: _str_or_list(c, _version(c)), True),
        "variant": (_str, True),
        "channel": (_str, True),
        "platforms": (lambda c: _list(c, _choice(c, m.PLATFORMS)), True),
        "wheel_tag": (_wheel_tag, True),
        "python": (_py_list, False),
        "cuda": (_version, False),
        "cudnn": (_version, False),
        "nccl": (_version, False),
        "sm": (lambda c: _list(c, _pattern(c, SM_RE, "an NVIDIA cubin arch like 'sm_80'")), False),
        "ptx": (lambda c: _list(c, _pattern(c, PTX_RE, "a PTX arch like 'compute_120'")), False),
        "rocm": (_version, False),
        "gfx": (lambda c: _list(c, _pattern(c, GFX_RE, "an AMD target like 'gfx1100'")), False),
        "mps": (_bool, False),
        "mps_min_macos": (_version, False),
        "wsl": (_bool, False),
        "glibc": (_version, False),
        "local_label": (_bool, False),
        "tegra": (_bool, False),
        "post_install": (lambda c: _list(c, _str(c)), False),
        "pins": (lambda c: _table(c, _str(c)), False),
    },
    m.Channel: {
        "name": (_str, True),
        "index_url": (lambda c: _pattern(c, re.compile(r"(https?|file)://\S+"), "a URL"), True),
        "kind": (lambda c: _choice(c, ("simple", "find-links")), True),
    },
    m.Toolkit: {
        "version": (_version, True),
        "driver_linux": (lambda c: _version(c, allow_empty=True), True),
        "driver_windows": (lambda c: _version(c, allow_empty=True), True),
    },
    m.Family: {
        "major": (_int, True),
        "min_minor": (_int, False),
        "floor_linux": (_version, True),
        "floor_windows": (lambda c: _version(c, allow_empty=True), True),
    },
    m.NvArch: {
        "sm": (lambda c: _pattern(c, SM_RE, "an arch like 'sm_86'"), True),
        "compute_capability": (
            lambda c: _pattern(c, re.compile(r"\d+\.\d+"), "a compute capability like '8.6'"),
            True,
        ),
        "family": (_str, True),
        "first_cuda": (lambda c: _version(c, allow_empty=True), True),
        "last_cuda": (lambda c: _version(c, allow_empty=True), False),
        "sbsa_from_cuda": (lambda c: _version(c, allow_empty=True), False),
        "driver_min_linux": (lambda c: _version(c, allow_empty=True), False),
        "driver_min_windows": (lambda c: _version(c, allow_empty=True), False),
        "driver_last_branch": (lambda c: _pattern(c, re.compile(r"[0-9]{3}"), "a driver branch like '580'"), False),
    },
    m.Gpu: {
        "name": (_str, True),
        "vendor": (lambda c: _choice(c, m.VENDORS), True),
        "arch": (_str, True),
        "family": (_str, False),
        "segment": (_str, False),
        "memory_mib": (_int, False),
        "aliases": (lambda c: _list(c, _str(c)), False),
        "host_arch": (lambda c: _choice(c, ("x86_64", "aarch64")), False),
    },
    m.RocmWslRelease: {
        "rocm": (_version, True),
        "adrenalin_min": (lambda c: _version(c, allow_empty=True), True),
        "gfx": (lambda c: _list(c, _pattern(c, GFX_RE, "an AMD target like 'gfx1100'")), True),
        "ubuntu": (lambda c: _list(c, _version(c)), False),
    },
    m.Step: {"key": (_str, True), "description": (_str, True), "shell": (_str, True),
             "env": (lambda c: _table(c, _str(c)), False)},
    m.RecipeRow: {
        "key": (_str, True),
        "kind": (lambda c: _choice(c, RECIPE_KINDS), True),
        "title": (_str, True),
        "runs_in": (lambda c: _choice(c, ("host", "windows", "linux", "macos")), True),
        "shell": (lambda c: _choice(c, ("bash", "powershell", "manual")), True),
        "root": (_bool, False),
        "commands": (_str, False),
        "check": (_str, False),
        "skip_if": (_str, False),
        "url": (_str, False),
        "env": (lambda c: _table(c, _str(c)), False),
        "when": (lambda c: _table(c, lambda x, k: x, RECIPE_WHEN), False),
    },
    m.AmdRoute: {
        "key": (_str, True),
        "kind": (lambda c: _choice(c, ("route", "instead", "unsupported")), True),
        "os": (lambda c: _list(c, _choice(c, ("linux", "windows", "macos"))), True),
        "wsl": (_bool, False),
        "gfx": (lambda c: _list(c, _str(c)), True),
        "text": (_str, True),
        "url": (_str, False),
    },
    m.Distro: {
        "id": (_str, True),
        "name": (_str, True),
        "aliases": (lambda c: _list(c, _str(c)), False),
        "glibc": (_version, True),
        "python3": (_version, False),
        "os_release": (lambda c: _table(c, lambda x, k: str(x)), False),
    },
    m.ManylinuxAlias: {"tag": (_str, True), "glibc": (_version, True)},
    m.VariantProvider: {
        "vendor": (lambda c: _choice(c, ("nvidia", "amd", "intel")), True), "namespace": (_str, True),
        "arch_feature": (_str, True), "version_features": (lambda c: _list(c, _str(c)), True),
        "arch_override": (_str, True), "version_override": (_str, True),
        "version_range": (lambda c: _list(c, _version(c)), False), "pep": (_str, True),
    },
    m.Marker: {"platform": (lambda c: _choice(c, m.PLATFORMS), True), "sys_platform": (_str, True),
               "platform_machine": (_str, True)},
    m.JetpackGen: {"major": (_str, True), "l4t": (_str, True), "distro": (_str, True),
                   "channels": (lambda c: _list(c, _str(c)), True)},
    m.Chip: {"vendor": (lambda c: _choice(c, ("nvidia", "amd", "intel")), True), "pattern": (_regex, True),
             "arch": (_str, True), "family": (_str, True), "integrated": (_bool, False)},
    m.TritonWindows: {"torch": (_version, True), "triton": (_version, True), "version": (_str, True),
                      "python": (_py_list, True), "sm_min": (_str, True), "step": (_str, True)},
    m.Companion: {"package": (lambda c: _choice(c, ("torchvision", "torchaudio")), True),
                  "version": (_version, True), "any": (_bool, False),
                  "python": (_platform_map(_py_list), False)},
    m.CpuArch: {"name": (lambda c: _choice(c, ("x86_64", "aarch64", "arm64", "x86")), True),
                "aliases": (lambda c: _list(c, _str(c)), True),
                "platform": (lambda c: _table(c, _str(c), ("linux", "windows", "macos")), True)},
    m.MacosRelease: {"version": (_version, True), "name": (_str, True), "darwin": (lambda c: (lambda v, k: str(v)), False)},
    m.CondaForgeRow: {
        "torch": (lambda c: _str_or_list(c, _version(c)), True),
        "cuda_version": (lambda c: _list(c, _version(c)), True),
        "platforms": (lambda c: _list(c, _choice(c, m.PLATFORMS)), True),
        "python": (_py_list, False),
        "arm_variant": (_str, False),
    },
    m.PytorchChannelRow: {
        "torch": (lambda c: _str_or_list(c, _version(c)), True),
        "pytorch_cuda": (lambda c: _list(c, _version(c)), False),
        "cudatoolkit": (lambda c: _list(c, _version(c)), False),
        "platforms": (lambda c: _list(c, _choice(c, m.PLATFORMS)), False),
    },
    m.CondaConstraint: {
        "package": (_str, True),
        "build": (_str, False),
        "run": (lambda c: _list(c, _str(c)), False),
        "host": (lambda c: _list(c, _str(c)), False),
        "run_constrained": (lambda c: _list(c, _str(c)), False),
    },
    m.BaseImage: {
        "backend": (lambda c: _choice(c, ("cpu", "cuda", "rocm", "rocm-wsl", "xpu")), True),
        "image": (_str, True),
        "template": (_str, True),
        "python_from": (lambda c: _choice(c, ("image", "apt")), True),
        "cuda_major": (_int, False),
        "rocm": (_version, False),
        "glibc": (_version, False),
        "run_flags": (lambda c: _list(c, _str(c)), False),
        "env": (lambda c: _table(c, _str(c)), False),
        "prerequisites": (lambda c: _list(c, _str(c)), False),
    },
    m.CiTarget: {
        "name": (_str, True),
        "args": (lambda c: _list(c, _str(c)), True),
        "description": (_str, False),
    },
    m.IndexUpdate: {
        "channel": (_str, True),
        "package": (_str, True),
        "index_url": (lambda c: _pattern(c, re.compile(r"https?://\S+"), "an http(s) URL"), True),
        "pages": (lambda c: _list(c, _pattern(c, re.compile(r"https?://\S+"), "an http(s) URL")), True),
        "checked": (lambda c: _pattern(c, TIMESTAMP_RE, "a UTC time like '2025-07-09T14:13:16Z'"), True),
        "changed": (lambda c: _pattern(c, TIMESTAMP_RE, "a UTC time like '2025-07-09T14:13:16Z'"), True),
        "since": (lambda c: _version(c, allow_empty=True), False),
        "files": (_int, True),
    },
    m.IndexWheels: {
        "channel": (_str, True),
        "package": (_str, True),
        "version": (_version, True),
        "variant": (_str, True),
        "subindex": (_str, False),
        "uploaded": (_str, False),
        "files": (lambda c: _list(c, _pattern(c, WHEEL_REF_RE, "'name.whl#sha256=<64 hex>'")), True),
        "yanked": (lambda c: _list(c, _str(c)), False),
    },
    m.Diagnosis: {
        "id": (lambda c: _pattern(c, re.compile(r"[a-z0-9][a-z0-9-]*"), "a short id like 'glibc-too-old'"), True),
        "checks": (lambda c: _list(c, _str(c)), False),
        "pattern": (_regex, True),
        "wsl": (_bool, False),
        "os": (lambda c: _choice(c, ("windows", "linux", "macos")), False),
        "cause": (_str, True),
        "fix": (_str, True),
        "example": (_str, True),
        "evidence": (_str, False),
    },
    m.Limit: {
        "name": (lambda c: _pattern(c, re.compile(r"[a-z][a-z0-9_]*"), "a snake_case name like 'shm_small_mib'"), True),
        "value": (_number, True),
        "unit": (_str, False),
    },
    m.Tolerance: {
        "check": (_str, True),
        "dtype": (lambda c: _choice(c, ("float64", "float32", "float16", "bfloat16")), True),
        "rel_error": (_number, True),
    },
}

#: file-name pattern → {table name → row type}. A file may hold several tables.
TABLES: List[Tuple[re.Pattern[str], Dict[str, type]]] = [
    (re.compile(r"torch-releases\.toml"), {"release": m.Release}),
    (re.compile(r"torch-builds.*\.toml"), {"build": m.Build, "channel": m.Channel}),
    (re.compile(r"cuda\.toml"), {"toolkit": m.Toolkit, "family": m.Family, "arch": m.NvArch}),
    (re.compile(r"gpus.*\.toml"), {"gpu": m.Gpu}),
    (re.compile(r"recipe\.toml"), {"recipe": m.RecipeRow}),
    (re.compile(r"amd-routes\.toml"), {"route": m.AmdRoute}),
    (re.compile(r"rocm-wsl\.toml"), {"release": m.RocmWslRelease, "step": m.Step}),
    (re.compile(r"platforms\.toml"), {"distro": m.Distro, "manylinux": m.ManylinuxAlias, "macos": m.MacosRelease,
                                            "marker": m.Marker, "cpu_arch": m.CpuArch,
                                            "jetpack": m.JetpackGen}),
    (re.compile(r"companions\.toml"), {"companion": m.Companion}),
    (re.compile(r"gpu-chips\.toml"), {"chip": m.Chip}),
    (re.compile(r"triton-windows\.toml"), {"triton_windows": m.TritonWindows, "step": m.Step}),
    (re.compile(r"conda\.toml"), {"conda_forge": m.CondaForgeRow, "pytorch_channel": m.PytorchChannelRow,
                                         "constraint": m.CondaConstraint}),
    (re.compile(r"variants\.toml"), {"variant_provider": m.VariantProvider}),
    (re.compile(r"docker\.toml"), {"base_image": m.BaseImage, "ci_target": m.CiTarget}),
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
    """Turn one raw TOML table into a ``cls`` row, checking every field.

    Raises:
        DataFileError: missing or ill-typed field (and, with ``strict``, an unknown key).
    """
    if not isinstance(raw, dict):
        raise ctx.fail(key, f"expected a table, got {type(raw).__name__}")
    spec = {**SPECS[cls], **_COMMON}
    kwargs: Dict[str, Any] = {}
    for name, (factory, required) in spec.items():
        if name not in raw:
            if required:
                raise ctx.fail(f"{key}.{name}", "missing (required)")
            continue
        kwargs[name] = factory(ctx)(raw[name], f"{key}.{name}")
    if strict:
        unknown = sorted(set(raw) - set(spec))
        if unknown:
            raise ctx.fail(f"{key}.{unknown[0]}", f"unknown key; known keys: {', '.join(spec)}")
    if "source" in kwargs and not isinstance(kwargs["source"], tuple):
        kwargs["source"] = tuple(kwargs["source"])
    return _fixups(cls, kwargs, ctx, key)


def _fixups(cls: type, kw: Dict[str, Any], ctx: _Ctx, key: str) -> object:
    if cls is m.Release:
        comp = kw.pop("compile", {}) or {}
        if comp.get("python_max") is not None:
            kw["compile_python_max"] = str(comp["python_max"])
        for name in ("free_threaded", "windows"):
            if name in comp:
                if not isinstance(comp[name], bool):
                    raise ctx.fail(f"{key}.compile.{name}", f"expected true or false, got {comp[name]!r}")
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
