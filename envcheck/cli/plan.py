"""``envcheck plan`` — resolve the compatibility matrix for a machine and write install specs."""

from __future__ import annotations

import argparse
import sys
from collections import Counter, OrderedDict

from envcheck.app.plan import plan_json  # noqa: F401 (the `plan --json` object; tests import it from here too)
from envcheck.cli.conventions import COMMAND_HELP, path_arg, path_text
from envcheck.cli.flags import (add_force, add_json, add_matrices, add_mirror, add_plan_arguments, add_timeout,
                                check_timeout, plan_request)
from envcheck.errors import UsageError

TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, TextIO

HELP = COMMAND_HELP["plan"]

EPILOG = """\
examples:
  envcheck plan --gpu 7900xtx --wsl                 Radeon RX 7900 XTX under WSL2
  envcheck plan --gpu "RTX 5090" --driver 570.124.06 --python 3.11
  envcheck plan --gpu "GTX 1080 Ti" -o out/         write requirements.txt, environment.yml,
                                                    Dockerfile and envcheck.lock.toml into out/
  envcheck plan --distro centos7 --gpu V100         glibc 2.17: only manylinux2014 wheels fit
  envcheck plan --backend cpu --torch 2.13.0        a CPU install of one release
  envcheck plan --machine node.toml                 a machine saved by `envcheck probe -o`

With no --gpu/--wsl/--os/--arch/--glibc/--distro/--machine, envcheck plans for the machine it runs
on (probe); --python and --driver then override single facts.

How the choice is made: every torch release × build × Python is checked against every
constraint (OS and CPU arch, Python, glibc vs the wheel's manylinux tag, the GPU's architecture vs
the build's kernel list, the driver vs the build's CUDA, WSL, macOS/MPS, --torch, --backend);
among the builds that pass, a complete, verified set (paired torchvision on record, no unverified
row) comes first — the newest release that has one beats a newer release without (--prefer newest
turns this off) — then the newest torch release, then the build that fits the hardware best.
--explain prints the whole rule and every candidate with every reason.

exit codes: 0 a build fits · 1 none fits (the reasons, counted with an example each;
--explain and --json list every candidate with its reasons) · 2 bad input · 3 could not run: a
tool it needs is missing or failed, or an index could not be reached (pip for --download, uv for
--format pylock, `matrix update` data for --hashes) — nothing was judged; try again when it is there
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("plan", help=HELP, description=HELP, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_plan_arguments(p)
    o = p.add_argument_group("output")
    o.add_argument("--format", default=None, metavar="LIST",
                   help="files to write with -o: pip (requirements.txt), conda (environment.yml), "
                        "docker (Dockerfile), lock (envcheck.lock.toml), uv (pyproject.uv.toml), script "
                        "(install.sh, or install.ps1 for Windows: the recipe as one runnable script), pixi (pixi.toml), "
                        "variants (variants.env, preview), pylock "
                        "(pylock.toml, PEP 751: resolved by uv for the target machine, reads the index) or all; "
                        "default: pip,conda,docker,lock. Without -o, the files are printed")
    o.add_argument("--style", choices=["full", "project"], default="full",
                   help="requirements.txt: full (a file of its own, --index-url) or project (only the torch "
                        "lines to add to an existing file, --extra-index-url so the rest still comes from PyPI)")
    o.add_argument("--extras", metavar="BACKENDS", default="",
                   help="uv: also offer these builds (cpu,cu130,rocm7.2…) as extras of one project, "
                        "declared conflicting (`uv sync --extra cpu`)")
    o.add_argument("--pin-python", action="store_true",
                   help="uv: requires-python for the planned Python only (default: as wide as the build allows)")
    o.add_argument("-o", "--output", metavar="DIR", type=path_text, help="write the files into DIR")
    add_force(o, "replace existing files in DIR")
    add_mirror(o)
    o.add_argument("--packages", metavar="LIST",
                   help="pin only these of torch, torchvision, torchaudio (e.g. torch): every output and "
                        "--download leave the others out")
    o.add_argument("--download", metavar="DIR", type=path_arg,
                   help="gather every wheel of the plan (torch, companions, their dependencies) into DIR/wheels "
                        "and write install.sh, requirements.txt, Dockerfile and envcheck.lock.toml beside it, "
                        "installing with --no-index from there (an air-gapped install: carry DIR over)")
    add_timeout(o, 600.0, "seconds the tools plan runs may take in all — uv for --format pylock, pip for "
                          "--download (default 600); past it they are stopped: exit 3")
    o.add_argument("--hashes", action="store_true",
                   help="pin every wheel of the chosen build with --hash=sha256:… (needs `envcheck matrix "
                        "update` data); install with `pip install --require-hashes --no-deps -r …` after "
                        "the dependencies, or lock those too (uv pip compile --generate-hashes)")
    add_json(o, "print the plan and every candidate as JSON")
    o.add_argument("--explain", action="store_true", help="list every candidate with its reasons")
    add_matrices(o)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from envcheck.app.plan import OutputRequest, make_outputs
    from envcheck.app.plan import plan as plan_use_case
    from envcheck.render import parse_formats
    from envcheck.resolve.plan import parse_mirrors

    args.format_given = args.format is not None
    formats = parse_formats(args.format or "pip,conda,docker,lock")
    # named one by one (not through `all` or the default set): one that cannot be made is an error
    named = {x.strip().lower() for x in (args.format or "").split(",")}
    explicit = [f for f in formats if f in named]
    parse_mirrors(args.mirror)  # bad --mirror values are refused before any work
    if args.output is not None and not args.output.strip():
        raise UsageError("-o: give a folder to write into (-o out/)")
    timeout = check_timeout(args.timeout)
    req = plan_request(args, hashes=args.hashes)
    result = plan_use_case(req)
    from envcheck.cli.conventions import note, warn
    from envcheck.matrix.freshness import staleness

    stale = staleness(result.matrix)
    if stale:
        warn(args, stale)

    def say(text: str) -> None:  # progress: a note (-q drops it; newcomer6 #7)
        if not args.json:
            note(args, text)

    made = make_outputs(result, req, OutputRequest(
        formats=formats, explicit=explicit, style=args.style, extras=args.extras, pin_python=args.pin_python, packages=args.packages,
        output=args.output, force=args.force, download=args.download, timeout=timeout,
        print_files=args.format_given and not args.json), say)
    plan = made.plan
    for name, why in made.skipped:
        note(args, f"note: {name} not made: {why}")
    if plan is not None:  # caveats are in the output already; --strict counts them, GitHub Actions shows them
        args.warned = int(getattr(args, "warned", 0) or 0) + len(plan.candidate.warnings)
    if plan is not None and plan.candidate.warnings:
        from envcheck.ci import JSON_MODE, annotate

        files_on_stdout = args.format_given and not args.output
        saved = JSON_MODE["on"]
        JSON_MODE["on"] = saved or files_on_stdout  # a printed requirements.txt stays clean: stderr then
        try:
            for w in plan.candidate.warnings:
                annotate("warning", f"[{w.code}] {w.message}", title=f"envcheck plan: {plan.title}")
        finally:
            JSON_MODE["on"] = saved
    args.exit_code = result.exit_code
    if args.json:
        import json

        from envcheck.cli.conventions import JSON_SCHEMAS

        # stamped here, so the ~1 MB document is not parsed again to put its schema first (stamp_json)
        doc = {"schema": JSON_SCHEMAS["plan"][0], **plan_json(result.resolution, plan, made.written)}
        # one string, one write: json.dump writes each of its pieces (~70,000 for V100) on its own
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif plan is not None and args.format_given and not args.output:
        for name, text in made.files.items():  # --format without -o: print the files
            if len(made.files) > 1:
                sys.stdout.write(f"==> {name} <==\n")
            sys.stdout.write(text)
    else:
        print_plan(result.resolution, plan, made.written, explain=args.explain)
    return result.exit_code


# -- the text output ----------------------------------------------------------------------------

def wrap(line: str, indent: int) -> str:
    """``line`` wrapped to the terminal's width (continuation lines indented by ``indent``)."""
    from envcheck.cli.conventions import terminal_columns

    width = max(60, terminal_columns(100) - 1)
    if len(line) <= width:
        return line + "\n"
    lead = len(line) - len(line.lstrip("\n"))
    body = line[lead:]
    return "\n" * lead + "\n".join(wrap_words(body, width, " " * indent)) + "\n"


