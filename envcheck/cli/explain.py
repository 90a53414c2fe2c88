"""``envcheck explain [TEXT | -]`` — what a pasted PyTorch error means here, and how to fix it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HELP = "explain a PyTorch error message or traceback: cause and fix"

EPILOG = """\
examples:
  envcheck explain "CUDA capability sm_120 is not compatible with the current PyTorch installation"
  envcheck explain "The NVIDIA driver on your system is too old (found version 11040)"
  python train.py 2>&1 | envcheck explain -          read a whole traceback from stdin
  envcheck explain --facts node07.json "$(cat err.txt)"   specific to a machine's saved facts

The same rules `envcheck verify` uses (matrices/diagnoses.toml) are applied to the text; the cause
and fix are made specific with what envcheck can see of this machine (glibc, WSL, Python) and the
compatibility matrix (which build carries your GPU's arch, which CUDA your driver runs) — and with
what the text itself says (a driver's "found version 12080" shapes the fix for an arch message).
Root causes (torch does not load) are listed first. Known messages include: sm_XY is not
compatible · no kernel image is available · driver too old (found version N) · GLIBC_2.xx not
found · libtorch_cpu/libcudnn/libcudart/libcuda cannot open shared object file · No module named
torch._C · No module named 'torchvision' · torchvision::nms does not exist · Dynamo is not
supported on Python 3.x+ · no C compiler or Python.h for torch.compile · Triton missing · Torch
not compiled with CUDA enabled · Docker "could not select device driver" · HIP invalid device
function. A value no real message has ("found version 0") is called garbled, not explained.

exit codes: 0 explained · 1 not a message envcheck recognises · 2 bad input
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("explain", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("text", nargs="*", metavar="TEXT", help="the error text; `-` (or nothing, with a pipe) reads stdin")
    p.add_argument("--facts", metavar="FILE", type=Path,
                   help="saved facts (`envcheck verify --json`) of the machine the error came from")
    p.add_argument("--no-probe", action="store_true", help="do not look at this machine (the error came from another)")
    p.add_argument("--json", action="store_true", help="print [{rule, matched, cause, fix, source}]")
    p.add_argument("--matrices", metavar="DIR", type=Path, help="read the matrix from DIR (default: built in)")
    p.set_defaults(run=run)


def read_text(args: argparse.Namespace) -> str:
    """The text to explain: the arguments, or stdin for ``-`` / no arguments on a pipe.

    Raises:
        UsageError: no text at all.
    """
    from envcheck.errors import UsageError

    if args.text == ["-"] or (not args.text and not sys.stdin.isatty()):
        raw = getattr(sys.stdin, "buffer", None)
        text = raw.read().decode("utf-8", "replace") if raw is not None else sys.stdin.read()
    else:
        text = " ".join(args.text)
    if not text.strip():
        raise UsageError("nothing to explain: give the error text as an argument, or `-` to read stdin")
    return text


def run(args: argparse.Namespace) -> int:
    from envcheck.matrix import load_matrix
    from envcheck.verify import explain

    text = read_text(args)
    matrix = load_matrix(args.matrices)
    facts = None
    if args.facts:
        from envcheck.verify.facts import load_facts

        facts = load_facts(args.facts)
    machine = None
    if not args.no_probe and facts is None:
        from envcheck.probe import probe_machine

        machine = probe_machine(matrix, docker=False)  # the GPUs and driver matter here, not Docker
    findings = explain(text, matrix, machine, facts)
    if args.json:
        json.dump([f.to_dict() for f in findings], sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0 if findings else 1
    if not findings:
        first = text.strip().splitlines()[0][:160]
        sys.stderr.write(f"envcheck: no rule explains this text ({first!r}).\n"
                         "  `envcheck explain --help` lists the messages envcheck knows; "
                         "`envcheck verify` runs the environment and may find the cause.\n")
        return 1
    from rich.console import Console
    from rich.markup import escape

    con = Console(highlight=False, soft_wrap=True)
    for i, f in enumerate(findings):
        if i:
            con.print()
        con.print(f"[bold]{escape(f.matched.strip())}[/bold]  [dim]({f.rule})[/dim]")
        con.print(f"  [bold]cause:[/bold] {escape(f.cause)}")
        con.print(f"  [bold]fix:[/bold]   {escape(f.fix)}")
        if f.source:
            con.print(f"  [dim]source: {escape(', '.join(f.source))}[/dim]")
    return 0
