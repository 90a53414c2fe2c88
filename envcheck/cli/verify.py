"""``envcheck verify`` — run real smoke tests in an environment and say what to fix."""

from __future__ import annotations

import argparse
import os
from typing import Any, Optional, Tuple

from envcheck.cli.flags import (
    add_checks, add_force, add_interpreter, add_json, add_lock, add_matrices, add_skip, add_tier, add_timeout,
    check_timeout)
from envcheck.cli.conventions import COMMAND_HELP, file_arg, path_arg, path_text

HELP = COMMAND_HELP["verify"]

EPILOG = """\
examples:
  envcheck verify                                   this interpreter
  envcheck verify --python ~/venvs/train/bin/python a venv or conda env (envcheck need not be in it)
  envcheck verify --python ~/venvs/train            the same, given the environment's folder
  envcheck verify --lock out/envcheck.lock.toml     also compare with what `envcheck plan` promised
  envcheck verify --checks import_torch,cuda_build,arch_compat,driver   the quick ones
  envcheck verify --skip torch_compile --json       everything but compile, as JSON
  envcheck verify --json > node07.json              save the report; later, anywhere:
  envcheck verify --facts node07.json               judge saved facts again (no interpreter needed):
                                                    the checks the saved run judged (its tier);
                                                    --tier/--checks choose others
  envcheck verify --tier quick --report /shared/r/  seconds (a Slurm prolog, an init container):
                                                    writes /shared/r/<node>.json (versioned, see
                                                    schemas/node-report.schema.json)
  envcheck verify --report node.json --junit node.xml   the node report and JUnit XML for CI
  envcheck verify --facts saved.json --report node.json --host gpu007   a report from saved facts
  torchrun --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint HOST:PORT \
      --no-python envcheck verify --distributed --report reports/
                                                    all_reduce/all_gather across nodes (NCCL on GPUs,
                                                    gloo on CPUs), bus bandwidth; one report per rank
  envcheck fleet merge reports/                     then: the fleet, its failures and its drift

checks (in report order):
{checks}

tiers: --tier quick runs import_torch, cuda_build, environment, arch_compat, driver, lock, allocation,
matmul, torchvision_compat, torchaudio_compat (seconds); --tier full (the default) runs every check.
--checks/--skip narrow either.

Each check runs in a worker process with a timeout: a hang, a crash (the signal is named) or an
exception is that check's result, and a fresh worker runs the rest. On a machine without a GPU the
CPU forms run and the device checks skip, saying why.

exit codes: 0 every check passed (warnings allowed) · 1 a check failed · 2 bad input (a missing or
unusable interpreter — one that cannot run envcheck's collector —, a malformed lock or facts file,
a --save-facts target that cannot be written)
"""


def add_parser(sub: Any) -> None:
    from envcheck.verify.checks import CHECKS, help_lines

    p = sub.add_parser("verify", help=HELP, description=HELP + ".", epilog=EPILOG.format(checks=help_lines()),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_interpreter(p, "the interpreter to test: a path, a venv/conda env folder, a name on PATH "
                       "(python3.11) or a version (3.11, via PATH or `uv python find`); "
                       "default: the one running envcheck", metavar="PYTHON")
    add_lock(p, "an envcheck.lock.toml from `envcheck plan`")
    add_checks(p, f"only these checks (comma-separated): {', '.join(CHECKS)}")
    add_skip(p)
    add_timeout(p, 60.0, "seconds per check before it counts as hung (import ×2, torch_compile ×5); default 60")
    p.add_argument("--facts", metavar="FILE", type=path_arg,
                   help="judge saved facts (a `verify --json` report or its facts) instead of running anything")
    p.add_argument("--save-facts", metavar="FILE", type=file_arg,
                   help="also write the collected facts to FILE (JSON; missing folders are created; checked "
                        "before anything runs)")
    add_force(p, "let --save-facts replace an existing file")
    add_json(p, "print {checks: [...], facts: {...}}")
    add_matrices(p)
    fleet = p.add_argument_group("fleet (reports that `envcheck fleet merge` reads)")
    fleet.add_argument("--report", metavar="FILE|DIR/", type=path_text,
                       help="write the versioned node report (JSON); a folder (trailing slash or existing) gets "
                            "<node>.json, or <node>-rank<R>.json with --distributed")
    fleet.add_argument("--junit", metavar="FILE", type=file_arg,
                       help="write JUnit XML: one testcase per check, classname = the node")
    add_tier(fleet)
    fleet.add_argument("--distributed", action="store_true",
                       help="under torchrun: all_reduce/all_gather across every rank (NCCL on GPUs, gloo on "
                            "CPUs), data checked, bus bandwidth measured")
    fleet.add_argument("--host", metavar="NAME",
                       help="the node's name in the report (default: $SLURMD_NODENAME, $NODE_NAME, the host "
                            "name; with --facts from a node report, that report's node)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from envcheck.app.verify import VerifyRequest, select_checks, verify
    from envcheck.cli.output import CheckProgress, verify_output

    checks = select_checks(args.checks, args.skip, getattr(args, "tier", None))
    check_timeout(args.timeout)
    request = VerifyRequest(
        python=args.python, checks=checks, lock=args.lock, facts=args.facts, save_facts=args.save_facts,
        force=args.force, timeout=args.timeout, matrices=args.matrices, report=args.report, junit=args.junit,
        host=args.host, distributed=args.distributed,
        tier=args.tier or ("custom" if args.checks or args.skip else "full"),
        as_recorded=bool(args.facts) and not (args.checks or args.tier))
    from envcheck.verify.checks import probes_for

    with CheckProgress.for_stderr(len(probes_for(checks))) as progress:
        result = verify(request, progress=progress)
    said = variant_note(result.extra.get("variant"))
    if said is not None:
        from envcheck.cli.conventions import note

        note(args, said[0], level=said[1])
    code = verify_output(args, result)
    if code == 1 and args.distributed and args.report and os.environ.get("TORCHELASTIC_RUN_ID"):
        # torchrun stops every other rank when one exits non-zero, before they write their reports
        # (fleet merge then calls them crashed): the verdict is in this rank's report, merge gates
        from envcheck.cli.conventions import note

        note(args, "a check failed (see the report); exit 0 under torchrun so the other ranks finish and write "
                   "theirs — `envcheck fleet merge` on the reports gives the fleet's exit code", level=0)
        args.exit_code = code = 0
    return code


def variant_note(variant: object) -> Optional[Tuple[str, int]]:
    """The stderr line about the installed torch's wheel variant and the verbosity it needs: a variant
    wheel is news (always shown); a plain wheel — nearly every install — only with -v (newcomer L3)."""
    if not (isinstance(variant, dict) and variant.get("installed")):
        return None
    label = variant.get("label")
    props = variant.get("properties")
    if label:
        return (f"torch {variant.get('version')}: wheel variant {label!r} "
                f"({', '.join(map(str, props if isinstance(props, list) else []))}) [preview]", 0)
    return f"torch {variant.get('version')}: wheel variant none (a plain wheel; its build is the +label) [preview]", 1
