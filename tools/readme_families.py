"""Regenerate README.md's message-family table from `envcheck explain --list` (the code's own words).

The table sits between ``<!-- families:begin -->`` and ``<!-- families:end -->``; its fixes name the
builds the resolver picks today, so it goes stale when the data moves — tests/structure/
test_readme_families.py fails then, and this script rewrites it:

    python tools/readme_families.py          # rewrite the table in place
    python tools/readme_families.py --check  # exit 1 when README differs
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BEGIN, END = "<!-- families:begin -->", "<!-- families:end -->"
WIDTH = 170


def _cell(text: str, limit: int = WIDTH) -> str:
    text = re.sub(r"\s+", " ", text).strip().replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    """Up to the first ``. `` or ``; `` outside a `code span`."""
    for m in re.finditer(r"(?<=[.;])\s", text):
        if text[: m.start()].count("`") % 2 == 0:
            return text[: m.start()]
    return text


def table() -> str:
    sys.path.insert(0, str(ROOT))
    from envcheck.app.explain import families

    rows: List[str] = ["| family | evidence (the message) | cause | fix | source |", "|---|---|---|---|---|"]
    for f in families():
        rows.append("| " + " | ".join([f"`{f['family']}`", _cell(f["evidence"].removeprefix("message: ")),
                                       _cell(_first_sentence(f["cause"])), _cell(f["fix"]),
                                       _cell(f["source"][0] if f["source"] else "")]) + " |")
    return "\n".join(rows) + "\n"


def rewritten(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + table() + text[end:]


def main(argv: List[str]) -> int:
    text = README.read_text(encoding="utf-8")
    new = rewritten(text)
    if "--check" in argv:
        if new != text:
            print("README.md: the message-family table differs from `envcheck explain --list`; "
                  "run python tools/readme_families.py")
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
