"""CI-native results: GitHub Actions workflow commands and the job summary.

Under ``GITHUB_ACTIONS=true``: ``::error::``/``::warning::`` lines on stdout become annotations on
the run (https://docs.github.com/actions/reference/workflow-commands-for-github-actions), and
markdown appended to the file named by ``$GITHUB_STEP_SUMMARY`` shows on the run's summary page.
Outside GitHub Actions every function here does nothing. With ``--json`` the annotations go to
stderr (the runner reads both streams), so stdout stays one JSON document.
"""

from __future__ import annotations

import os
import sys
TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:
    from typing import Iterable, Mapping, Optional, Sequence, TextIO

__all__ = ["in_github_actions", "annotate", "escape_data", "escape_property", "write_summary", "markdown_table"]


def in_github_actions(environ: Optional[Mapping[str, str]] = None) -> bool:
    return (environ if environ is not None else os.environ).get("GITHUB_ACTIONS", "").lower() == "true"


def escape_data(text: str) -> str:
    """Workflow-command message escaping (``%``, CR, LF), as actions/toolkit's ``escapeData``."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Property escaping (also ``:`` and ``,``), as actions/toolkit's ``escapeProperty``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


#: commands set ``JSON_MODE`` so annotations leave stdout alone
JSON_MODE = {"on": False}


def annotate(level: str, message: str, title: str = "", file: str = "") -> None:
    """``::error title=…::message`` (level: error, warning, notice) when running in GitHub Actions."""
    if not in_github_actions():
        return
    props = ",".join(f"{k}={escape_property(v)}" for k, v in (("title", title), ("file", file)) if v)
    line = f"::{level}{' ' + props if props else ''}::{escape_data(message)}\n"
    (sys.stderr if JSON_MODE["on"] else sys.stdout).write(line)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    def cell(v: str) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def write_summary(markdown: str) -> bool:
    """Append to ``$GITHUB_STEP_SUMMARY`` under GitHub Actions; ``True`` when written."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not in_github_actions() or not path:
        return False
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(markdown if markdown.endswith("\n") else markdown + "\n")
    except OSError as exc:
        from envcheck.fsutil import shown

        sys.stderr.write(f"envcheck: warning: cannot write the job summary {shown(path)}: {exc.strerror or exc}\n")
        return False
    return True


def verify_results(checks: Sequence[object], title: str) -> int:
    """Under GitHub Actions: an ``::error``/``::warning`` per failed/warned check and a job-summary
    table of every check. Returns the number of warnings (for ``--strict``), in or out of CI."""
    warned = sum(1 for c in checks if getattr(c, "status", "") == "warn")
    if not in_github_actions():
        return warned
    for c in checks:
        status = getattr(c, "status", "")
        if status in ("fail", "warn"):
            fix = getattr(c, "fix", "") or ""
            msg = (getattr(c, "detail", "") or status) + (f" — fix: {fix}" if fix else "")
            annotate("error" if status == "fail" else "warning", msg, title=f"envcheck verify: {getattr(c, 'name', '?')}")
    icon = {"pass": "✅", "fail": "❌", "warn": "⚠️", "skip": "⏭️"}
    counts = {s: sum(1 for c in checks if getattr(c, "status", "") == s) for s in icon}
    head = f"### envcheck verify — {title}\n\n" + ", ".join(f"{n} {s}" for s, n in counts.items() if n) + "\n\n"
    rows = [(f"{icon.get(getattr(c, 'status', ''), '')} {getattr(c, 'status', '')}", getattr(c, "name", ""),
             getattr(c, "detail", "") or "", getattr(c, "fix", "") or "") for c in checks]
    write_summary(head + markdown_table(["status", "check", "detail", "fix"], rows))
    return warned


def progress_allowed(stream: Optional[TextIO] = None, environ: Optional[Mapping[str, str]] = None) -> bool:
    """Progress displays only on a terminal and never under CI (``CI`` set, as GitHub Actions, GitLab
    and most Dockerfiles do), nor with ``TERM=dumb``: the one rule every progress display follows."""
    env = environ if environ is not None else os.environ
    out = stream if stream is not None else sys.stderr
    if env.get("CI", "").lower() not in ("", "0", "false") or env.get("TERM") == "dumb":
        return False
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False
