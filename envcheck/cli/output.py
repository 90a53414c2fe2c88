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


# -- the verify report (``verify``, ``docker verify``, ``docker ci``) --------------------------------

class CheckProgress:
    """A one-line spinner on stderr while checks run (a terminal only, never under CI): which check
    is running. It appears with the first check, so the work before it shows nothing."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.status: Any = None

    @classmethod
    def for_stderr(cls, total: int) -> CheckProgress:
        """A spinner for ``total`` checks where progress may show, else one that shows nothing."""
        from envcheck.ci import progress_allowed

        return cls(total) if progress_allowed(sys.stderr) else _NoProgress(total)

    def __call__(self, name: str, run: Optional[dict]) -> None:
        if run is not None:
            self.done += 1
            return
        if self.status is None:
            from rich.console import Console

            self.status = Console(stderr=True).status("verify: starting the worker")
            self.status.start()
        self.status.update(f"verify: {name} ({self.done + 1}/{self.total})")

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _NoProgress(CheckProgress):
    def __enter__(self) -> Any:
        return None


STYLE = {"pass": "green", "fail": "bold red", "skip": "dim", "warn": "yellow"}


def verify_output(args: Any, result: Any) -> int:
    """Print a :class:`envcheck.app.verify.VerifyResult` (``--json``: its object) after the CI
    annotations; sets ``args.exit_code``/``args.warned`` and returns the exit code."""
    import json

    from envcheck.ci import verify_results

    args.exit_code = result.exit_code
    args.warned = int(getattr(args, "warned", 0) or 0) + verify_results(result.checks, result.title)
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_report(result.checks, result.facts, result.elapsed)
    return int(args.exit_code)


def print_report(results: Any, facts: Any, elapsed: float) -> None:
    """The verify report: a head line, one line per check (its fix under a failure or warning), the counts."""
    from rich.console import Console
    from rich.markup import escape

    con = Console(highlight=False, soft_wrap=True)
    py = facts.section("python")
    head = f"envcheck verify — {py.get('executable') or facts.section('collector').get('python') or '(saved facts)'}"
    if py.get("version"):
        head += f" (Python {py['version']})"
    if facts.torch_version:
        head += f", torch {facts.torch_version}"
    con.print(f"[bold]{escape(head)}[/bold]")
    width = max(len(c.name) for c in results)
    for c in results:
        secs = f"{c.seconds:6.2f} s" if c.seconds else " " * 8
        con.print(f" [{STYLE[c.status]}]{c.status.upper():4}[/] {c.name:<{width}} {secs}  {escape(c.detail)}")
        if c.fix and c.status in ("fail", "warn"):
            con.print(f"      {'':<{width}}           [bold]fix:[/bold] {escape(c.fix)}")
    counts = {s: sum(1 for c in results if c.status == s) for s in ("pass", "warn", "skip", "fail")}
    summary = (f"{len(results)} check{'s' if len(results) != 1 else ''}: {counts['pass']} passed, {counts['warn']} warning(s), "
               f"{counts['skip']} skipped, {counts['fail']} failed ({elapsed:.1f} s)")
    workers = facts.section("collector").get("workers")
    if workers and workers > 1:
        summary += f"; {workers} worker processes (a check hung or crashed)"
    con.print(summary)
    err = facts.section("collector").get("error")
    if err:
        con.print(f"[bold red]{escape(err)}[/]")
