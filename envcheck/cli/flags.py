"""The flags several commands share, defined once: ``--matrices``, the target-machine and
what-to-install flags of ``plan`` (also ``docker build``), and the ``--timeout`` check.

This and :mod:`envcheck.cli.output` are the only modules a command module imports from ``cli/``;
command modules never import each other (tests/structure/test_layers.py).
"""

from __future__ import annotations

import argparse

from envcheck.cli.conventions import path_arg, path_text
from envcheck.errors import UsageError

TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Optional

    from envcheck.app.plan import PlanRequest

#: The longest ``--timeout`` accepted (seconds): a day per check is already no timeout at all.
MAX_TIMEOUT = 86400.0


def add_matrices(p: Any, help: str = "read the matrix from DIR (default: built in)") -> None:
    """``--matrices DIR``: the matrix folder to read (default: the shipped one + your update data)."""
    p.add_argument("--matrices", metavar="DIR", type=path_arg, help=help)


def check_timeout(value: float, flag: str = "--timeout") -> float:
    """``value`` if it is a finite number of seconds > 0 and ≤ :data:`MAX_TIMEOUT`.

    Raises:
        UsageError: ``nan``, ``inf``, ``0``, ``-1``, ``1e309`` (exit 2).
    """
    if not 0 < value <= MAX_TIMEOUT:  # (False for nan, and inf is above the bound: no math.isfinite needed)
        raise UsageError(f"{flag} {value:g}: expected a number of seconds > 0 and ≤ {MAX_TIMEOUT:g}")
    return value


def add_plan_arguments(p: Any) -> None:
    """The target-machine and what-to-install flags (shared by ``plan`` and ``docker build``)."""
    t = p.add_argument_group("the target machine (default: this one)")
    t.add_argument("--gpu", action="append", nargs="+", default=[], metavar="NAME",
                   help="a GPU by name: 7900xtx, \"RTX 4090\", H100, MI300X, \"GTX 1080 Ti\"…, by PCI id "
                        "(10de:2684, an `lspci -nn` line, a Windows hardware id PCI\\VEN_10DE&DEV_2684…), by "
                        "chip codename (AD102, \"Navi 31\"), by architecture: sm_89, gfx1100, or as tools print "
                        "it (\"GPU 0: NVIDIA GH200 480GB\", \"AMD Instinct MI300X (gfx942:sramecc+:xnack-)\"); "
                        "\"2x A100\" counts; repeat for several GPUs (`envcheck gpus` lists the names)")
    t.add_argument("--for-gpu", metavar="N|NAME",
                   help="with GPUs of several vendors, the one to plan for: its position (1 = the first "
                        "--gpu or probed GPU), its name, or nvidia/amd/intel (default: the first "
                        "discrete GPU's vendor); the others are listed as unused")
    t.add_argument("--wsl", action="store_true", help="Linux under WSL2 on Windows")
    t.add_argument("--os", type=str.lower, choices=["linux", "windows", "macos"], help="operating system")
    t.add_argument("--arch", help="CPU architecture: x86_64 or aarch64 (arm64)")
    t.add_argument("--driver", metavar="VERSION",
                   help="NVIDIA driver (570.124.06), or the \"CUDA Version\" nvidia-smi prints (12.8); with "
                        "an AMD GPU and --wsl the Windows Adrenalin driver (25.3.1; Device Manager's 32.0.x "
                        "number is taken but cannot be compared)")
    t.add_argument("--python", metavar="X.Y", help="target Python: 3.12, 3.13t (free-threaded), 3.7-32 (32-bit)")
    g = t.add_mutually_exclusive_group()
    g.add_argument("--glibc", metavar="X.Y", help="glibc of the target Linux (2.17 for CentOS 7)")
    g.add_argument("--distro", metavar="NAME", help="Linux distribution: centos7, ubuntu22.04, debian12, al2023…")
    t.add_argument("--macos", metavar="VERSION", help="macOS version (14.5)")
    t.add_argument("--machine", metavar="FILE", type=path_arg, help="a machine file from `envcheck probe -o FILE`")
    r = p.add_argument_group("what to install")
    r.add_argument("--torch", metavar="SPEC", help="torch release(s): 2.7, 2.7.1, 2.1.*, \">=2.5,<2.8\"")
    r.add_argument("--backend", default="auto", metavar="BACKEND",
                   help="auto (default), cpu, cuda, cuXYZ (cu128), rocm, rocmX.Y (rocm6.3), xpu, mps")
    r.add_argument("--without", action="append", default=[], metavar="PKG",
                   help="leave a companion out of the install: torchvision, torchaudio (comma list or repeat)")
    r.add_argument("--compile", action="store_true",
                   help="require torch.compile to work (reject releases whose Dynamo lacks the Python)")
    r.add_argument("--prefer", choices=("complete", "newest"), default="complete",
                   help="complete (default): the newest release with torchvision/torchaudio on record and "
                        "verified rows; newest: the newest release that fits, even without them")


