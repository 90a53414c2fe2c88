"""Golden files: the exact bytes a command prints, stored so a change shows as a reviewed diff.

A ``plan --json`` output is ~0.5 MB, almost all of it ~1200 candidates that share a few dozen
reason sentences. The golden file keeps it exact but readable: the head of the object pretty-printed,
each distinct reason/warning object once in ``items``, and one line per candidate (its values in
the order of ``fields``) whose ``reasons``/``warnings`` are indexes into ``items``. :func:`expand` rebuilds the object and the test
compares ``json.dumps(expand(g), indent=2) + "\\n"`` with stdout byte for byte.

Regenerate after a deliberate change of answers (and say why in the commit)::

    ENVCHECK_UPDATE_GOLDEN=1 pytest tests/golden -q -p no:cacheprovider
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

UPDATE_ENV = "ENVCHECK_UPDATE_GOLDEN"
LIST_KEYS = ("reasons", "warnings")


def updating() -> bool:
    return os.environ.get(UPDATE_ENV, "") not in ("", "0")


def compact(args: List[str], code: int, out: Dict[str, Any]) -> Dict[str, Any]:
    """The golden form of one ``plan --json`` object (see the module docstring)."""
    items: List[Dict[str, Any]] = []
    index: Dict[str, int] = {}

    def ref(item: Dict[str, Any]) -> int:
        key = json.dumps(item, sort_keys=False)
        if key not in index:
            index[key] = len(items)
            items.append(item)
        return index[key]

    rows = []
    for cand in out.get("candidates", []):
        row = dict(cand)
        for k in LIST_KEYS:
            if k in row:
                row[k] = [ref(x) for x in row[k]]
        rows.append(row)
    fields = list(rows[0]) if rows else []
    rows = [list(r.values()) if list(r) == fields else r for r in rows]
    head = {k: v for k, v in out.items() if k != "candidates"}
    return {"args": args, "exit": code, "head": head, "candidate_keys": list(out).index("candidates")
            if "candidates" in out else None, "fields": fields, "items": items, "candidates": rows}


def expand(golden: Dict[str, Any]) -> Dict[str, Any]:
    """The ``plan --json`` object a golden file stands for."""
    items = golden["items"]
    cands = []
    for row in golden["candidates"]:
        cand = dict(zip(golden["fields"], row)) if isinstance(row, list) else dict(row)
        for k in LIST_KEYS:
            if k in cand:
                cand[k] = [items[i] for i in cand[k]]
        cands.append(cand)
    pairs = list(golden["head"].items())
    pos = golden["candidate_keys"]
    if pos is not None:
        pairs.insert(pos, ("candidates", cands))
    return dict(pairs)


def dumps(golden: Dict[str, Any]) -> str:
    """Write a golden file: the head indented, one line per item and per candidate."""
    lines = ["{"]
    for key in ("args", "exit", "candidate_keys", "fields"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(golden[key], ensure_ascii=False)},")
    head = json.dumps(golden["head"], indent=2, ensure_ascii=False).replace("\n", "\n  ")
    lines.append(f'  "head": {head},')
    for key in ("items", "candidates"):
        rows = golden[key]
        lines.append(f"  {json.dumps(key)}: [")
        for i, row in enumerate(rows):
            comma = "," if i < len(rows) - 1 else ""
            lines.append("    " + json.dumps(row, ensure_ascii=False) + comma)
        lines.append("  ]" + ("," if key == "items" else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def load(path: Path) -> Dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))
