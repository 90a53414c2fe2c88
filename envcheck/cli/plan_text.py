"""Human-readable output of ``envcheck plan``."""

from __future__ import annotations

import sys
from collections import Counter, OrderedDict
from typing import Any, Dict, List, Optional, TextIO

from envcheck.render.common import driver_line
from envcheck.resolve.rules import name_of


def wrap(line: str, indent: int) -> str:
    """``line`` wrapped to the terminal's width (continuation lines indented by ``indent``)."""
    import shutil
    import textwrap

    width = max(60, shutil.get_terminal_size((100, 24)).columns - 1)
    if len(line) <= width:
        return line + "\n"
    lead = len(line) - len(line.lstrip("\n"))
    body = line[lead:]
    return "\n" * lead + "\n".join(textwrap.wrap(body, width, subsequent_indent=" " * indent,
                                                 break_long_words=False, break_on_hyphens=False)) + "\n"


def _summary_by_code(res: Any) -> List[str]:
    """One line per reason code: how many candidates it rejected, and the newest example."""
    counts: Counter = Counter()
    example: Dict[str, str] = {}
    closest: Dict[str, int] = {}
    for c in res.rejected:  # the example is the nearest miss: fewest other reasons, newest first
        for code in dict.fromkeys(r.code for r in c.reasons):
            counts[code] += 1
            if code not in example or len(c.reasons) < closest[code]:
                example[code] = next(r.message for r in c.reasons if r.code == code)
                closest[code] = len(c.reasons)
    width = max((len(k) for k in counts), default=0)
    return [f"  {code:<{width}}  {n:>5}  e.g. {example[code]}" for code, n in counts.most_common()]


def explain_rows(res: Any) -> OrderedDict[str, Dict[str, Any]]:
    """Candidates folded per build (release × variant × channel): Pythons, status, reasons."""
    rows: OrderedDict[str, Dict[str, Any]] = OrderedDict()
    from envcheck.matrix.model import vkey

    for c in sorted(res.candidates, key=lambda c: vkey(c.release.version), reverse=True):
        key = f"{c.release.version}|{c.build.variant}|{c.build.channel}"
        row = rows.setdefault(key, {"name": name_of(c), "ok": [], "no": [], "reasons": OrderedDict(),
                                    "warnings": OrderedDict()})
        (row["ok"] if c.accepted else row["no"]).append(c.python or "-")
        for r in c.reasons:
            row["reasons"].setdefault(f"[{r.code}] {r.message}", None)
        for w in c.warnings:
            row["warnings"].setdefault(f"[{w.code}] {w.message}", None)
    return rows


def print_explain(res: Any, out: TextIO) -> None:
    from rich.table import Table

    from envcheck.cli.output import console

    table = Table(title="every candidate (Pythons folded per build)", show_lines=False, expand=False)
    table.add_column("build", no_wrap=True)
    table.add_column("fits for", no_wrap=True)
    table.add_column("reasons / caveats")
    for row in explain_rows(res).values():
        ok = ", ".join(p for p in row["ok"]) or "—"
        why = list(row["reasons"]) if not row["ok"] else list(row["warnings"])
        if row["ok"] and row["no"]:
            why = list(row["warnings"]) + [f"(not for Python {', '.join(row['no'])}: " + "; ".join(row["reasons"]) + ")"]
        table.add_row(row["name"], ok, "\n".join(why) or "fits")
    console(out).print(table)
    from envcheck.resolve import RANKING_RULE

    out.write(f"\nhow the choice is made: {RANKING_RULE}\n")


def print_plan(res: Any, plan: Any, written: List[str], explain: bool = False,
               wrote_dir: Optional[Any] = None, out: Optional[TextIO] = None) -> None:
    out = out or sys.stdout
    w = out.write
    w(f"envcheck plan — {res.machine.describe()}\n\n")
    if explain:
        print_explain(res, out)
        w("\n")
    if plan is None:
        status = {"no_official_build": "no official PyTorch build serves this machine's GPU",
                  "no_build": "no PyTorch build fits this machine"}.get(res.status, res.status)
        w(f"  {status} ({len(res.candidates)} candidates checked, none fits)\n\n")
        w("  why not:\n")
        for line in _summary_by_code(res):
            w(line + "\n")
        if res.alternatives:
            w("\n  what you can do:\n")
            for a in res.alternatives:
                w(f"    - {a}\n")
        for a in res.assumptions:
            w(f"  assumed: {a}\n")
        w("\n  --explain lists every candidate with its reasons; --json prints them for machines\n")
        return
    c = plan.candidate
    from urllib.parse import urlsplit

    host = urlsplit(plan.index_url).netloc or plan.index_url
    via = "PyPI" if c.build.channel == "pypi" else host
    w(f"  {plan.title}   Python {plan.python or '(any)'}   from {via}\n")
    comp = "   ".join(f"{k} {v}" for k, v in plan.pins.items() if k != "torch")
    if comp:
        w(f"    with     {comp}\n")
    drv = driver_line(plan)
    if drv:
        w(f"    needs    {drv[len('needs '):]}\n")
    hosts = plan.hosts()
    if hosts:
        w(wrap(f"    hosts    a firewall must allow {', '.join(hosts)} (https)"
               + (" and, for the system steps, your distribution's package mirror" if any(
                   st.kind == "system" and "apt-get" in st.commands for st in plan.recipe) else ""), 13))
    for line in plan.mirror_report():
        w(wrap(f"    mirror   {line}", 13))
    for cw in c.warnings:
        w(wrap(f"    caveat   [{cw.code}] {cw.message}", 13))
    for a in res.assumptions:
        w(wrap(f"    assumed  {a}", 13))
    for n in plan.notes:
        w(wrap(f"    note     {n}", 13))
    for a in res.alternatives:
        w(wrap(f"    or       {a}", 13))
    total = len(plan.recipe)
    w(f"\n  recipe ({total} steps, in order; --format script writes them as install.sh / install.ps1):\n")
    for i, st in enumerate(plan.recipe, 1):
        w(wrap(f"  {i:>2}. {st.marker} — {st.title}  [{st.where}]", 6))
        if st.url:
            w(f"      page: {st.url}\n")
        lines = st.lines()
        if len(lines) > 1 and st.kind == "post-install":  # a subshell: a `cd` in the step stays there
            w("      (\n" + "".join(f"        {ln.strip()}\n" for ln in lines) + "      )\n")
        else:
            for ln in lines:
                w(f"      $ {ln.strip()}\n")
        if st.check and st.shell == "manual":
            w(f"      check: {st.check.strip()}\n")
    if explain:
        w(f"\n  rejected ({len(res.rejected)} of {len(res.candidates)} candidates; one can fail several ways):\n")
        for line in _summary_by_code(res):
            w(line + "\n")
    else:
        w(f"\n  {len(res.rejected)} of {len(res.candidates)} candidates rejected; --explain says why\n")
    if written:
        w(f"\n  wrote {', '.join(written)}\n")
    else:
        w(wrap("\n  -o DIR writes requirements.txt, environment.yml, Dockerfile and envcheck.lock.toml "
               "(--format all adds pyproject.uv.toml and install.sh); --explain lists every candidate; "
               "--json for machines", 2))
