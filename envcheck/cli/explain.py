"""``envcheck explain [TEXT | -]`` — what a pasted PyTorch error means here, and how to fix it."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from envcheck.cli.flags import add_json, add_matrices
from envcheck.cli.conventions import COMMAND_HELP, path_arg

HELP = COMMAND_HELP["explain"]

EPILOG = """\
examples:
  envcheck explain "CUDA capability sm_120 is not compatible with the current PyTorch installation"
  envcheck explain "The NVIDIA driver on your system is too old (found version 11040)"
  python train.py 2>&1 | envcheck explain -          read a whole traceback from stdin
  envcheck explain --facts node07.json "$(cat err.txt)"   specific to a machine's saved facts
  envcheck explain --gpu "RX 7900 XTX" --os linux "hipErrorNoBinaryForGpu"   add what the text lacks
  envcheck explain --list                           every message family: evidence, cause, fix, source

The same rules `envcheck verify` uses (matrices/diagnoses.toml) are applied to the text; the cause
and fix are made specific with what envcheck can see of this machine (glibc, WSL, Python) and the
compatibility matrix (which build carries your GPU's arch, which CUDA your driver runs) — and with
what the text itself says (a driver's "found version 12080" shapes the fix for an arch message).
Root causes (torch does not load) are listed first. Known messages include: sm_XY is not
compatible · no kernel image · driver too old / insufficient · CUDA errors 803, 804, 999 · No
CUDA/HIP GPUs are available · GLIBC_/GLIBCXX_ not found · undefined symbol cublasLt…/nccl…/
__nvJitLink… (wheels of two CUDA majors, a shadowing library) · NumPy 1.x/2.x · WinError
126/127/1455 · No matching distribution found for torch · CUDNN/CUBLAS_STATUS_NOT_INITIALIZED ·
NCCL unhandled system error and DataLoader shm · hipErrorNoBinaryForGpu/InvalidImage, rocBLAS
TensileLibrary · Torch not compiled with CUDA/XPU enabled · MPS operators · Triton missing (also on
Windows) · companions, compile and Docker messages. `envcheck explain --list` prints them all.
The text's own facts count: a C:\\ or /usr/lib/wsl path sets the platform, "sm_120" or "gfx1103"
the GPU, "found version 12080" or an nvidia-smi header the driver — no fix proposes a build they
rule out. A value no real message has ("found version 0", "sm_85") is called garbled, not explained;
one newer than envcheck's data knows ("sm_999": past the newest architecture on record) is called
unknown, with `envcheck matrix update`.

exit codes: 0 explained · 1 not explained: not a message envcheck recognises (the closest families
are listed), or its values look garbled or are unknown to envcheck's data (no conclusion drawn) · 2 bad input
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("explain", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("text", nargs="*", metavar="TEXT", help="the error text; `-` (or nothing, with a pipe) reads stdin")
    p.add_argument("--list", action="store_true",
                   help="print the message families envcheck knows (evidence, cause, fix, source) and exit")
    p.add_argument("--gpu", action="append", default=[], metavar="NAME",
                   help="the GPU of the machine the text came from (repeatable; as for `envcheck plan`)")
    p.add_argument("--os", metavar="OS", help="that machine's OS: linux, windows or macos")
    p.add_argument("--wsl", action="store_true", help="that machine is Linux under WSL2")
    p.add_argument("--driver", metavar="VERSION", help="that machine's NVIDIA driver (570.124.06)")
    p.add_argument("--facts", metavar="FILE", type=path_arg,
                   help="saved facts (`envcheck verify --json`) of the machine the error came from")
    p.add_argument("--no-probe", action="store_true", help="do not look at this machine (the error came from another)")
    add_json(p, "print [{rule, matched, cause, fix, source}]; for unknown text {findings: [], closest: "
                "[{rule, score, example}]}; with --list the family table")
    add_matrices(p)
    p.set_defaults(run=run)


#: The most text `explain` reads (a pasted log; the rules look at error lines, not megabytes).
EXPLAIN_CAP = 8 * 1024 * 1024


def read_text(args: argparse.Namespace) -> str:
    """The text to explain: the arguments, or stdin for ``-`` / no arguments on a pipe.

    Raises:
        UsageError: no text at all.
    """
    from envcheck.errors import UsageError

    if args.text == ["-"] or (not args.text and not sys.stdin.isatty()):
        from envcheck.fsutil import read_input

        # size-capped: `explain - < /dev/zero` is an error, not a hang
        text = read_input("-", "explain", cap=EXPLAIN_CAP, stdin_ok=True).decode("utf-8", "replace")
    else:
        text = " ".join(args.text)
    if not text.strip():
        raise UsageError("nothing to explain: give the error text as an argument, or `-` to read stdin")
    return text


def list_families(args: argparse.Namespace) -> int:
    from envcheck.app.explain import families

    table = families(args.matrices)
    if args.json:  # not findings: the family table has a schema of its own
        json.dump({"schema": "envcheck.explain-list.v1", "families": table}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.markup import escape

    con = Console(highlight=False, soft_wrap=True)
    con.print(f"[bold]{len(table)} message families[/bold] (matrices/diagnoses.toml)")
    for row in table:
        plat = f" [{row['platform']}]" if row["platform"] else ""
        con.print()
        con.print(f"[bold]{escape(str(row['family']))}[/bold]{escape(plat)}")
        con.print(f"  [bold]evidence:[/bold] {escape(str(row['evidence']))}")
        con.print(f"  [bold]cause:[/bold]    {escape(str(row['cause']))}")
        con.print(f"  [bold]fix:[/bold]      {escape(str(row['fix']))}")
        con.print(f"  [dim]source: {escape(', '.join(row['source']))}[/dim]")
    return 0


def headline(text: str, matched: str, limit: int = 200) -> str:
    """The pasted line the rule matched in, whole (a match can start mid-line: "GLIBC_2.28' not found"
    of "ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found"); the match itself when it
    spans lines."""
    m = matched.strip()
    line = next((ln.strip() for ln in text.splitlines() if m and m in ln), m)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def run(args: argparse.Namespace) -> int:
    from envcheck.app.explain import ExplainRequest, explain

    if args.list:
        return list_families(args)
    text = read_text(args)
    result = explain(ExplainRequest(text=text, matrices=args.matrices, gpus=args.gpu, os=args.os, wsl=args.wsl,
                                    driver=args.driver, facts=args.facts, probe=not args.no_probe))
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return result.exit_code
    if not result.explained:
        first = text.strip().splitlines()[0][:160]
        looked = "".join(f"\n    {n['rule']}: {n['example']}" for n in result.closest)
        near = (f"  The closest families it looked for:{looked}\n" if looked
                else "  No family envcheck knows is close to it (none shares a word with it).\n")
        sys.stderr.write(f"envcheck: no rule explains this text ({first!r}).\n"
                         f"{near}"
                         "  `envcheck explain --list` lists every family envcheck knows; "
                         "`envcheck verify` runs the environment and may find the cause.\n")
        return 1
    from rich.console import Console
    from rich.markup import escape

    con = Console(highlight=False, soft_wrap=True)
    for i, f in enumerate(result.findings):
        if i:
            con.print()
        con.print(f"[bold]{escape(headline(text, f.matched))}[/bold]  [dim]({f.rule})[/dim]")
        con.print(f"  [bold]cause:[/bold] {escape(f.cause)}")
        con.print(f"  [bold]fix:[/bold]   {escape(f.fix)}")
        if f.source:
            con.print(f"  [dim]source: {escape(', '.join(f.source))}[/dim]")
    return result.exit_code
