"""``envcheck matrix show|validate|update|status`` — look at, check and refresh the compatibility matrix."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from envcheck.cli.flags import add_json, add_matrices, add_timeout
from envcheck.cli.conventions import COMMAND_HELP, path_arg
from envcheck.fsutil import shown

HELP = COMMAND_HELP["matrix"]


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
    add_json(show)
    add_matrices(show)
    show.set_defaults(run=run_show)
    val = msub.add_parser("validate", help="check schema, sources and cross-references",
                          description="Check every matrix file: schema, source forms, and the "
                                      "references between tables. Exit 0 when clean, 1 when errors "
                                      "were found.")
    add_matrices(val, help="check DIR (default: built in)")
    add_json(val)
    val.set_defaults(run=run_validate)
    _add_update(msub)
    _add_status(msub)


UPDATE_EPILOG = """\
Reads <index>/<package>/ (PEP 691 JSON when the server offers it, else PEP 503 HTML) and
rewrites generated-index-<channel>-<package>.toml in your data folder ($ENVCHECK_DATA_DIR/index,
else ~/.local/share/envcheck/index on Linux, ~/Library/Application Support/envcheck/index on
macOS, %LOCALAPPDATA%\\envcheck\\index on Windows; DIR/index with --data-dir DIR — the folder
ENVCHECK_DATA_DIR=DIR makes plan read —, or the --matrices folder when given), never inside the
installed package. `envcheck plan` reads the shipped matrices plus these
files. Hand-sourced files are never touched. All files are replaced together or not at all.

exit codes: 0 updated (or nothing new) · 2 bad input (a bad --index URL, an unwritable data folder) ·
            3 could not run: a page could not be fetched or parsed (nothing was written)

examples:
  envcheck matrix update                                  # download.pytorch.org/whl: torch, torchvision, torchaudio
  envcheck matrix update --dry-run                        # show what would change, write nothing
  envcheck matrix update --index https://pypi.org/simple/ # plain PyPI (recorded as channel "pypi")
  envcheck matrix update --packages torch --variants cu128,cpu   # only these sub-indexes
  envcheck matrix update --json | jq '.packages[].new_releases'
"""

STATUS_EPILOG = """\
Lists, from the generated index files: the newest release each index serves, when the index was
last read, and every release x variant x platform the index serves that torch-builds*.toml does
not cover yet (no [[build]] row, no kernel list, no cuDNN). `envcheck plan` marks such builds
"unverified" instead of guessing.

exit codes: 0 report printed · 3 no generated index data yet (run `envcheck matrix update`): nothing
to judge — README's exit codes (1 is "judged and failed")

examples:
  envcheck matrix status
  envcheck matrix status --json | jq '.uncovered[] | select(.torch == "2.8.0")'
"""


def _add_update(msub: Any) -> None:
    up = msub.add_parser("update", help="refresh the generated index files from the wheel index",
                         description="Read which wheel files an index serves (release x variant x "
                                     "Python x platform, with sha256) into generated matrix files.",
                         epilog=UPDATE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    up.add_argument("--index", metavar="URL", default=None,
                    help="simple index base (default: https://download.pytorch.org/whl/)")
    up.add_argument("--packages", metavar="LIST", default="torch,torchvision,torchaudio",
                    help="comma-separated packages (default: torch,torchvision,torchaudio)")
    up.add_argument("--variants", metavar="LIST",
                    help="read <index>/<variant>/<package>/ for these sub-indexes instead of the "
                         "combined page (for mirrors without one); other rows are kept")
    up.add_argument("--channel", metavar="NAME",
                    help="record the files under this channel (default: the [[channel]] whose "
                         "index_url matches --index, else the index host name)")
    add_matrices(up, help="read the hand-sourced matrix from DIR, and write there unless --data-dir is given")
    up.add_argument("--data-dir", metavar="DIR", type=path_arg,
                    help="the data folder to write into, as $ENVCHECK_DATA_DIR: the files go to DIR/index, "
                         "which `ENVCHECK_DATA_DIR=DIR envcheck plan` reads (default: your per-user data folder)")
    up.add_argument("--dry-run", action="store_true", help="fetch and compare, write nothing")
    add_timeout(up, 30.0, "seconds to wait for a connection or a read (default 30)")
    up.add_argument("--retries", metavar="N", type=int, default=3,
                    help="retries per page on connection errors and HTTP 429/5xx, with backoff (default 3)")
    add_json(up)
    up.set_defaults(run=run_update_cmd, needs_extras=("update",))


def _add_status(msub: Any) -> None:
    st = msub.add_parser("status", help="how fresh the index data is, and what the sourced facts miss",
                         description="Newest release on record, date of the last update, and every "
                                     "release/variant the index has that torch-builds*.toml does not cover.",
                         epilog=STATUS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_matrices(st)
    add_json(st)
    st.set_defaults(run=run_status_cmd)


def run_update_cmd(args: argparse.Namespace) -> int:
    from envcheck.app.matrix import UpdateRequest, update_index
    from envcheck.errors import require_extra

    require_extra("update")  # before envcheck.update (its progress display) imports requests
    from envcheck.update.report import RichProgress, print_update

    request = UpdateRequest(index=args.index, packages=args.packages.split(","), matrices=args.matrices,
                            data_dir=args.data_dir, channel=args.channel,
                            variants=args.variants.split(",") if args.variants else None, dry_run=args.dry_run,
                            timeout=args.timeout, retries=args.retries)
    with RichProgress() as progress:
        result = update_index(request, progress)
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_update(result, sys.stdout)
    return 0


def run_status_cmd(args: argparse.Namespace) -> int:
    from envcheck.app.matrix import index_status
    from envcheck.update.report import print_status

    st = index_status(args.matrices)
    if args.json:
        json.dump(st.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_status(st, sys.stdout)
    return 0 if st.indexes else 3  # no data: nothing was judged (newcomer6 #7), as --hashes without it


def run_show(args: argparse.Namespace) -> int:
    from envcheck.app.matrix import builds

    found = builds(args.matrices, args.torch, args.variant)
    rows = found.rows
    if args.json:
        json.dump(found.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0 if rows else 1
    if not rows:
        sys.stderr.write("envcheck: no build matches\n")
        return 1
    from rich.table import Table

    from envcheck.cli.output import console

    t = Table(title=f"{len(rows)} builds ({found.matrix.directory})")
    for col in ("torch", "variant", "platforms", "toolkit", "cuDNN / NCCL", "kernels", "conf."):
        t.add_column(col, overflow="fold")
    for r, b in rows:
        toolkit = f"CUDA {b.cuda}" if b.cuda else f"ROCm {b.rocm}" if b.rocm else ("MPS" if b.mps else "")
        libs = " / ".join(x for x in (b.cudnn, b.nccl) if x)
        kernels = " ".join(list(b.sm) + list(b.ptx) + list(b.gfx))
        plats = ", ".join(p.replace("linux-", "lin-").replace("windows-", "win-") for p in b.platforms)
        t.add_row(r.version, b.variant + ("" if b.channel == "pytorch" else f" ({b.channel})"), plats,
                  toolkit, libs, kernels, b.confidence)
    console().print(t)
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from envcheck.app.matrix import validate_matrix

    checked = validate_matrix(args.matrices)
    if args.json:
        json.dump(checked.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for p in checked.problems:
            sys.stdout.write(f"{p.severity}: {shown(str(p))}\n")
        sys.stdout.write(f"{shown(checked.directory)}: {len(checked.errors)} error(s), "
                         f"{len(checked.problems) - len(checked.errors)} warning(s)\n")
    return checked.exit_code
