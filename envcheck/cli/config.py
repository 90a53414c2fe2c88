"""``envcheck config [COMMAND]`` — the settings a command would run with, and where each came from."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any
from envcheck.cli.conventions import COMMAND_HELP
from envcheck.cli.flags import add_json

HELP = COMMAND_HELP["config"]

EPILOG = """\
Settings come from, highest first: the command line · ENVCHECK_<COMMAND>_<FLAG> · ENVCHECK_<FLAG>
· the config file's [<command>] table · its top level · the default. The config file is --config
FILE, else $ENVCHECK_CONFIG, else envcheck.toml or pyproject.toml's [tool.envcheck], searched from
here upward. In pyproject.toml a command's table is [tool.envcheck.plan]; in envcheck.toml (and a
--config file) it is [plan] ([docker-build] for `docker build`). An unknown key or table is exit 2.
-o and --force come from the command line only; an ENVCHECK_* variable that sets nothing (one of
those, or a typo) is a warning naming it.

examples:
  envcheck config plan                 what `envcheck plan` would use here
  ENVCHECK_BACKEND=cpu envcheck config plan --json
  # pyproject.toml
  [tool.envcheck]
  mirror = ["https://mirror.example/pytorch-whl"]
  [tool.envcheck.plan]
  backend = "cu130"
  format = "pip,uv"
  # envcheck.toml: the same settings
  mirror = ["https://mirror.example/pytorch-whl"]
  [plan]
  backend = "cu130"
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("config", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", nargs="*", metavar="COMMAND", help="the command (plan, verify, matrix update…); default: plan")
    add_json(p, "print {command, file, settings: [{flag, env, value, origin}]}")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """``args.build_parser`` (set by :func:`envcheck.cli.main`) builds the whole command line."""
    from envcheck.cli.conventions import command_path, settings_universe
    from envcheck.errors import UsageError
    from envcheck.settings import apply_settings, effective

    target = list(args.target or ["plan"])
    parser = args.build_parser()
    path, sub = command_path(parser, target)
    if path != target or path == ["config"]:
        raise UsageError(f"config {' '.join(target)}: not a command (try plan, verify, probe, matrix update)")
    settings = apply_settings(sub, "-".join(path), getattr(args, "config", None), getattr(args, "no_config", False),
                              os.environ, Path.cwd(), universe=lambda: settings_universe(parser))
    top = {a.dest: a.default for a in parser._actions}
    defaults = {a.dest: top.get(a.dest) if a.default is argparse.SUPPRESS else a.default for a in sub._actions}
    ns = argparse.Namespace(**defaults)
    rows = effective(sub, ns, settings, [], "-".join(path))
    if args.json:
        json.dump({"command": " ".join(path), "file": str(settings.file) if settings.file else None,
                   "settings": rows}, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(f"envcheck {' '.join(path)} — config file: {settings.file or 'none'}\n")
    width = max(len(r["flag"]) for r in rows) if rows else 0
    for r in rows:
        sys.stdout.write(f"  {r['flag']:<{width}}  {json.dumps(r['value'], default=str):<24}  {r['origin']}\n")
    return 0
