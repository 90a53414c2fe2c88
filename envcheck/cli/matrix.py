"""``envcheck matrix show|validate`` — look at and check the compatibility matrix."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HELP = "show or validate the compatibility matrix (matrices/*.toml)"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("matrix", help=HELP, description=HELP)
    msub = p.add_subparsers(dest="matrix_command", metavar="SUBCOMMAND")
    msub.required = True
    show = msub.add_parser("show", help="a table of torch builds: variant, CUDA/ROCm, cuDNN, kernel list",
                           description="A table of every torch build on record.",
                           epilog="examples:\n  envcheck matrix show --torch 2.7\n"
                                  "  envcheck matrix show --variant cu128 --json",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("--torch", metavar="SPEC", help="only these releases (2.7, 2.1.*, >=2.5)")
    show.add_argument("--variant", metavar="V", help="only this variant (cu128, rocm6.3, cpu)")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.add_argument("--matrices", metavar="DIR", type=Path, help="read the matrix from DIR")
    show.set_defaults(run=run_show)
    val = msub.add_parser("validate", help="check schema, sources and cross-references",
                          description="Check every matrix file: schema, source forms, and the "
                                      "references between tables. Exit 0 when clean, 1 when errors "
                                      "were found.")
    val.add_argument("--matrices", metavar="DIR", type=Path, help="check DIR (default: built in)")
    val.add_argument("--json", action="store_true", help="print JSON")
    val.set_defaults(run=run_validate)


def run_show(args: argparse.Namespace) -> int:
    from envcheck.matrix import load_matrix
    from envcheck.resolve.types import Request

    mx = load_matrix(args.matrices)
    spec = Request.parse_torch(args.torch) if args.torch else None
    rows = []
    for r in mx.releases:
        if spec is not None and not spec.contains(r.version, prereleases=True):
            continue
        for b in mx.builds_for(r.version):
            if args.variant and b.variant != args.variant:
                continue
            rows.append((r, b))
    if args.json:
        json.dump([{
            "torch": r.version, "variant": b.variant, "channel": b.channel, "platforms": list(b.platforms),
            "python": list(b.python) if b.python else None, "cuda": b.cuda, "cudnn": b.cudnn, "nccl": b.nccl,
            "sm": list(b.sm), "ptx": list(b.ptx), "rocm": b.rocm, "gfx": list(b.gfx),
            "wheel_tag": dict(b.wheel_tag), "source": list(b.source), "confidence": b.confidence,
        } for r, b in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0 if rows else 1
    if not rows:
        sys.stderr.write("envcheck: no build matches\n")
        return 1
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{len(rows)} builds ({mx.directory})")
    for col in ("torch", "variant", "platforms", "toolkit", "cuDNN / NCCL", "kernels", "conf."):
        t.add_column(col, overflow="fold")
    for r, b in rows:
        toolkit = f"CUDA {b.cuda}" if b.cuda else f"ROCm {b.rocm}" if b.rocm else ("MPS" if b.mps else "")
        libs = " / ".join(x for x in (b.cudnn, b.nccl) if x)
        kernels = " ".join(list(b.sm) + list(b.ptx) + list(b.gfx))
        plats = ", ".join(p.replace("linux-", "lin-").replace("windows-", "win-") for p in b.platforms)
        t.add_row(r.version, b.variant + ("" if b.channel == "pytorch" else f" ({b.channel})"), plats,
                  toolkit, libs, kernels, b.confidence)
    Console(highlight=False).print(t)
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from envcheck.matrix import default_matrix_dir
    from envcheck.matrix.validate import validate

    directory = args.matrices or default_matrix_dir()
    problems = validate(directory)
    errors = [p for p in problems if p.severity == "error"]
    if args.json:
        json.dump({"directory": str(directory), "ok": not errors,
                   "problems": [{"file": p.file, "key": p.key, "message": p.message, "severity": p.severity}
                                for p in problems]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for p in problems:
            sys.stdout.write(f"{p.severity}: {p}\n")
        sys.stdout.write(f"{directory}: {len(errors)} error(s), {len(problems) - len(errors)} warning(s)\n")
    return 1 if errors else 0