#: what textwrap turns into a space before it splits a text into words and the spaces between them
_SPACES = str.maketrans("\t\n\x0b\x0c\r", "     ")


def wrap_words(text: str, width: int, indent: str) -> List[str]:
    """``textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False,
    break_on_hyphens=False)``: lines of whole words, as many as fit in ``width``, the spaces at the
    edges of each line dropped (but the first line's lead), a word longer than a line on a line of
    its own. (Written out: importing textwrap compiles its word-splitting patterns, ~1.2 ms of a
    plan's start, #9; tests/plan/test_wrap.py holds it to textwrap's lines.)"""
    import re

    chunks = [c for c in re.split(r"( +)", text.expandtabs().translate(_SPACES)) if c]
    chunks.reverse()  # taken from the end, as textwrap does
    lines: List[str] = []
    while chunks:
        prefix = indent if lines else ""
        room = width - len(prefix)
        if lines and chunks[-1].strip() == "":  # the space a line would start with
            del chunks[-1]
        line: List[str] = []
        used = 0
        while chunks and used + len(chunks[-1]) <= room:
            used += len(chunks[-1])
            line.append(chunks.pop())
        if chunks and len(chunks[-1]) > room and not line:  # a word longer than a line: whole, alone
            line.append(chunks.pop())
        if line and line[-1].strip() == "":  # the space it would end with
            del line[-1]
        if line:
            lines.append(prefix + "".join(line))
    return lines


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
    from envcheck.resolve.rules import name_of

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
               out: Optional[TextIO] = None) -> None:
    from envcheck.render.common import driver_line

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
    from envcheck.edge import netloc_of

    host = netloc_of(plan.index_url) or plan.index_url
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
    from envcheck.render.recipe import FIRST_STEP, pasteable_env, pasted_block
    from envcheck.resolve.recipe import LOCK_NAME

    first = pasteable_env(plan)
    if first:  # the steps' $VENV and python, as install.sh and the Dockerfile set them: pasteable as printed
        w(wrap(f"   0. {FIRST_STEP}", 6))
        for ln in first:
            w(f"      $ {ln}\n")
    for i, st in enumerate(plan.recipe, 1):
        w(wrap(f"  {i:>2}. {st.marker} — {st.title}  [{st.where}]", 6))
        if st.url:
            w(f"      page: {st.url}\n")
        # as pasted: a step that would leave the shell (exit) or move it (cd) runs in a subshell
        w("".join(ln + "\n" for ln in pasted_block(st)))
        if st.check and st.shell == "manual":
            w(f"      check: {st.check.strip()}\n")
        if st.kind == "verify" and not any(str(f).endswith(LOCK_NAME) for f in written):  # none was written
            w(wrap(f"      (it reads {LOCK_NAME} from the folder you run it in: -o DIR writes it there)", 7))
    from envcheck.render.recipe import persist_note, run_time_env

    keep = run_time_env(plan)
    if keep:
        w("\n" + wrap("  " + persist_note(keep), 4))
    if explain:
        w(f"\n  rejected ({len(res.rejected)} of {len(res.candidates)} candidates; one can fail several ways):\n")
        for line in _summary_by_code(res):
            w(line + "\n")
    else:
        w(f"\n  {len(res.rejected)} of {len(res.candidates)} candidates rejected; --explain says why\n")
    if written:
        from envcheck.fsutil import shown

        w(f"\n  wrote {', '.join(shown(p) for p in written)}\n")
    else:
        from envcheck.render import DEFAULT_FORMATS, FORMATS, NETWORK_FORMATS, file_name

        default = [file_name(plan, f) for f in DEFAULT_FORMATS]
        more = [file_name(plan, f) for f in FORMATS if f not in DEFAULT_FORMATS and f not in NETWORK_FORMATS]
        w(wrap(f"\n  -o DIR writes {', '.join(default[:-1])} and {default[-1]} (--format all adds "
               f"{', '.join(more[:-1])} and {more[-1]}); --explain lists every candidate; --json for machines", 2))
