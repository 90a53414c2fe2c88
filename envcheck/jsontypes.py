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
