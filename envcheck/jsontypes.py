"""The type of plain data: what JSON and TOML documents hold before a schema has checked them.

Used in public signatures instead of ``typing.Any`` (``tools/public_any.py`` keeps the core model
packages free of it), so a reader sees "plain data, validated where read" rather than "anything".
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Union, cast

    #: a JSON/TOML value (TOML dates arrive as strings here: envcheck's files hold none)
    JSON = Union[None, bool, int, float, str, List["JSON"], Dict[str, "JSON"]]
    #: a JSON object / TOML table
    JSONObject = Dict[str, JSON]
else:
    # At run time these names only appear in annotations (strings: ``from __future__ import
    # annotations``) and as ``cast(JSON, value)``, which ignores its type: typing's recursive alias
    # (forward references compiled on first use) cost ~1.5 ms of every start (issue #9).
    JSON = object
    JSONObject = dict

    def cast(_type: object, value: object) -> object:
        """``typing.cast`` at run time: the value itself (typing is not imported on a start's way, #9)."""
        return value


def json_string(text: str) -> str:
    """``text`` as a JSON string (a Dockerfile LABEL value, a YAML double-quoted scalar, a name in a
    write's journal): ``json.dumps``, which is imported only for text that needs escaping (plain
    ASCII is ``"text"`` as it is; the json package costs ~2 ms of a start, #9)."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    import json

    return json.dumps(text)


def json_text(doc: object) -> str:
    """``json.dumps(doc, indent=2)``, the same bytes, about three times as fast, without importing
    the json package: with an indent, json encodes in Python through nested generators (~15 ms for
    the ~600 KB of ``plan --gpu V100 --json``, #9); this appends the same pieces to one list. Strings
    are escaped by json's own C function (``_json``). A value json would treat in a way not written
    out here (a key that is not a string, a type outside JSON) is handed to ``json.dumps`` itself,
    which answers or raises as it always does (tests/plan/test_json_text.py holds the two equal)."""
    try:
        from _json import encode_basestring_ascii as quote
    except ImportError:  # pragma: no cover (a Python without json's C part)
        import json

        return json.dumps(doc, indent=2)
    out: List[str] = []
    add = out.append

    def write(value: object, pad: str) -> None:
        if isinstance(value, str):
            add(quote(value))
        elif value is None:
            add("null")
        elif value is True:
            add("true")
        elif value is False:
            add("false")
        elif isinstance(value, int):
            add(int.__repr__(value))
        elif isinstance(value, float):
            add(_float_text(value))
        elif isinstance(value, dict):
            if not value:
                add("{}")
                return
            inner = pad + "  "
            sep = "{\n" + inner
            for key, item in value.items():
                if not isinstance(key, str):
                    raise _NotWritten
                add(sep)
                add(quote(key))
                add(": ")
                write(item, inner)
                sep = ",\n" + inner
            add("\n" + pad + "}")
        elif isinstance(value, (list, tuple)):
            if not value:
                add("[]")
                return
            inner = pad + "  "
            sep = "[\n" + inner
            for item in value:
                add(sep)
                write(item, inner)
                sep = ",\n" + inner
            add("\n" + pad + "]")
        else:
            raise _NotWritten

    try:
        write(doc, "")
    except (_NotWritten, RecursionError):
        import json

        return json.dumps(doc, indent=2)
    return "".join(out)


class _NotWritten(Exception):
    """A value :func:`json_text` leaves to ``json.dumps``."""


def _float_text(value: float) -> str:
    """A float as json writes it: ``repr``, and ``NaN``/``Infinity``/``-Infinity`` (allow_nan)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)
