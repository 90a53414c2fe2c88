"""The ``envcheck`` command line: argument parsing, dispatch, and the one place errors are caught.

Each sub-command lives in its own module with ``add_parser(subparsers)`` and ``run(args) -> int``;
heavy imports happen inside ``run`` so ``envcheck --help`` and ``envcheck plan`` start fast.
Exit codes: 0 ok · 1 no compatible build / a check failed · 2 bad input.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import List, Optional

from envcheck import __version__
from envcheck.errors import EnvcheckError

COMMANDS = ["plan", "probe", "verify", "explain", "gpus", "matrix", "docker"]

DESCRIPTION = """\
envcheck makes PyTorch environments right the first time, and proves they work.

  envcheck plan --gpu 7900xtx --wsl          plan an install for a machine you describe
  envcheck plan -o out/                      plan for this machine; write pip/conda/Docker/lock files
  envcheck verify --lock out/envcheck.lock.toml   run real smoke tests in this environment
  envcheck gpus rtx                          which GPU names envcheck knows
"""


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a short message (never a traceback) on bad usage."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[name-defined]  # noqa: F821
        self.print_usage(sys.stderr)
        sys.stderr.write(f"envcheck: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="envcheck",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"envcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"envcheck.cli.{name}")
        except ModuleNotFoundError as exc:  # a command not built yet
            if exc.name == f"envcheck.cli.{name}":
                continue
            raise
        mod.add_parser(sub)
    return parser


def _ensure_streams() -> None:
    """A closed stdout/stderr (``envcheck … >&-``) becomes /dev/null instead of a crash."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")


def _silence_stdout() -> None:
    """After EPIPE (``envcheck … | head -1``): point stdout at /dev/null so the exit flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: Optional[List[str]] = None) -> int:
    """Run envcheck; returns the exit code.

    Commands set ``args.exit_code`` before printing, so a reader that closes the pipe early
    (``| head -1``) does not change the exit code.
    """
    _ensure_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except EnvcheckError as exc:
        sys.stderr.write(f"envcheck: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("envcheck: interrupted\n")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return int(getattr(args, "exit_code", 0) or 0)
