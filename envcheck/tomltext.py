"""``tomli_w.dumps(doc)``'s bytes for plain data, without importing tomli_w (which imports datetime
and math: ~3 ms of every ``plan -o DIR``, #9).

tomli_w stays envcheck's TOML writer: this writes only what a lock holds — tables, lists, strings,
booleans, integers and floats, string keys — the way tomli_w lays them out (its defaults: no
multi-line strings, an indent of 4), and hands any other document to tomli_w itself.
tests/plan/test_tomltext.py holds the two byte-equal (generated documents and every golden plan's lock).

How tomli_w lays a table out: a header (``[a.b]``, or ``[[a.b]]`` for a table of an array of tables)
when the table has plain keys or no sub-tables; its plain keys (``key = value``, in order); then each
sub-table, after a blank line. A non-empty list whose items are all tables is an array of tables
unless every item fits on one inline line (``{ k = v, … }``, with the indent and a comma at most 100
characters, no line break in it). Any other list is written one item a line, indented, with a
trailing comma; an inline table's lists start again at the first indent.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List

__all__ = ["toml_text"]

_INDENT = "    "
_LINE = 100  # the longest inline table tomli_w puts in an array (with its indent and comma)
_BARE_KEY = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
#: what a basic string escapes: quote, backslash and the control characters but tab
_ESCAPES = {**{c: f"\\u{c:04x}" for c in (*range(32), 127) if c != 9},
            8: "\\b", 10: "\\n", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\"}


class _NotPlain(Exception):
    """A value this module leaves to tomli_w."""


def toml_text(doc: Dict[str, object]) -> str:
    """``tomli_w.dumps(doc)``: the same text, from the plain values above (anything else: tomli_w's own
    answer or error)."""
    out: List[str] = []
    try:
        _table(doc, "", False, out)
    except (_NotPlain, RecursionError):
        import tomli_w

        return tomli_w.dumps(doc)
    return "".join(out)


def _table(table: object, name: str, in_array: bool, out: List[str]) -> None:
    if not isinstance(table, dict):
        raise _NotPlain
    plain = []
    tables = []
    for key, value in table.items():
        if isinstance(value, dict):
            tables.append((key, value, False))
        elif _array_of_tables(value):
            tables.extend((key, item, True) for item in value)
        else:
            plain.append((key, value))
    written = False
    if in_array or (name and (plain or not tables)):
        out.append(f"[[{name}]]\n" if in_array else f"[{name}]\n")
        written = True
    for key, value in plain:
        out.append(f"{_key(key)} = {_value(value, 0)}\n")
        written = True
    for key, value, in_array_of_tables in tables:
        if written:
            out.append("\n")
        written = True
        _table(value, f"{name}.{_key(key)}" if name else _key(key), in_array_of_tables, out)


def _array_of_tables(value: object) -> bool:
    """A non-empty list of tables that do not all fit on one inline line each."""
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, dict) for v in value):
        return False
    return not all(len(f"{_INDENT}{_inline_table(v)},") <= _LINE and "\n" not in _inline_table(v) for v in value)


def _value(value: object, depth: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        items = ",\n".join(_INDENT * (depth + 1) + _value(v, depth + 1) for v in value)
        return f"[\n{items},\n{_INDENT * depth}]"
    if isinstance(value, dict):
        return _inline_table(value)
    raise _NotPlain


def _inline_table(table: Dict[object, object]) -> str:
    if not table:
        return "{}"
    return "{ " + ", ".join(f"{_key(k)} = {_value(v, 0)}" for k, v in table.items()) + " }"


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise _NotPlain
    return key if key and _BARE_KEY.issuperset(key) else _string(key)


def _string(text: str) -> str:
    return '"' + text.translate(_ESCAPES) + '"'
