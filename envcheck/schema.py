"""One schema mechanism for every file envcheck reads: matrix files, machine files, locks, facts.

A *spec* says what a value must look like; :func:`check` walks a value against a spec and returns
the first problem as ``(key path, message)`` (``build[12].cuda``, ``runs.matmul.data.results[0]``),
:func:`validate` raises it as a :class:`~envcheck.errors.DataFileError` (one line, exit 2) and
returns the value converted (lists become tuples with ``freeze``). Every reader — matrix rows
(:mod:`envcheck.matrix.load`), machine files (:mod:`envcheck.machine.io`), locks
(:mod:`envcheck.lock`), facts (:mod:`envcheck.verify.facts`) — describes its files in this language,
so a value such as ``sm_90a``, ``gfx1100`` or ``12.8`` means the same in all four.

Spec forms:

* a type name from :data:`TYPES` (``"version"``, ``"sm"``, ``"gfx"``, ``"python"``, ``"name"``…):
  the shared value types, defined once here;
* a :class:`Scalar` (:func:`pattern`, :func:`one_of`, :func:`text` for other bounds);
* :class:`Table` — named fields, which are required, what happens to unknown keys (``"error"``,
  ``"allow"``, or ``"strict"``: an error only when the caller asks for strict checking), a
  cross-field rule; a plain ``{key: spec}`` dict is an open table of optional fields;
* :func:`list_of`, :func:`map_of`, :func:`one_or_list` (a string or a list of them),
  :func:`nullable`, :func:`enum`.

``null`` (JSON) inside a table means the key is absent; list items and map values are never null
(unless :func:`nullable`). The JSON Schemas of the ``--json`` outputs (``envcheck/render/*.json``)
describe what envcheck *writes*; tests/structure/test_schema_mechanism.py holds the machine and
facts parts of them to the specs here.
"""

from __future__ import annotations

import re
from functools import cache

from envcheck.edge import NAME_MAX, printable_line
from envcheck.errors import DataFileError
from envcheck.record import record

TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Mapping, Optional, Tuple

# -- the vocabulary: names every file kind spells the same way ---------------------------------

#: operating systems (WSL is ``linux`` with ``wsl = true``)
OSES = ("linux", "windows", "macos")
#: CPU architectures as files name them (the names of matrices/platforms.toml ``[[cpu_arch]]``;
#: the aliases people type — ``amd64``, ``arm64`` on Linux — are data there, not here)
CPU_ARCHES = ("x86_64", "aarch64", "arm64", "x86")
#: GPU vendors
VENDORS = ("nvidia", "amd", "intel", "apple")
#: how sure a matrix row is of its source
CONFIDENCE_LEVELS = ("official", "copy", "community", "unverified")
#: matrix platform keys (``os-arch``)
PLATFORMS = (
    "linux-x86_64",
    "linux-aarch64",
    "windows-x86_64",
    "windows-arm64",
    "macos-arm64",
    "macos-x86_64",
)

# Patterns are kept as text and compiled on first use (a start-up that reads no file compiles none).
#: an NVIDIA cubin target: ``sm_89``; ``sm_90a`` (arch-specific), ``sm_100f`` (family-specific)
SM_RE = r"sm_\d{2,3}[af]?"
#: an NVIDIA PTX target: ``compute_90``, ``compute_90a``
PTX_RE = r"compute_\d{2,3}[af]?"
#: an AMD target: ``gfx1100``, ``gfx90a``; LLVM's generic targets ``gfx11-generic``, ``gfx10-3-generic``,
#: ``gfx9-4-generic`` (llvm/llvm-project docs/AMDGPUUsage.rst; gfx9-4-generic: llvm/llvm-project#115190)
GFX_RE = r"gfx[0-9a-f]{3,4}|gfx\d{1,2}(-\d)?-generic"
#: a Python version as envcheck names it: ``3.12``, ``3.13t`` (free-threaded)
PY_RE = r"\d+\.\d+t?"
#: the architecture of one GPU: NVIDIA ``sm_89`` (``sm_90a``/``sm_100f`` name a 9.0/10.0 GPU's
#: arch-specific targets), AMD ``gfx1100`` (never a ``-generic`` target), Intel ``xpu-…``, Apple ``apple-…``
GPU_ARCH_RE = r"sm_\d{2,3}[af]?|gfx[0-9a-f]{3,4}|xpu-[a-z0-9._-]+|apple-[a-z0-9._-]+"
#: the prefix of a GPU arch per vendor
ARCH_PREFIX = {"nvidia": "sm_", "amd": "gfx", "intel": "xpu-", "apple": "apple-"}

