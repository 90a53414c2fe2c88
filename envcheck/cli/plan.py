"""``envcheck plan`` — resolve the compatibility matrix for a machine and write install specs."""

from __future__ import annotations

import argparse
import json
import sys

from envcheck.errors import UsageError
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

HELP = "plan a PyTorch install for this machine or one you describe"

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
                        "(install.sh, or install.ps1 for Windows: the recipe as one runnable script) or all; "
                        "default: pip,conda,docker,lock. Without -o, the files are printed")
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
    o.add_argument("--matrices", metavar="DIR", type=Path, help="read the matrix from DIR (default: built in)")
    p.set_defaults(run=run)


def add_plan_arguments(p: Any) -> None:
    """The target-machine and what-to-install flags (shared by ``plan`` and ``docker build``)."""
    t = p.add_argument_group("the target machine (default: this one)")
    t.add_argument("--gpu", action="append", nargs="+", default=[], metavar="NAME",
                   help="a GPU by name: 7900xtx, \"RTX 4090\", H100, MI300X, \"GTX 1080 Ti\"…, or by "
                        "architecture: sm_89, gfx1100; \"2x A100\" counts; repeat for several GPUs "
                        "(`envcheck gpus` lists the names)")
    t.add_argument("--wsl", action="store_true", help="Linux under WSL2 on Windows")
    t.add_argument("--os", type=str.lower, choices=["linux", "windows", "macos"], help="operating system")
    t.add_argument("--arch", help="CPU architecture: x86_64 or aarch64 (arm64)")
    t.add_argument("--driver", metavar="VERSION",
                   help="NVIDIA driver (570.124.06); with an AMD GPU and --wsl the Windows "
                        "Adrenalin driver (25.3.1)")
    t.add_argument("--python", metavar="X.Y", help="target Python: 3.12, 3.13t (free-threaded), 3.7-32 (32-bit)")
    g = t.add_mutually_exclusive_group()
    g.add_argument("--glibc", metavar="X.Y", help="glibc of the target Linux (2.17 for CentOS 7)")
    g.add_argument("--distro", metavar="NAME", help="Linux distribution: centos7, ubuntu22.04, debian12, al2023…")
    t.add_argument("--macos", metavar="VERSION", help="macOS version (14.5)")
    t.add_argument("--machine", metavar="FILE", type=Path, help="a machine file from `envcheck probe -o FILE`")
    r = p.add_argument_group("what to install")
    r.add_argument("--torch", metavar="SPEC", help="torch release(s): 2.7, 2.7.1, 2.1.*, \">=2.5,<2.8\"")
    r.add_argument("--backend", default="auto", metavar="BACKEND",
                   help="auto (default), cpu, cuda, cuXYZ (cu128), rocm, rocmX.Y (rocm6.3), xpu, mps")
    r.add_argument("--compile", action="store_true",
                   help="require torch.compile to work (reject releases whose Dynamo lacks the Python)")
    r.add_argument("--prefer", choices=("complete", "newest"), default="complete",
                   help="complete (default): the newest release with torchvision/torchaudio on record and "
                        "verified rows; newest: the newest release that fits, even without them")


TARGET_FLAGS = ("gpu", "wsl", "os", "arch", "glibc", "distro", "macos")


def gpu_names(matrix: Any, groups: List[List[str]]) -> List[str]:
    """``--gpu RTX 4090`` (unquoted) means one GPU; ``--gpu a100 h100`` means two.

    Raises:
        UnknownGpuError: a name matches no GPU (exit 2, with close matches).
    """
    from envcheck.errors import UnknownGpuError
    from envcheck.machine.describe import gpu_from_arch, split_count

    def known(name: str) -> bool:
        text, _ = split_count(name)
        if gpu_from_arch(text) is not None:
            return True
        matrix.find_gpu(text)
        return True

    names: List[str] = []
    for tokens in groups:
        joined = " ".join(tokens)
        try:
            known(joined)
            names.append(joined)
            continue
        except UnknownGpuError:
            if len(tokens) == 1:
                raise
        for tok in tokens:
            known(tok)
            names.append(tok)
    return names


def build_machine(args: argparse.Namespace, matrix: Any):
    """The Machine to plan for: --machine file, named flags, or this machine (probe)."""
    from envcheck.machine.describe import apply_flags
    from envcheck.machine.io import load_machine

    names = gpu_names(matrix, args.gpu)
    named = any(getattr(args, f) for f in TARGET_FLAGS)
    if args.machine:
        base = load_machine(args.machine)
    elif named:
        base = None
    else:
        from envcheck.probe import probe_machine

        base = probe_machine(matrix)
    return apply_flags(matrix, base, gpus=names, wsl=args.wsl, os=args.os, arch=args.arch,
                       driver=args.driver, python=args.python, glibc=args.glibc,
                       distro=args.distro, macos=args.macos)


def check_request(request: Any, matrix: Any) -> None:
    """--torch must match a release on record and --backend name a variant on record.

    Raises:
        UsageError: they do not (exit 2), listing what is known.
    """
    from envcheck.errors import UsageError

    versions = matrix.versions()
    if request.nightly:  # planned from the nightly index with the nearest release's facts
        return
    if request.torch is not None and not any(request.torch.contains(v, prereleases=True) for v in versions):
        raise UsageError(f"--torch {request.torch_text}: no torch release on record matches (envcheck knows "
                         f"{versions[-1]} … {versions[0]}; `envcheck matrix show` lists them)")
    family = {"auto", "cpu", "cuda", "rocm", "xpu", "mps"}
    variants = {b.variant for b in matrix.builds}
    want = request.backend
    if want not in family and not any(v == want or v.startswith(want + ".") for v in variants):
        known = sorted(v for v in variants if v.startswith(("cu", "rocm")))
        raise UsageError(f"--backend {want}: no build on record has that variant; known: " + ", ".join(known))