def plan_request(args: argparse.Namespace, hashes: bool = False) -> PlanRequest:
    """The flags of :func:`add_plan_arguments` (+ ``--mirror``, ``--matrices``) as the use case's request."""
    from envcheck.app.plan import PlanRequest, Target

    target = Target(gpus=[list(g) for g in args.gpu], wsl=args.wsl, os=args.os, arch=args.arch,
                    driver=args.driver, python=args.python, glibc=args.glibc, distro=args.distro,
                    macos=args.macos, machine_file=args.machine, for_gpu=getattr(args, "for_gpu", None))
    return PlanRequest(target=target, torch=args.torch, backend=args.backend, compile=args.compile,
                       prefer=getattr(args, "prefer", "complete"),
                       mirrors=list(getattr(args, "mirror", None) or []), hashes=hashes,
                       matrices=getattr(args, "matrices", None),
                       without=list(getattr(args, "without", None) or []))


# -- flags several commands share, each defined here once (tests/structure/test_layers.py) --------

def add_json(p: Any, help: str = "print JSON") -> None:
    """``--json``: one JSON document on stdout instead of the text report."""
    p.add_argument("--json", action="store_true", help=help)


def add_force(p: Any, help: str) -> None:
    """``--force``: let the command replace a file that exists (never without it)."""
    p.add_argument("--force", action="store_true", help=help)


def add_timeout(p: Any, default: float, help: str) -> None:
    """``--timeout S`` (seconds; checked with :func:`check_timeout` where it bounds a wait)."""
    p.add_argument("--timeout", metavar="S", type=float, default=default, help=help)


def add_lock(p: Any, help: str, path: bool = True) -> None:
    """``--lock FILE``: an envcheck.lock.toml (``path=False``: a path written into a job for the
    nodes to read, not read here)."""
    p.add_argument("--lock", metavar="FILE", help=help, type=path_arg if path else path_text)


def add_checks(p: Any, help: str) -> None:
    """``--checks LIST``: only these verify checks (comma-separated)."""
    p.add_argument("--checks", metavar="LIST", help=help)


def add_skip(p: Any, help: str = "leave these checks out (e.g. torch_compile)") -> None:
    """``--skip LIST``: verify checks to leave out (comma-separated)."""
    p.add_argument("--skip", metavar="LIST", help=help)


#: ``--tier``'s help where it picks the checks verify runs (verify, docker verify)
TIER_HELP = ("quick: import, build, environment, arch, driver, lock, allocation, one matmul (seconds); "
             "full: every check (default)")


def add_tier(p: Any, default: Optional[str] = None, help: Optional[str] = TIER_HELP) -> None:
    """``--tier quick|full``: the verify checks of a tier (quick: seconds; full: every check)."""
    p.add_argument("--tier", choices=("quick", "full"), default=default, help=help)


def add_interpreter(p: Any, help: str, metavar: str = "PATH") -> None:
    """``--python``: the interpreter to verify (``plan --python X.Y`` is the target's version instead,
    in :func:`add_plan_arguments`)."""
    p.add_argument("--python", metavar=metavar, help=help, type=path_text)


#: ``plan --mirror``'s help
MIRROR_HELP = ("a mirror of https://download.pytorch.org/whl (or PREFIX=URL for another index); "
               "rewrites the index URLs in every file")


def add_mirror(p: Any, help: str = MIRROR_HELP) -> None:
    """``--mirror URL`` (repeatable): a mirror of the PyTorch wheel index (``docker base --mirror`` is
    a Debian mirror: another flag of that name, defined there)."""
    p.add_argument("--mirror", action="append", default=[], metavar="URL", help=help)