#: Longest version string accepted.
VERSION_MAX = 64

if TYPE_CHECKING:
    #: (dotted key, what is wrong with it)
    Problem = Tuple[str, str]


@cache
def _rx(text: str) -> re.Pattern[str]:
    return re.compile(text)


def fullmatch(rx: str, value: str) -> bool:
    """``value`` matches the pattern text ``rx`` in full (compiled once, on first use)."""
    return _rx(rx).fullmatch(value) is not None


# -- specs ---------------------------------------------------------------------------------------
@record(frozen=True)
class Scalar:
    """A leaf value: ``test`` says whether it fits (``True``; else ``False`` or the problem in words),
    ``what`` how the error message names it
    (``"a version like '12.8'"``); ``convert`` turns an accepted value into what readers get;
    ``json`` is its JSON Schema (see :func:`json_schema`)."""

    what: str
    test: Callable[[Any], Any]  # True when it fits; False, or a message saying why not
    convert: Optional[Callable[[Any], Any]] = None
    json: Optional[Mapping[str, Any]] = None  # the same in JSON Schema, as far as it can say it


@record(frozen=True)
class Required:
    """A :class:`Table` field that must be present (see :func:`req`)."""

    spec: Any


@record(frozen=True)
class Table:
    """A table / JSON object.

    Attributes:
        fields: key → spec (wrap in :func:`req` when required).
        unknown: ``"error"`` (an unknown key is a problem), ``"allow"`` (checked against ``extra``),
            ``"strict"`` (an error when the caller checks strictly, allowed otherwise).
        extra: the spec unknown keys must fit when allowed (``"any"``: anything).
        rule: a cross-field check run when every field fits: ``rule(value)`` returns
            ``(".sub.key", message)`` or ``None``.
        what: what a "missing" message adds (``"[build] table"``).
        noun: what an unknown key is called in messages (``"unknown probe"``).
    """

    fields: Mapping[str, Any]
    unknown: str = "error"
    extra: Any = "any"
    rule: Optional[Callable[[Mapping[str, Any]], Optional[Problem]]] = None
    what: str = ""
    noun: str = "key"

    def known(self) -> Tuple[str, ...]:
        return tuple(self.fields)

    def required(self) -> Tuple[str, ...]:
        return tuple(k for k, s in self.fields.items() if isinstance(s, Required))

    def merged(self, more: Mapping[str, Any]) -> Table:
        """This table with ``more`` fields added (the matrix's ``source``/``confidence``/``note``)."""
        return Table({**self.fields, **more}, self.unknown, self.extra, self.rule, self.what, self.noun)


@record(frozen=True)
class _Of:
    """A list, map, one-or-list, nullable or enum spec (made by :func:`list_of` and the others)."""

    kind: str  # list | map | nullable | enum | one_or_list
    spec: Any = None
    values: Tuple[Any, ...] = ()
    max_items: int = 0
    keys: Any = None  # map: the spec every key fits


def req(spec: Any) -> Required:
    """A required field."""
    return Required(spec)


def list_of(spec: Any, max_items: int = 0) -> _Of:
    """A list whose items fit ``spec`` (never null); at most ``max_items`` when given."""
    return _Of("list", spec, max_items=max_items)


def map_of(spec: Any, keys: Any = None) -> _Of:
    """A table with any keys (each fitting ``keys`` when given) and values of one shape."""
    return _Of("map", spec, keys=keys)


def one_or_list(spec: Any) -> _Of:
    """A value of ``spec`` or a list of them (read as a tuple when frozen)."""
    return _Of("one_or_list", spec)


def nullable(spec: Any) -> _Of:
    """``spec`` or null (for map values and list items, where null is otherwise an error)."""
    return _Of("nullable", spec)


def enum(*values: Any) -> _Of:
    """One of ``values`` (compared with ``==``; a boolean never matches an integer)."""
    return _Of("enum", values=tuple(values))


def pattern(rx: str, what: str, max_len: int = NAME_MAX) -> Scalar:
    """A string the pattern text ``rx`` matches in full."""
    return Scalar(what, lambda v: isinstance(v, str) and len(v) <= max_len and fullmatch(rx, v),
                  json={"type": "string", "pattern": f"^(?:{rx})$", "maxLength": max_len})


