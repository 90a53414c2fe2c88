"""Terminal output shared by the commands: one rich Console policy."""

from __future__ import annotations

import sys
from typing import Any, Optional, TextIO

#: Columns used when output goes to a file or pipe (no terminal to size to): wide enough that
#: tables do not fold words, so `envcheck gpus | grep` sees whole rows.
PIPE_WIDTH = 200


def console(file: Optional[TextIO] = None, stderr: bool = False) -> Any:
    """A rich Console: terminal width on a TTY, :data:`PIPE_WIDTH` otherwise; no syntax colouring."""
    from rich.console import Console

    out = file or (sys.stderr if stderr else sys.stdout)
    tty = hasattr(out, "isatty") and out.isatty()
    return Console(file=out, highlight=False, width=None if tty else PIPE_WIDTH)
