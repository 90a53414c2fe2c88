"""``envcheck docker`` — build an image from a plan, verify an image from inside, CI images."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

from envcheck.cli.flags import (
    add_checks, add_force, add_interpreter, add_json, add_lock, add_matrices, add_mirror, add_plan_arguments,
    add_skip, add_tier, add_timeout, check_timeout, plan_request)
from envcheck.cli.conventions import COMMAND_HELP, path_arg
from envcheck.fsutil import shown

HELP = COMMAND_HELP["docker"]

EPILOG = """\
examples:
  envcheck docker build --backend cpu --torch 2.13.0 --python 3.11 --os linux
  envcheck docker build --lock out/envcheck.lock.toml --tag team/torch:prod
  envcheck docker build --lock out/envcheck.lock.toml --wheelhouse wheels/   air-gapped: wheels from the host
  envcheck docker verify envcheck/torch:2.13.0-cpu           run verify's checks inside the image
  envcheck docker verify team/torch:prod --lock out/envcheck.lock.toml --json
  envcheck docker base                                        the local Debian base (no registry needed)
  envcheck docker ci cpu --report .nox/reports/cpu.json       one CI target of matrices/docker.toml

The engine is the one the docker CLI would use (DOCKER_HOST, or /var/run/docker.sock).
exit codes: 0 ok · 1 no build fits, or a check failed · 2 bad input · 3 could not run: no engine,
no such image, the wheels or the image build failed (nothing was judged)
"""

BUILD_EPILOG = """\
examples:
  envcheck docker build --backend cpu --torch 2.13.0 --python 3.11 --os linux
  envcheck docker build --gpu "RTX 4090" --torch 2.7 --tag me/torch:cu128
  envcheck docker build --lock envcheck.lock.toml --wheelhouse wheels/ --packages torch
  envcheck docker build --lock envcheck.lock.toml --base-image envcheck-base:bookworm --wheelhouse wheels/

The Dockerfile is the one `envcheck plan --format docker` prints. --wheelhouse DIR: wheels from the
host, installed with pip --no-index (nothing is fetched during the build); an empty or new DIR is
filled with `pip download` of the plan's pins for the image's Python and glibc. The image is
labelled with what it holds (io.envcheck.lock: the lock of exactly what was installed), which
`envcheck docker verify` compares against.

A failed build leaves no container and no intermediate image behind (unless --keep).
exit codes: 0 built · 1 no build fits · 2 bad input · 3 could not run: no engine, the wheels could
not be had (pip download failed, a given wheelhouse lacks some), the build failed
"""

VERIFY_EPILOG = """\
examples:
  envcheck docker verify envcheck/torch:2.13.0-cpu
  envcheck docker verify me/torch:cu128 --lock envcheck.lock.toml --json > report.json
  envcheck docker verify me/torch:cu128 --checks import_torch,cuda_build,matmul --timeout 30
  envcheck docker verify me/torch:cu128 --tier quick          seconds, as `envcheck verify --tier quick`

Each check runs in a fresh container of IMAGE (nothing of envcheck is installed in it: the
collector script is copied in), with the device flags the lock's build needs (matrices/docker.toml:
a GPU request for NVIDIA, /dev/kfd + /dev/dri for ROCm, /dev/dxg on WSL) — only those this host
has; the others are listed as skipped. Without --lock, the lock in the image's io.envcheck.lock
label is used. The checks and the report are `envcheck verify`'s; a hung check's container is
killed and removed. Every container is removed at the end unless --keep.

