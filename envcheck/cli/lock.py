"""``envcheck lock check FILE…`` — do the locks still resolve against the current matrix?"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any
from envcheck.cli.conventions import COMMAND_HELP, path_arg
from envcheck.cli.flags import add_json, add_matrices

HELP = COMMAND_HELP["lock"]

EPILOG = """\
Prints one line per lock on stdout (--json: a document); warnings and the count of broken locks go
to stderr.

exit codes: 0 every lock still resolves (an outdated one is a warning; --strict fails on it) ·
1 a lock no longer resolves · 2 not a lock file

The pre-commit hook `envcheck-lock-check` runs this on every changed envcheck.lock.toml.
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("lock", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    lsub = p.add_subparsers(dest="lock_command", metavar="ACTION")
    c = lsub.add_parser("check", help=HELP, description=HELP + ".", epilog=EPILOG,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("files", nargs="+", type=path_arg, metavar="FILE", help="envcheck.lock.toml files")
    add_matrices(c)
    add_json(c, "print {locks: [{path, status, locked, chosen, reasons}]}")
    c.set_defaults(run=run)
    p.set_defaults(run=lambda args: (p.print_help(sys.stderr), 2)[1])


def run(args: argparse.Namespace) -> int:
    from envcheck.app.matrix import check_locks
    from envcheck.ci import annotate
    from envcheck.cli.conventions import warn

    checked = check_locks(args.files, args.matrices)
    results = checked.results
    code = args.exit_code = checked.exit_code
    for r in results:
        if r.status == "outdated":
            warn(args, r.message, title="envcheck lock check", file=r.path)
        elif r.status == "broken":
            annotate("error", r.message, title="envcheck lock check", file=r.path)
    if args.json:
        json.dump(checked.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return code
    for r in results:  # the result of each lock is the command's output: stdout (newcomer4 #11)
        sys.stdout.write(f"{r.message}\n")
    broken = sum(r.status == "broken" for r in results)
    if broken:
        sys.stderr.write(f"envcheck: {broken} of {len(results)} lock{'s' if len(results) > 1 else ''} "
                         f"no longer resolve{'s' if broken == 1 else ''}\n")
    return code
