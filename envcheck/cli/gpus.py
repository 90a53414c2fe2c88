"""``envcheck gpus [QUERY]`` — the GPU names envcheck knows, with their architecture."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from envcheck.cli.flags import add_json, add_matrices
from envcheck.cli.conventions import COMMAND_HELP

HELP = COMMAND_HELP["gpus"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser("gpus", help=HELP, description=HELP + ". QUERY filters by name, alias, "
                       "arch (sm_89, gfx1100), family (Ada, RDNA3) or vendor (nvidia, amd, intel, apple).",
                       epilog="examples:\n  envcheck gpus\n  envcheck gpus 4090\n  envcheck gpus gfx1100\n"
                              "  envcheck gpus --json amd",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("query", nargs="*", help="filter (optional)")
    add_json(p)
    add_matrices(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from envcheck.app.matrix import search_gpus

    query = " ".join(args.query)
    found = search_gpus(query, args.matrices)
    gpus = found.gpus
    if args.json:
        json.dump(found.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return found.exit_code
    if not gpus:
        if found.unknown:
            sys.stderr.write(f"envcheck: no GPU matches {query!r}" + (
                "; did you mean: " + ", ".join(found.suggestions) if found.suggestions else "") + "\n")
        return 1
    from rich.table import Table

    from envcheck.cli.output import console

    table = Table(title=f"{len(gpus)} GPUs" + (f" matching {query!r}" if query else ""))
    for col in ("name", "vendor", "arch", "family", "aliases", "confidence"):
        table.add_column(col, overflow="fold")
    for g in gpus:
        table.add_row(g.name, g.vendor, g.arch, g.family, ", ".join(g.aliases[:4]), g.confidence)
    console().print(table)
    return 0