def one_of(*values: str) -> Scalar:
    """A string from a fixed vocabulary."""
    return Scalar(f"one of {', '.join(values)}", lambda v: isinstance(v, str) and v in values,
                  json={"enum": list(values)})


def text(max_len: int, what: str = "") -> Scalar:
    """Printable text on one line, at most ``max_len`` characters (a string from outside that
    reaches a terminal, a comment or a command)."""
    return Scalar(what or f"printable text on one line (at most {max_len} characters)",
                  lambda v: isinstance(v, str) and len(v) <= max_len and printable_line(v),
                  json={"type": "string", "maxLength": max_len})


# -- the shared value types ----------------------------------------------------------------------
def _finite(v: Any) -> bool:
    import math  # (loaded only where a file is checked: not on a start from cached data)

    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2 ** 63


def _packaging_reads(v: Any, kind: str) -> bool:
    """Whether packaging reads ``v`` (≤ 200 characters) as a ``kind``: ``specifier`` (PEP 440:
    ``<2``, ``>=1.22,<2``; ``""`` = any version) or ``requirement`` (PEP 508: ``numpy<2``)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not isinstance(v, str) or len(v) > 200:
        return False
    try:
        (SpecifierSet if kind == "specifier" else Requirement)(v)
    except (InvalidSpecifier, InvalidRequirement):
        return False
    return True


def is_version(v: Any) -> bool:
    """A version string packaging reads (``12.8``, ``570.124.06``, ``2.13.0+cpu``), ≤ 64 characters."""
    from packaging.version import InvalidVersion, Version

    if not isinstance(v, str) or len(v) > VERSION_MAX:
        return False
    try:
        Version(v)
    except InvalidVersion:
        return False
    return True


def _source(v: Any) -> bool:
    return isinstance(v, str) and any(fullmatch(rx, v) for rx in SOURCE_FORMS)


def _regex(v: Any) -> Any:
    if not isinstance(v, str):
        return False
    try:
        re.compile(v)
    except re.error as exc:
        return f"invalid regular expression: {exc}"
    return True


#: where a matrix row's facts come from (matrices/README.md, "Sources")
SOURCE_FORMS = (
    r"https://\S+",
    r"[\w.-]+/[\w.-]+:[^@\s]+(@[0-9a-f]{7,40})?",
    r"[\w.-]+/[\w.-]+#\d+",
    r"pypi:[\w.-]+==\S+",
    r"wheel:\S+\.whl",
    r"derived:.+",
)
TIMESTAMP_RE = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
WHEEL_REF_RE = r"[^\s#/]+\.whl(#sha256=[0-9a-f]{64})?"

_NUMBER = Scalar("a non-negative number", lambda v: _finite(v) and v >= 0, float, {"type": "number", "minimum": 0})
_STR = {"type": "string"}
_VERSION = {"type": "string", "minLength": 1, "maxLength": VERSION_MAX}

#: The shared value types, by name: what each file kind calls a version, an arch, a Python…
TYPES: Dict[str, Scalar] = {
    "any": Scalar("anything", lambda v: True, json={}),
    "str": Scalar("a string", lambda v: isinstance(v, str), json=_STR),
    "name": text(NAME_MAX),
    "int": Scalar("an integer", _int, json={"type": "integer"}),
    "count": Scalar("an integer ≥ 0", lambda v: _int(v) and v >= 0, json={"type": "integer", "minimum": 0}),
    "num": Scalar("a finite number", _finite, json={"type": "number"}),
    "nonneg": _NUMBER,
    "secs": Scalar("a number of seconds ≥ 0", lambda v: _finite(v) and v >= 0, json={"type": "number", "minimum": 0}),
    "bool": Scalar("true or false", lambda v: isinstance(v, bool), json={"type": "boolean"}),
    "version": Scalar("a version like '12.8' or '570.124.06'", is_version, json=_VERSION),
    # "" where a row means "none" (a toolkit with no Windows driver floor, a release with no torchaudio)
    "version_or_empty": Scalar("a version like '12.8' (or \"\")", lambda v: v == "" or is_version(v),
                               json={"type": "string", "maxLength": VERSION_MAX}),
    # a PEP 440 specifier ("<2", ">=1.22,<2"); "" = any version
    "specifier_or_empty": Scalar("a version specifier like '<2' (or \"\" for any)",
                                 lambda v: _packaging_reads(v, "specifier"),
                                 json={"type": "string", "maxLength": 200}),
    "requirement": Scalar("a requirement like 'numpy<2'", lambda v: _packaging_reads(v, "requirement"),
                          json={"type": "string", "maxLength": 200}),
    "python": pattern(PY_RE, "a Python version like '3.12' or '3.13t'"),
    # a lock of a plan whose build names no Python writes "" (envcheck/resolve/plan.py)
    "python_or_empty": Scalar("a Python version like '3.12' or '3.13t' (or \"\")",
                              lambda v: v == "" or (isinstance(v, str) and fullmatch(PY_RE, v)),
                              json={"type": "string", "pattern": f"^(?:{PY_RE})?$"}),
    # what an interpreter reports: "3.12.9", "3.13.0rc1"
    "python_version": Scalar("a Python version such as '3.12.9'",
                             lambda v: isinstance(v, str) and _rx(r"\d+\.\d+(?!\d)").match(v) is not None,
                             json={"type": "string", "pattern": r"^\d+\.\d+(?!\d)"}),
    "sm": pattern(SM_RE, "an NVIDIA cubin arch like 'sm_89' or 'sm_90a'"),
    "ptx": pattern(PTX_RE, "a PTX arch like 'compute_90'"),
    "gfx": pattern(GFX_RE, "an AMD target like 'gfx1100', 'gfx90a' or 'gfx11-generic'"),
    "kernel_target": Scalar("a kernel target like 'sm_90a', 'compute_90' or 'gfx1100'",
                            lambda v: isinstance(v, str) and any(fullmatch(rx, v) for rx in (SM_RE, PTX_RE, GFX_RE)),
                            json={"type": "string", "pattern": f"^(?:{SM_RE}|{PTX_RE}|{GFX_RE})$"}),
    "gpu_arch": pattern(GPU_ARCH_RE, "a GPU arch like 'sm_89', 'sm_90a', 'gfx1100', 'xpu-…' or 'apple-…'"),
    "compute_capability": pattern(r"\d+\.\d+", "a compute capability like '8.6'"),
    "capability": Scalar("[major, minor]: two integers such as [8, 9]", lambda v: isinstance(v, list) and len(v) == 2
                         and all(_int(x) and 0 <= x < 1000 for x in v),
                         json={"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 999},
                               "minItems": 2, "maxItems": 2}),
    "os": one_of(*OSES),
    "cpu_arch": one_of(*CPU_ARCHES),
    "vendor": one_of(*VENDORS),
    "platform": one_of(*PLATFORMS),
    "confidence": one_of(*CONFIDENCE_LEVELS),
    "url": pattern(r"(https?|file)://\S+", "a URL", 2048),
    "http_url": pattern(r"https?://\S+", "an http(s) URL", 2048),
    "timestamp": pattern(TIMESTAMP_RE, "a UTC time like '2025-07-09T14:13:16Z'"),
    "wheel_ref": pattern(WHEEL_REF_RE, "'name.whl#sha256=<64 hex>'", 1000),
    "regex": Scalar("a valid regular expression", _regex, json=_STR),
    "source": Scalar("a source: an https:// URL, owner/repo:path[@commit], owner/repo#N, pypi:name==version, "
                     "wheel:file.whl or derived:… (see matrices/README.md)", _source,
                     json={"type": "string", "pattern": "^(?:" + "|".join(SOURCE_FORMS) + ")$"}),
    "as_str": Scalar("a value", lambda v: isinstance(v, (str, int, float, bool)), str,
                     json={"type": ["string", "integer", "number", "boolean"]}),
}


# -- checking --------------------------------------------------------------------------------------
def check(value: Any, spec: Any, key: str = "", strict: bool = True) -> Optional[Problem]:
    """The first place where ``value`` does not fit ``spec``: ``(key path, message)``, or ``None``.

    ``None`` (absent) fits any spec at the top and inside tables; see the module docstring.
    """
    try:
        _walk(value, spec, key, strict, False)
    except _Misfit as exc:
        return exc.key, exc.message
    except RecursionError:
        return key, "nested too deeply"
    return None


def validate(value: Any, spec: Any, path: object, key: str = "", strict: bool = True, freeze: bool = False) -> Any:
    """``value`` checked against ``spec`` and converted (with ``freeze``, lists become tuples).

    Raises:
        DataFileError: the first problem, naming ``path`` and the key path inside it.
    """
    try:
        return _walk(value, spec, key, strict, freeze)
    except _Misfit as exc:
        raise DataFileError(path, exc.key, exc.message) from None
    except RecursionError:
        raise DataFileError(path, key, "nested too deeply") from None


class _Misfit(Exception):
    def __init__(self, key: str, message: str):
        self.key = key
        self.message = message


def _walk(value: Any, spec: Any, key: str, strict: bool, freeze: bool) -> Any:
    if isinstance(spec, str):
        spec = TYPES[spec]
    if isinstance(spec, Scalar):
        ok = spec.test(value)
        if ok is not True:
            raise _Misfit(key, ok if isinstance(ok, str) and ok else f"expected {spec.what}, got {describe(value)}")
        return spec.convert(value) if spec.convert else value
    if isinstance(spec, Required):
        spec = spec.spec
        return _walk(value, spec, key, strict, freeze)
    if isinstance(spec, dict):
        spec = Table(spec, unknown="allow")
    if isinstance(spec, Table):
        return _table(value, spec, key, strict, freeze)
    assert isinstance(spec, _Of), spec
    kind = spec.kind
    if kind == "nullable":
        return None if value is None else _walk(value, spec.spec, key, strict, freeze)
    if kind == "enum":
        if value in spec.values and not isinstance(value, bool):
            return value
        raise _Misfit(key, f"expected one of {', '.join(map(str, spec.values))}, got {value!r}"[:200])
    if kind == "one_or_list":
        if not isinstance(value, list):
            one = _walk(value, spec.spec, key, strict, freeze)
            return (one,) if freeze else one
        kind = "list"
    if kind == "list":
        if not isinstance(value, list):
            raise _Misfit(key, f"expected a list, got {describe(value)}")
        if spec.max_items and len(value) > spec.max_items:
            raise _Misfit(key, f"{len(value)} items, more than the {spec.max_items} allowed")
        out = []
        nullable_items = isinstance(spec.spec, _Of) and spec.spec.kind == "nullable"
        for i, item in enumerate(value):
            if item is None and not nullable_items:
                raise _Misfit(f"{key}[{i}]", "expected a value, got null")
            out.append(_walk(item, spec.spec, f"{key}[{i}]", strict, freeze))
        return tuple(out) if freeze else out
    # map
    if not isinstance(value, dict):
        raise _Misfit(key, f"expected a table, got {describe(value)}")
    nullable_items = isinstance(spec.spec, _Of) and spec.spec.kind == "nullable"
    result = {}
    for k, item in value.items():
        if spec.keys is not None:
            try:
                _walk(k, spec.keys, "", strict, False)
            except _Misfit:
                raise _Misfit(_join(key, k), f"unknown key; a key here is {_what(spec.keys)}") from None
        if item is None and not nullable_items:
            raise _Misfit(_join(key, k), "expected a value, got null")
        result[k] = _walk(item, spec.spec, _join(key, k), strict, freeze)
    return result


def _table(value: Any, spec: Table, key: str, strict: bool, freeze: bool) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise _Misfit(key, f"expected a table, got {describe(value)}")
    out: Dict[str, Any] = {}
    for name, sub in spec.fields.items():
        item = value.get(name)
        if item is None:
            if isinstance(sub, Required):
                inner = sub.spec
                hint = f": {inner.what}" if isinstance(inner, Table) and inner.what else ""
                raise _Misfit(_join(key, name), f"missing (required){hint}")
            continue
        out[name] = _walk(item, sub, _join(key, name), strict, freeze)
    if len(out) != len(value):
        for name, item in value.items():
            if name in spec.fields or item is None:
                continue
            if spec.unknown == "error" or (spec.unknown == "strict" and strict):
                raise _Misfit(_join(key, name),
                              f"unknown {spec.noun}; known {spec.noun}s: {', '.join(spec.fields)}"[:1000])
            if spec.unknown == "strict":
                continue  # a newer file's key, left out of what the reader gets
            out[name] = _walk(item, spec.extra, _join(key, name), strict, freeze)
    if spec.rule is not None:
        problem = spec.rule(out)
        if problem:
            raise _Misfit(key + problem[0], problem[1])
    return out


def _what(spec: Any) -> str:
    spec = TYPES.get(spec, spec) if isinstance(spec, str) else spec
    return spec.what if isinstance(spec, Scalar) else "of another form"


def _join(key: str, name: object) -> str:
    return f"{key}.{_keyname(name)}" if key else _keyname(name)


def _keyname(name: object) -> str:
    """A key from a file as a path part: printed as is when it is short printable text, else escaped
    and cut (a key can hold a line break or an escape sequence; the message stays one safe line)."""
    text_ = str(name)
    if len(text_) <= 64 and printable_line(text_):
        return text_
    shown = ascii(text_)[1:-1]
    return shown[:64] + ("..." if len(shown) > 64 else "")


def describe(v: Any) -> str:
    """``a string "x"``, ``an integer 3``: the kind and (shortened) value for a message."""
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(v), type(v).__name__)
    if isinstance(v, (dict, list)):
        return kind
    import json  # only for a message
    import math

    try:
        shown = json.dumps(v, ensure_ascii=True) if not isinstance(v, float) or math.isfinite(v) else repr(v)
    except (TypeError, ValueError):
        shown = ascii(v)
    return f"{kind} {shown if len(shown) <= 60 else shown[:57] + '...'}"


# -- shared rules and free-form parts ------------------------------------------------------------
def arch_fits_vendor(gpu: Mapping[str, Any]) -> Optional[Problem]:
    """A GPU's arch is spelled as its vendor spells it (``sm_89`` NVIDIA, ``gfx1100`` AMD…): the rule
    of a GPU row in the matrix and of a GPU in a machine file."""
    vendor, arch = gpu.get("vendor"), gpu.get("arch")
    prefix = ARCH_PREFIX.get(str(vendor))
    if prefix and isinstance(arch, str) and not arch.startswith(prefix):
        return ".arch", f"a {vendor} GPU's arch starts with {prefix}, got {arch!r}"
    return None



def plain(max_len: int = 1000, depth: int = 8) -> Scalar:
    """Any nested tables/lists whose keys and strings are printable text on one line (keys ≤ 64
    characters, strings ≤ ``max_len``), nested at most ``depth`` levels."""
    from envcheck.edge import printable_line

    def ok(v: Any, d: int = 0) -> bool:
        if d > depth:
            return False
        if isinstance(v, dict):
            return all(isinstance(k, str) and len(k) <= 64 and printable_line(k) and ok(x, d + 1) for k, x in v.items())
        if isinstance(v, list):
            return all(ok(x, d + 1) for x in v)
        if isinstance(v, str):
            return len(v) <= max_len and printable_line(v)
        return v is None or isinstance(v, (bool, int, float))

    return Scalar(f"plain data (printable one-line strings of at most {max_len} characters, "
                  f"nested at most {depth} deep)", ok)


# -- the same specs as JSON Schema ---------------------------------------------------------------
def json_schema(spec: Any, title: str = "") -> Dict[str, Any]:
    """A JSON Schema (draft 2020-12) of ``spec``, for editors and other tools: it accepts everything
    :func:`check` accepts and refuses what a JSON Schema can say (types, required keys, unknown keys,
    enums, patterns, sizes). Cross-field rules and tests without a JSON form (a PEP 440 version, a
    regular expression that compiles, printable text) stay envcheck's own; ``null`` is allowed where
    a table treats it as absent."""
    out = _json(spec)
    if title:
        out = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title, **out}
    return out


def _or_null(js: Dict[str, Any]) -> Dict[str, Any]:
    return {"anyOf": [js, {"type": "null"}]} if js else js


def _json(spec: Any) -> Dict[str, Any]:
    if isinstance(spec, str):
        spec = TYPES[spec]
    if isinstance(spec, Scalar):
        return dict(spec.json or {})
    if isinstance(spec, Required):
        return _json(spec.spec)
    if isinstance(spec, dict):
        spec = Table(spec, unknown="allow")
    if isinstance(spec, Table):
        props = {k: _json(v) if isinstance(v, Required) else _or_null(_json(v)) for k, v in spec.fields.items()}
        out: Dict[str, Any] = {"type": "object", "properties": props}
        if spec.required():
            out["required"] = list(spec.required())
        if spec.unknown == "error":
            out["additionalProperties"] = False
        elif spec.extra != "any" and spec.unknown == "allow":
            out["additionalProperties"] = _or_null(_json(spec.extra))
        return out
    assert isinstance(spec, _Of), spec
    if spec.kind == "nullable":
        return _or_null(_json(spec.spec))
    if spec.kind == "enum":
        return {"enum": list(spec.values)}
    item = _json(spec.spec)
    if spec.kind == "one_or_list":
        return {"anyOf": [item, {"type": "array", "items": item}]}
    if spec.kind == "list":
        out = {"type": "array", "items": item}
        if spec.max_items:
            out["maxItems"] = spec.max_items
        return out
    out = {"type": "object", "additionalProperties": item}
    if spec.keys is not None:
        out["propertyNames"] = _json(spec.keys)
    return out
