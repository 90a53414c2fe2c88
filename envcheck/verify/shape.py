"""The shape of JSON documents envcheck reads back (facts, collector lines): a tiny spec language.

A spec is a scalar tag (:data:`SCALARS`), ``{key: spec}`` (an object: those keys, when present and
not null, have that shape; other keys are free), ``("list", spec)`` (items never null),
``("map", spec)`` (any keys, values of that shape), ``("nullable", spec)`` or
``("enum", (values…))``. :func:`shape_problem` names the first place a value does not fit.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Dict, Optional, Tuple


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _version(v: Any) -> bool:
    from envcheck.matrix.model import vkey

    if not isinstance(v, str) or len(v) > 64:
        return False
    try:
        vkey(v)
    except ValueError:
        return False
    return True


#: Scalar tags: (test, what the error message says was expected).
SCALARS: Dict[str, Tuple[Callable[[Any], bool], str]] = {
    "str": (lambda v: isinstance(v, str), "a string"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2 ** 63, "an integer"),
    "num": (_finite, "a finite number"),
    "secs": (lambda v: _finite(v) and v >= 0, "a number of seconds ≥ 0"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "version": (_version, "a version string such as '2.39' or '570.86.16'"),
    "python": (lambda v: isinstance(v, str) and re.match(r"\d+\.\d+(?!\d)", v) is not None,
               "a Python version such as '3.12.9'"),
    "capability": (lambda v: isinstance(v, list) and len(v) == 2 and all(
        isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1000 for x in v),
        "[major, minor]: two integers such as [8, 9]"),
}


def list_of(spec: Any) -> Tuple[str, Any]:
    return ("list", spec)


def map_of(spec: Any) -> Tuple[str, Any]:
    return ("map", spec)


def nullable(spec: Any) -> Tuple[str, Any]:
    return ("nullable", spec)


def enum(*values: Any) -> Tuple[str, Any]:
    return ("enum", tuple(values))


def shape_problem(value: Any, spec: Any, key: str = "") -> Optional[Tuple[str, str]]:
    """The first place where ``value`` does not have the shape ``spec``: ``(key path, message)``.

    ``None`` (absent) fits any spec at the top and inside objects; list items must not be null.
    """
    if value is None:
        return None
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return key, f"expected an object, got {_kind(value)}"
        for k, sub in spec.items():
            problem = shape_problem(value.get(k), sub, f"{key}.{k}")
            if problem:
                return problem
        return None
    if isinstance(spec, tuple):
        kind, sub = spec
        if kind == "nullable":
            return shape_problem(value, sub, key)
        if kind == "enum":
            return None if value in sub and not isinstance(value, bool) else (
                key, f"expected one of {', '.join(map(str, sub))}, got {value!r}"[:200])
        if kind == "list":
            if not isinstance(value, list):
                return key, f"expected a list, got {_kind(value)}"
            for i, item in enumerate(value):
                if item is None:
                    return f"{key}[{i}]", "expected a value, got null"
                problem = shape_problem(item, sub, f"{key}[{i}]")
                if problem:
                    return problem
            return None
        if kind == "map":
            if not isinstance(value, dict):
                return key, f"expected an object, got {_kind(value)}"
            for k, item in value.items():
                if item is None and not (isinstance(sub, tuple) and sub[0] == "nullable"):
                    return f"{key}.{k}", "expected a value, got null"
                problem = shape_problem(item, sub, f"{key}.{k}")
                if problem:
                    return problem
            return None
    test, what = SCALARS[spec]
    if not test(value):
        return key, f"expected {what}, got {_kind(value)} {_short(value)}"
    return None


def _kind(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(v), type(v).__name__)


def _short(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, float) or math.isfinite(v) else repr(v)
    return text if len(text) <= 60 else text[:57] + "..."
