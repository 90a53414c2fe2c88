"""``envcheck plan`` — resolve the compatibility matrix for a machine and write install specs."""

from __future__ import annotations

import argparse
import sys

from pathlib import Path
from typing import Any, Dict, List

from envcheck.app.plan import plan_json  # noqa: F401 (the `plan --json` object; tests import it from here too)
from envcheck.cli.flags import add_matrices, add_plan_arguments, plan_request
from envcheck.errors import UsageError
from envcheck.cli.conventions import COMMAND_HELP

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
among the builds that pass, the newest torch wins, then the build that fits the hardware best.
--explain shows every candidate and every reason.

exit codes: 0 a build fits · 1 none fits (every candidate is listed with its reasons) · 2 bad input
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
    o.add_argument("-o", "--output", metavar="DIR", help="write the files into DIR")
    o.add_argument("--force", action="store_true", help="replace existing files in DIR")
    o.add_argument("--mirror", action="append", default=[], metavar="URL",
                   help="a mirror of https://download.pytorch.org/whl (or PREFIX=URL for another index); "
                        "rewrites the index URLs in every file")
    o.add_argument("--packages", metavar="LIST",
                   help="pin only these of torch, torchvision, torchaudio (e.g. torch): every output and "
                        "--download leave the others out")
    o.add_argument("--download", metavar="DIR", type=Path,
                   help="gather every wheel of the plan (torch, companions, their dependencies) into DIR/wheels "
                        "and write install.sh, requirements.txt, Dockerfile and envcheck.lock.toml beside it, "
                        "installing with --no-index from there (an air-gapped install: carry DIR over)")
    o.add_argument("--hashes", action="store_true",
                   help="pin every wheel of the chosen build with --hash=sha256:… (needs `envcheck matrix "
                        "update` data); install with `pip install --require-hashes --no-deps -r …` after "
                        "the dependencies, or lock those too (uv pip compile --generate-hashes)")
    o.add_argument("--json", action="store_true", help="print the plan and every candidate as JSON")
    o.add_argument("--explain", action="store_true", help="list every candidate with its reasons")
    add_matrices(o)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from envcheck.app.plan import extra_plans, only_packages
    from envcheck.app.plan import plan as plan_use_case
    from envcheck.render import parse_formats, render
    from envcheck.render.write import write_outputs
    from envcheck.resolve.plan import parse_mirrors

    args.format_given = args.format is not None
    formats = parse_formats(args.format or "pip,conda,docker,lock")
    parse_mirrors(args.mirror)  # bad --mirror values are refused before any work
    if args.output is not None:
        if not args.output.strip():
            raise UsageError("-o: give a folder to write into (-o out/)")
        args.output = Path(args.output)
    req = plan_request(args, hashes=args.hashes)
    result = plan_use_case(req)
    matrix, res, plan = result.matrix, result.resolution, result.plan
    if plan is not None and args.packages:
        plan = only_packages(plan, matrix, args.packages)
    from envcheck.cli.conventions import warn
    from envcheck.matrix.freshness import staleness

    stale = staleness(matrix)
    if stale:
        warn(args, stale)
    if plan is not None:  # caveats are in the output already; --strict counts them
        args.warned = int(getattr(args, "warned", 0) or 0) + len(plan.candidate.warnings)
    args.exit_code = 0 if plan is not None else 1
    written: List[str] = []
    options: Dict[str, Dict[str, Any]] = {"pip": {"style": args.style}, "variants": {"matrix": matrix}}
    if plan is not None and "uv" in formats:
        options["uv"] = {"extra_plans": extra_plans(result, args.extras, req), "pin_python": args.pin_python}
    if plan is not None and args.output:
        written = [str(p) for p in write_outputs(args.output, render(plan, formats, options), args.force)]
    if plan is not None and args.download is not None:
        from envcheck.download import download_plan

        def say(text: str) -> None:
            if not args.json:
                sys.stderr.write(f"envcheck: {text}\n")

        written += [str(p) for p in download_plan(plan, matrix, args.download, args.force, say)]
    if args.json:
        import json

        json.dump(plan_json(res, plan, written), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif plan is not None and args.format_given and not args.output:
        files = render(plan, formats, options)  # --format without -o: print the files
        for name, text in files.items():
            if len(files) > 1:
                sys.stdout.write(f"==> {name} <==\n")
            sys.stdout.write(text)
    else:
        from envcheck.cli.plan_text import print_plan

        print_plan(res, plan, written, explain=args.explain, wrote_dir=args.output)
    return 0 if plan is not None else 1
