"""``envcheck verify`` — run real smoke tests in an environment and say what to fix."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, List, Optional

from envcheck.cli.flags import add_matrices, check_timeout

HELP = "run real smoke tests (import, kernels, conv, compile, collectives) in an environment"

EPILOG = """\
examples:
  envcheck verify                                   this interpreter
  envcheck verify --python ~/venvs/train/bin/python a venv or conda env (envcheck need not be in it)
  envcheck verify --python ~/venvs/train            the same, given the environment's folder
  envcheck verify --lock out/envcheck.lock.toml     also compare with what `envcheck plan` promised
  envcheck verify --checks import_torch,cuda_build,arch_compat,driver   the quick ones
  envcheck verify --skip torch_compile --json       everything but compile, as JSON
  envcheck verify --json > node07.json              save the report; later, anywhere:
  envcheck verify --facts node07.json               judge saved facts again (no interpreter needed)
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
matmul (seconds); --tier full (the default) runs every check. --checks/--skip narrow either.

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
    p.add_argument("--python", metavar="PYTHON",
                   help="the interpreter to test: a path, a venv/conda env folder, a name on PATH "
                        "(python3.11) or a version (3.11, via PATH or `uv python find`); "
                        "default: the one running envcheck")
    p.add_argument("--lock", metavar="FILE", type=Path, help="an envcheck.lock.toml from `envcheck plan`")
    p.add_argument("--checks", metavar="LIST", help=f"only these checks (comma-separated): {', '.join(CHECKS)}")
    p.add_argument("--skip", metavar="LIST", help="leave these checks out (e.g. torch_compile)")
    p.add_argument("--timeout", metavar="S", type=float, default=60.0,
                   help="seconds per check before it counts as hung (import ×2, torch_compile ×5); default 60")
    p.add_argument("--facts", metavar="FILE", type=Path,
                   help="judge saved facts (a `verify --json` report or its facts) instead of running anything")
    p.add_argument("--save-facts", metavar="FILE", type=Path,
                   help="also write the collected facts to FILE (JSON; missing folders are created; checked "
                        "before anything runs)")
    p.add_argument("--force", action="store_true", help="let --save-facts replace an existing file")
    p.add_argument("--json", action="store_true", help="print {checks: [...], facts: {...}}")
    add_matrices(p)
    fleet = p.add_argument_group("fleet (reports that `envcheck fleet merge` reads)")
    fleet.add_argument("--report", metavar="FILE|DIR/",
                       help="write the versioned node report (JSON); a folder (trailing slash or existing) gets "
                            "<node>.json, or <node>-rank<R>.json with --distributed")
    fleet.add_argument("--junit", metavar="FILE", type=Path,
                       help="write JUnit XML: one testcase per check, classname = the node")
    fleet.add_argument("--tier", choices=("quick", "full"),
                       help="quick: import, build, environment, arch, driver, lock, allocation, one matmul (seconds); "
                            "full: every check (default)")
    fleet.add_argument("--distributed", action="store_true",
                       help="under torchrun: all_reduce/all_gather across every rank (NCCL on GPUs, gloo on "
                            "CPUs), data checked, bus bandwidth measured")
    fleet.add_argument("--host", metavar="NAME",
                       help="the node's name in the report (default: $SLURMD_NODENAME, $NODE_NAME, the host "
                            "name; with --facts from a node report, that report's node)")
    p.set_defaults(run=run)