exit codes: 0 every check passed · 1 a check failed · 2 bad input · 3 could not run: no engine, no
such image, no Python in it
"""

PLAN_FLAGS = ("gpu", "wsl", "os", "arch", "driver", "python", "glibc", "distro", "macos", "machine", "torch", "compile")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("docker", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    d = p.add_subparsers(dest="docker_command", metavar="ACTION", parser_class=type(p))
    p.set_defaults(run=lambda args: _usage(p))
    _add_build(d)
    _add_verify(d)
    _add_base(d)
    _add_ci(d)


def _usage(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return 2


def _add_build(d: Any) -> None:

    b = d.add_parser("build", help="build the image a plan describes", description="Build the image a plan "
                     "describes (from a lock file or plan flags) through the Docker engine.", epilog=BUILD_EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_lock(b, "build the plan this envcheck.lock.toml records")
    add_plan_arguments(b)
    o = b.add_argument_group("image")
    o.add_argument("--tag", metavar="T", help="image tag (default: envcheck/torch:<torch version>, e.g. 2.13.0-cpu)")
    o.add_argument("--base-image", metavar="IMAGE",
                   help="FROM this image instead of the plan's (e.g. envcheck-base:bookworm from `envcheck docker base`)")
    o.add_argument("--wheelhouse", metavar="DIR", type=path_arg,
                   help="install from wheels on the host (pip --no-index); an empty DIR is filled by pip download")
    o.add_argument("--packages", metavar="LIST",
                   help="only these of the plan's pins (comma-separated, e.g. torch when no torchvision wheel is at hand)")
    add_mirror(o, "a mirror of https://download.pytorch.org/whl (as `envcheck plan --mirror`)")
    o.add_argument("--keep", action="store_true", help="keep the containers and images of a failed build (to debug it)")
    add_json(o, "print {tag, id, base_image, pins, wheels, notes, seconds, dockerfile}")
    add_matrices(o)
    b.set_defaults(run=run_build, needs_extras=("docker",))


def _add_verify(d: Any) -> None:
    from envcheck.verify.checks import CHECKS

    v = d.add_parser("verify", help="run verify's checks inside an image", description="Run `envcheck verify`'s "
                     "checks inside containers of IMAGE and print the same report.", epilog=VERIFY_EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("image", metavar="IMAGE", help="an image tag or id on the engine")
    add_lock(v, "compare with this envcheck.lock.toml (default: the image's io.envcheck.lock label)")
    add_checks(v, f"only these checks: {', '.join(CHECKS)}")
    add_skip(v)
    add_tier(v)
    add_timeout(v, 60.0, "seconds per check before it counts as hung (import ×2, torch_compile ×5); default 60")
    add_interpreter(v, "the interpreter inside the image (default: the first of python3, python, "
                       "/opt/venv/bin/python that has torch)")
    v.add_argument("--keep", action="store_true", help="keep the containers (to inspect them)")
    add_json(v, "print {checks: [...], facts: {...}, docker: {...}}")
    add_matrices(v)
    v.set_defaults(run=run_verify, save_facts=None, needs_extras=("docker",))


def _add_base(d: Any) -> None:
    from envcheck.docker.base import TAG

    b = d.add_parser("base", help="build the local Debian base image (debootstrap + docker import)",
                     description="Build a local base image where no registry is reachable: Debian bookworm "
                     "minbase with python3 (3.11) in /opt/venv and gcc/g++, via debootstrap and docker import. "
                     "Built only when absent (or from an older recipe). Needs root and debootstrap.")
    b.add_argument("--tag", default=TAG, help=f"image tag (default {TAG})")
    b.add_argument("--mirror", metavar="URL", help="Debian mirror for debootstrap (default: deb.debian.org)")
    add_force(b, "build even if the image exists")
    add_json(b, "print {tag, id, built, recipe}")
    b.set_defaults(run=run_base, needs_extras=("docker",))


def _add_ci(d: Any) -> None:
    c = d.add_parser("ci", help="render, build and verify one CI target of matrices/docker.toml",
                     description="One [[ci_target]] of matrices/docker.toml: render its plan, gather its wheels "
                     "(pip download into --wheelhouse-root/TARGET), build, verify inside and write the JSON "
                     "report. A target whose wheels cannot be had here is rendered only, and the report says why.")
    c.add_argument("target", metavar="TARGET", help="a ci_target name (cpu, cu130, rocm …)")
    c.add_argument("--report", metavar="FILE", type=path_arg,
                   help="write the JSON report here (an existing file only with --force)")
    add_force(c, "replace an existing --report file")
    c.add_argument("--base-image", metavar="IMAGE", help="FROM this image (e.g. envcheck-base:bookworm)")
    c.add_argument("--wheelhouse-root", metavar="DIR", type=path_arg, default=Path(".nox/wheelhouse"),
                   help="wheels are gathered in DIR/TARGET (kept between runs); default .nox/wheelhouse")
    add_timeout(c, 120.0, "seconds per verify check (default 120)")
    add_skip(c, "verify checks to leave out")
    c.add_argument("--keep-image", action="store_true", help="keep the image after verifying it")
    add_matrices(c)
    c.set_defaults(run=run_ci, needs_extras=("docker",), checks=None, python=None, keep=False, json=False, save_facts=None, lock=None)


# -- progress -------------------------------------------------------------------------------------

def _say() -> Any:
    """Progress lines on stderr: build steps bold, the rest dim."""
    from rich.markup import escape

    from envcheck.cli.output import console

    con = console(stderr=True)

    def say(line: str) -> None:
        from envcheck.edge import terminal_text

        line = terminal_text(line, keep_newlines=False)  # the engine relays pip's colours: not ours to replay
        style = "bold" if line.startswith("Step ") else "dim"
        line = line if len(line) <= 200 else line[:199] + "…"  # the lock label is long
        con.print(f"[{style}]{escape(line)}[/]")
    return say


# -- build ----------------------------------------------------------------------------------------

def build_request(args: argparse.Namespace) -> Any:
    """The ``docker build`` flags as the use case's request: ``--lock`` or the plan flags, not both.

    Raises:
        UsageError: both given, or a bad ``--mirror``.
    """
    from envcheck.app.docker import BuildRequest
    from envcheck.errors import UsageError
    from envcheck.resolve.plan import parse_mirrors

    mirrors = parse_mirrors(args.mirror)
    flags = [f for f in PLAN_FLAGS if getattr(args, f)] + (["backend"] if args.backend != "auto" else [])
    if args.lock and (flags or mirrors):
        raise UsageError("--lock builds the plan the lock records: leave out " + ", ".join(
            f"--{f}" for f in flags + (["mirror"] if mirrors else [])))
    packages = [p for p in (args.packages or "").split(",") if p.strip()] or None
    return BuildRequest(lock=args.lock, plan=None if args.lock else plan_request(args), matrices=args.matrices,
                        tag=args.tag, base_image=args.base_image, wheelhouse=args.wheelhouse, packages=packages,
                        keep=args.keep)


def run_build(args: argparse.Namespace) -> int:
    from envcheck.app.docker import docker_build

    out = docker_build(build_request(args), say=_say())
    if args.json:
        json.dump(out.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from rich.markup import escape

    from envcheck.cli.output import console

    con = console()
    pins = " ".join(f"{k}=={v}" for k, v in out.pins.items())
    con.print(f"[bold green]built[/] [bold]{escape(out.tag)}[/] ({out.id[:19]}) in {out.seconds} s")
    con.print(f"  FROM {escape(out.base_image)}; {escape(pins)}; wheels: {escape(shown(out.wheels) if out.wheels else str(out.wheels))}")
    for n in out.notes:
        con.print(f"  note: {escape(n)}")
    con.print(f"  check it from inside: envcheck docker verify {escape(out.tag)}")
    return 0


# -- verify ---------------------------------------------------------------------------------------

def print_docker_head(info: Dict[str, Any]) -> None:
    from rich.markup import escape

    from envcheck.cli.output import console

    con = console()
    con.print(f"[bold]envcheck docker verify — {escape(info['image'])}[/] ({info['image_id'][:19]}), "
              f"engine {escape(info['engine'])}")
    con.print(f"  interpreter: {escape(info['interpreter'])} ({escape(info['interpreter_found'])}); lock: "
              f"{escape(info['lock'])}")
    applied = ", ".join(info["applied"]) or "none"
    con.print(f"  docker run flags ({escape(info['run_flags_from'])}): {escape(applied)}")
    for s in info["skipped"]:
        con.print(f"  [yellow]skipped[/] {escape(s['flag'])}: {escape(s['reason'])}")


def _checks(args: argparse.Namespace) -> List[str]:
    """``--checks``/``--skip``/``--tier`` (and ``--timeout``) checked; the checks they leave."""
    from envcheck.app.verify import select_checks

    checks = select_checks(args.checks, args.skip, getattr(args, "tier", None))
    check_timeout(args.timeout)
    return checks


def run_verify(args: argparse.Namespace) -> int:
    from envcheck.app.docker import ImageVerifyRequest, docker_verify
    from envcheck.cli.output import CheckProgress, verify_output
    from envcheck.verify.checks import probes_for

    checks = _checks(args)
    request = ImageVerifyRequest(image=args.image, checks=checks, lock=args.lock, python=args.python,
                                 timeout=args.timeout, matrices=args.matrices, keep=args.keep,
                                 tier=args.tier or ("custom" if args.checks or args.skip else "full"))
    with CheckProgress.for_stderr(len(probes_for(checks))) as progress:
        result = docker_verify(request, progress=progress)
    if not args.json:
        print_docker_head(result.extra["docker"])  # type: ignore[arg-type]
    return verify_output(args, result)


# -- base -----------------------------------------------------------------------------------------

def run_base(args: argparse.Namespace) -> int:
    from envcheck.app.docker import docker_base

    out = docker_base(args.tag, args.mirror, force=args.force, say=_say())
    if args.json:
        json.dump(out.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        what = "built" if out.built else "already there (same recipe): not rebuilt"
        print(f"{out.tag} {out.id[:19]}: {what}")
    return 0


# -- ci -------------------------------------------------------------------------------------------

def run_ci(args: argparse.Namespace) -> int:
    from envcheck.app.docker import CiRequest, docker_ci
    from envcheck.cli.output import CheckProgress, print_report
    from envcheck.verify.checks import probes_for

    checks = _checks(args)
    request = CiRequest(target=args.target, matrices=args.matrices, base_image=args.base_image,
                        wheelhouse_root=args.wheelhouse_root, timeout=args.timeout, checks=checks,
                        keep_image=args.keep_image, report=args.report, force=args.force)
    with CheckProgress.for_stderr(len(probes_for(checks))) as progress:
        result = docker_ci(request, say=_say(), progress=progress)
    got = result.verified
    if got is not None:
        print_docker_head(got.extra["docker"])  # type: ignore[arg-type]
        print_report(got.checks, got.facts, got.elapsed)
    doc = result.document
    print(f"ci target {doc['target']}: {doc.get('status')}" + (f" — {doc['reason']}" if doc.get("reason") else "")
          + (f" (report: {shown(args.report)})" if args.report else ""))
    return result.exit_code