def plan_json(res: Any, plan: Any, files: List[str]) -> Dict[str, Any]:
    """The ``plan --json`` object (see DESIGN.md: chosen, candidates, …)."""
    chosen: Optional[Dict[str, Any]] = None
    if plan is not None:
        c = plan.candidate
        chosen = {
            "torch": c.release.version,
            "variant": c.build.variant,
            "python": plan.python or None,
            "torchvision": plan.pins.get("torchvision"),
            "torchaudio": plan.pins.get("torchaudio"),
            "index_url": plan.index_url,
            "index_kind": plan.index_kind,
            "channel": c.build.channel,
            "pins": plan.pins,
            "pip": plan.pip_lines(),
            "driver": plan.driver or None,
            "post_install": [{"key": s.key, "shell": s.shell} for s in plan.steps],
            "steps": [s.to_dict() for s in plan.recipe],
            "hosts": plan.hosts(),
            "mirror_not_rewritten": plan.mirror_report(),
            "warnings": [w.to_dict() for w in c.warnings],
            "expect": plan.expect().to_dict(),
        }
    fb = res.fallback
    return {
        "status": res.status,
        "machine": res.machine.to_dict(),
        "request": {"torch": res.request.torch_text or None, "backend": res.request.backend,
                    "compile": res.request.compile, "prefer": res.request.prefer},
        "chosen": chosen,
        "fallback": None if fb is None else {"torch": fb.release.version, "variant": fb.build.variant,
                                             "python": fb.python},
        "alternatives": res.alternatives,
        "assumptions": res.assumptions,
        "candidates": [c.to_dict() for c in res.candidates],
        "files": files,
    }


def resolve_args(args: argparse.Namespace, mirrors: Any = (), hashes: bool = False) -> Tuple[Any, Any, Any]:
    """The flags of :func:`add_plan_arguments` (and ``--matrices``) → ``(matrix, resolution, plan)``;
    the plan is ``None`` when no build fits.

    Raises:
        UsageError: a bad flag, unknown GPU, a --torch/--backend the matrix does not know (exit 2).
    """
    from envcheck.matrix import load_matrix
    from envcheck.resolve import Request, resolve
    from envcheck.resolve.plan import make_plan

    request = Request(
        torch=Request.parse_torch(args.torch) if args.torch else None,
        torch_text=args.torch or "",
        backend=Request.parse_backend(args.backend),
        compile=args.compile,
        prefer=getattr(args, "prefer", "complete"),
    )
    matrix = load_matrix(args.matrices)
    check_request(request, matrix)
    machine = build_machine(args, matrix)
    res = resolve(machine, request, matrix)
    return matrix, res, make_plan(res, matrix, mirrors, hashes=hashes)


def only_packages(plan: Any, matrix: Any, packages: str) -> Any:
    """The plan pinning only ``packages`` (``--packages torch``), its recipe rebuilt to match.

    Raises:
        UsageError: a package the plan does not pin, or a list without torch.
    """
    import dataclasses

    from envcheck.docker.wheelhouse import select_pins
    from envcheck.resolve.recipe import build_recipe

    pins = select_pins(plan.pins, packages.split(","))
    out = dataclasses.replace(plan, pins=pins, hashes={k: v for k, v in plan.hashes.items() if k in pins})
    out.recipe = build_recipe(out, matrix, plan.resolution.request.compile, plan.steps)
    return out


def run(args: argparse.Namespace) -> int:
    from envcheck.render import parse_formats, render
    from envcheck.render.write import write_outputs
    from envcheck.resolve.plan import parse_mirrors

    args.format_given = args.format is not None
    formats = parse_formats(args.format or "pip,conda,docker,lock")
    mirrors = parse_mirrors(args.mirror)
    if args.output is not None:
        if not args.output.strip():
            raise UsageError("-o: give a folder to write into (-o out/)")
        args.output = Path(args.output)
    matrix, res, plan = resolve_args(args, mirrors, hashes=args.hashes)
    if plan is not None and args.packages:
        plan = only_packages(plan, matrix, args.packages)
    args.exit_code = 0 if plan is not None else 1
    written: List[str] = []
    if plan is not None and args.output:
        written = [str(p) for p in write_outputs(args.output, render(plan, formats), args.force)]
    if plan is not None and args.download is not None:
        from envcheck.download import download_plan

        def say(text: str) -> None:
            if not args.json:
                sys.stderr.write(f"envcheck: {text}\n")

        written += [str(p) for p in download_plan(plan, matrix, args.download, args.force, say)]
    if args.json:
        json.dump(plan_json(res, plan, written), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif plan is not None and args.format_given and not args.output:
        files = render(plan, formats)  # --format without -o: print the files
        for name, text in files.items():
            if len(files) > 1:
                sys.stdout.write(f"==> {name} <==\n")
            sys.stdout.write(text)
    else:
        from envcheck.cli.plan_text import print_plan

        print_plan(res, plan, written, explain=args.explain, wrote_dir=args.output)
    return 0 if plan is not None else 1