def parse_checks(text: Optional[str], flag: str) -> List[str]:
    """``"matmul, lock"`` → ``["matmul", "lock"]``; ``None`` (flag not given) → ``[]``.

    Raises:
        UsageError: an unknown check name (the known ones are listed), or a flag given an empty list.
    """
    import difflib

    from envcheck.errors import UsageError
    from envcheck.verify.checks import CHECKS

    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    if text is not None and not names:
        raise UsageError(f"{flag} {text!r}: no check named; give a comma-separated list of: {', '.join(CHECKS)}")
    for n in names:
        if n not in CHECKS:
            close = difflib.get_close_matches(n, CHECKS, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UsageError(f"{flag}: unknown check {n!r}{hint}\n  checks: {', '.join(CHECKS)}")
    return names


def find_interpreter(text: Optional[str]) -> str:
    """The interpreter to test: ``--python`` as people type it (a path, an environment folder, a
    name on PATH, a version — :func:`envcheck.pyfind.find_python`), else this one.

    Raises:
        UsageError: nothing of that description exists.
    """
    from envcheck.pyfind import find_python

    return find_python(text)


def selected_checks(args: argparse.Namespace) -> List[str]:
    """The checks ``--checks``/``--skip`` leave, in report order; ``--timeout`` checked too.

    Raises:
        UsageError: an unknown check, an empty list, none left, or a timeout that is not a finite
            positive number of seconds.
    """
    from envcheck.errors import UsageError
    from envcheck.verify.checks import CHECKS

    from envcheck.fleet.report import tier_checks

    wanted = parse_checks(args.checks, "--checks") or tier_checks(getattr(args, "tier", None), CHECKS)
    skip = set(parse_checks(args.skip, "--skip"))
    checks = [c for c in CHECKS if c in wanted and c not in skip]
    if not checks:
        raise UsageError("--checks/--skip leave no check to run")
    check_timeout(args.timeout)
    return checks


def run(args: argparse.Namespace) -> int:
    from envcheck.verify.checks import probes_for

    checks = selected_checks(args)
    if args.save_facts:
        from envcheck.render.write import check_output_file

        check_output_file(args.save_facts, args.force, "--save-facts")
    node = node_outputs_start(args)
    lock = None
    if args.lock:
        from envcheck.lock import load_lock

        lock = load_lock(args.lock)
    t0 = time.monotonic()
    machine = None
    if args.facts:
        from envcheck.verify.facts import load_facts

        facts = load_facts(args.facts)
        from envcheck.matrix import load_matrix

        matrix = load_matrix(args.matrices)
    else:
        python = find_interpreter(args.python)
        if node is not None and args.distributed:
            from envcheck.fleet.dist import run_collectives

            node["distributed"] = run_collectives(python, args.timeout, cuda_hint=_has_nvidia())
        facts, matrix, machine = collect_live(python, probes_for(checks), args)
        unusable(facts, args.python)
        from envcheck.variants import installed_variant

        variant = installed_variant(python, timeout=min(30.0, float(args.timeout or 30.0)))
        if variant.get("installed"):
            from envcheck.cli.conventions import note

            label = variant.get("label")
            note(args, f"torch {variant.get('version')}: wheel variant "
                 + (f"{label!r} ({', '.join(variant['properties'])})" if label else
                    "none (a plain wheel; its build is the +label)") + " [preview]")
        return report(args, facts, lock, machine, matrix, checks, t0, extra={"variant": variant}, node=node)
    return report(args, facts, lock, machine, matrix, checks, t0, node=node)


def _has_nvidia() -> bool:
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/proc/driver/nvidia")


def node_outputs_start(args: argparse.Namespace) -> Optional[dict]:
    """With --report/--junit/--distributed: the node and its output files, checked before anything runs."""
    if not (getattr(args, "report", None) or getattr(args, "junit", None) or getattr(args, "distributed", False)):
        return None
    from envcheck.fleet.output import prepare_node

    return prepare_node(report=args.report, junit=args.junit, host=args.host, facts=args.facts,
                        distributed=args.distributed, force=args.force)


def unusable(facts: Any, given: Optional[str]) -> None:
    """Bad input, not a failed check: the interpreter never ran envcheck's collector (``/bin/true``,
    Python 2, a program that is not Python).

    Raises:
        UsageError: saying what it did instead (exit 2).
    """
    from envcheck.errors import UsageError

    from envcheck.verify.diagnose import SHORT_TIMEOUT

    col = facts.section("collector")
    err = col.get("error")
    if err and not facts.section("runs") and not facts.section("python"):
        flag = f"--python {given}" if given else "this interpreter"
        timeout = col.get("timeout")
        if col.get("stalled") and isinstance(timeout, (int, float)) and timeout < SHORT_TIMEOUT:
            raise UsageError(f"--timeout {timeout:g}: too small — {err}\n  starting Python alone takes a moment; "
                             "use the default (60 s per check)")
        raise UsageError(f"{flag}: not a usable Python (≥ 3.7) for verify — {err}\n  give a venv's bin/python, "
                         "a conda env's python, or the environment folder itself")


def report(args: argparse.Namespace, facts: Any, lock: Any, machine: Any, matrix: Any, checks: List[str],
           t0: float, extra: Optional[dict] = None, node: Optional[dict] = None) -> int:
    """Diagnose ``facts``, save them (``--save-facts``), print the report (or ``--json``, with
    ``extra`` keys added to the object), write the node report/JUnit (``node``); returns the exit
    code: 1 if a check failed, else 0."""
    from envcheck.verify.diagnose import Check, diagnose

    results = diagnose(facts, lock, machine, matrix, checks)
    if node is not None and "distributed" in node:
        from envcheck.fleet.dist import CHECK, judge

        status, detail, fix = judge(node["distributed"])
        results.append(Check(CHECK, status, float(node["distributed"].get("seconds") or 0.0), detail, fix))
    elapsed = time.monotonic() - t0
    if node is not None:
        from envcheck.fleet.output import write_node_outputs

        write_node_outputs(node, [c.to_dict() for c in results], facts.to_dict(),
                           tier=getattr(args, "tier", None) or ("custom" if args.checks or args.skip else "full"),
                           lock_path=getattr(args, "lock", None), force=getattr(args, "force", False))
    if getattr(args, "save_facts", None):
        from envcheck.render.write import write_output_file

        write_output_file(args.save_facts, json.dumps(facts.to_dict(), indent=1) + "\n",
                          getattr(args, "force", False), "--save-facts")
    args.exit_code = 1 if any(c.status == "fail" for c in results) else 0
    from envcheck.ci import verify_results

    title = facts.section("python").get("executable") or "saved facts"
    args.warned = int(getattr(args, "warned", 0) or 0) + verify_results(results, str(title))
    if args.json:
        doc = {"checks": [c.to_dict() for c in results], "facts": facts.to_dict(), **(extra or {})}
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_report(results, facts, elapsed, args)
    return args.exit_code


def collect_live(python: str, probes: List[str], args: argparse.Namespace, start: Any = None):
    """Start the worker first, then load the matrix and probe the machine while torch imports.

    ``start`` is the runner seam for the worker (default :func:`envcheck.runner.start`; ``envcheck
    docker verify`` passes one that runs it in a container)."""
    from envcheck import runner
    from envcheck.verify.collect import collect

    out: dict = {}
    from envcheck.ci import progress_allowed

    status = _Progress(len(probes)) if progress_allowed(sys.stderr) else None
    streams: List[Any] = []

    def tracked(argv: Any, env: Any = None, cwd: Any = None) -> Any:
        stream = (start or runner.start)(argv, env=env)
        streams.append(stream)
        return stream

    def work() -> None:
        try:
            out["facts"] = collect(python, probes, args.timeout, progress=status.update if status else None,
                                   start=tracked)
        except BaseException as exc:  # re-raised in the main thread
            out["error"] = exc

    t = threading.Thread(target=work, daemon=True)
    t.start()
    try:
        from envcheck.matrix import load_matrix
        from envcheck.probe import probe_machine

        matrix = load_matrix(args.matrices)
        machine = probe_machine(matrix, docker=False)  # the GPUs and driver matter here, not Docker
        while t.is_alive():
            t.join(0.1)
    except BaseException:
        for stream in streams:  # the workers run in their own session: Ctrl-C (or an error here) does not end them
            stream.kill()
        raise
    finally:
        if status:
            status.stop()
    if "error" in out:
        raise out["error"]
    facts = out["facts"]
    facts.data["machine"] = machine.to_dict()
    return facts, matrix, machine


class _Progress:
    """A one-line spinner on stderr (TTY only): which check is running."""

    def __init__(self, total: int):
        from rich.console import Console

        self.total, self.done = total, 0
        self.status = Console(stderr=True).status("verify: starting the worker")
        self.status.start()

    def update(self, name: str, run: Optional[dict]) -> None:
        if run is not None:
            self.done += 1
            return
        self.status.update(f"verify: {name} ({self.done + 1}/{self.total})")

    def stop(self) -> None:
        self.status.stop()


STYLE = {"pass": "green", "fail": "bold red", "skip": "dim", "warn": "yellow"}


def print_report(results: List[Any], facts: Any, elapsed: float, args: argparse.Namespace) -> None:
    from rich.console import Console
    from rich.markup import escape

    con = Console(highlight=False, soft_wrap=True)
    py = facts.section("python")
    head = f"envcheck verify — {py.get('executable') or facts.section('collector').get('python') or '(saved facts)'}"
    if py.get("version"):
        head += f" (Python {py['version']})"
    if facts.torch_version:
        head += f", torch {facts.torch_version}"
    con.print(f"[bold]{escape(head)}[/bold]")
    width = max(len(c.name) for c in results)
    for c in results:
        secs = f"{c.seconds:6.2f} s" if c.seconds else " " * 8
        con.print(f" [{STYLE[c.status]}]{c.status.upper():4}[/] {c.name:<{width}} {secs}  {escape(c.detail)}")
        if c.fix and c.status in ("fail", "warn"):
            con.print(f"      {'':<{width}}           [bold]fix:[/bold] {escape(c.fix)}")
    counts = {s: sum(1 for c in results if c.status == s) for s in ("pass", "warn", "skip", "fail")}
    summary = (f"{len(results)} check{'s' if len(results) != 1 else ''}: {counts['pass']} passed, {counts['warn']} warning(s), "
               f"{counts['skip']} skipped, {counts['fail']} failed ({elapsed:.1f} s)")
    workers = facts.section("collector").get("workers")
    if workers and workers > 1:
        summary += f"; {workers} worker processes (a check hung or crashed)"
    con.print(summary)
    err = facts.section("collector").get("error")
    if err:
        con.print(f"[bold red]{escape(err)}[/]")
