"""The options every command shares, as uv/pip/conda users expect them.

``--color auto|always|never`` (``NO_COLOR``, ``FORCE_COLOR``, ``TERM=dumb`` honoured in ``auto``),
``-q``/``-v`` (repeatable), ``--strict`` (warnings fail: exit 1), ``--config FILE``/``--no-config``.
They are accepted before the command (``envcheck -v plan``) and after it (``envcheck plan -v``).
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager

TYPE_CHECKING = False  # typing and pathlib are not imported at run time: `envcheck --help` starts without them
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

#: Every command and its one-line help: the top-level help lists them from here without importing
#: the command modules (each module's ``HELP`` is its entry; envcheck/cli/__init__.py builds the parser).
COMMAND_HELP = {
    "plan": "plan a PyTorch install for this machine or one you describe",
    "probe": "describe this machine: OS, glibc, Python, WSL, GPUs, drivers, ROCm, Docker",
    "verify": "run real smoke tests (import, kernels, conv, compile, collectives) in an environment",
    "explain": "explain a PyTorch error message or traceback: cause and fix",
    "gpus": "list the GPUs envcheck knows (name, vendor, arch, aliases)",
    "matrix": "show, validate or refresh the compatibility matrix (matrices/*.toml)",
    "docker": "build a Docker image from a plan and verify it from inside",
    "fleet": "merge node reports (pass counts, failures by cause, drift), compare fleets, launch via Slurm/K8s",
    "config": "show the effective settings of a command and where each came from",
    "completion": "print a shell completion script (bash, zsh, fish, powershell)",
    "lock": "check that envcheck.lock.toml files still resolve against the current matrix",
}


#: global options that take the next word as their value (``--color never``)
TAKES_VALUE = ("--color", "--config")


def terminal_columns(fallback: int = 80) -> int:
    """The terminal's width in columns, as :func:`shutil.get_terminal_size` finds it (``$COLUMNS``,
    else standard output's terminal, else ``fallback``) without importing shutil (and with it
    bz2, lzma and fnmatch: ~3 ms of every start, issue #9)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or fallback  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return fallback


class Parser(argparse.ArgumentParser):
    """argparse's parser, its help as wide as the terminal without importing shutil: argparse's
    own formatter asks :func:`shutil.get_terminal_size` for the width, and one is made for every
    ``add_argument`` (to check the flag's metavar); this one gets the same width from
    :func:`terminal_columns`."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        make: Any = self.formatter_class  # typeshed's protocol leaves out the width every formatter takes
        return make(prog=self.prog, width=terminal_columns() - 2)


def path_arg(text: str) -> Any:
    """``type=`` of a path flag: a :class:`pathlib.Path`, with pathlib imported only when one is given;
    an empty text is an :class:`EmptyPath` (a Path would make it ``.``)."""
    if not text:
        return EmptyPath()
    from pathlib import Path

    return Path(text)


def path_text(text: str) -> str:
    """``type=`` of a path flag kept as text (``plan -o``: no pathlib on a plan's way, #9); an empty
    text is an :class:`EmptyPath`."""
    return text if text else EmptyPath()


class EmptyPath(str):
    """A path flag given an empty string: refused by ``_check_paths`` before anything runs (breaker5
    F9: `verify --report ''` was ignored without a word)."""


def file_arg(text: str) -> Any:
    """``type=`` of a one-file output flag (``probe -o``, ``--save-facts``, ``--junit``, ``--save``): a
    :class:`pathlib.Path`, or for a text that names a folder (``dir/``, ``dir/.``: a Path forgets the
    slash) a :class:`NamesFolder`, refused by ``_check_paths`` before anything runs — ``probe -o
    newdir/`` wrote a file called ``newdir`` (breaker5 F9)."""
    if text and text.endswith(("/", os.sep, "/.", os.sep + ".")):
        return NamesFolder(text)
    return path_arg(text)


class NamesFolder(str):
    """A one-file flag's value that names a folder (see :func:`file_arg`)."""


def add_common(p: argparse.ArgumentParser, top: bool) -> None:
    """The shared options; on sub-commands their default is SUPPRESS so a value given before the
    command is not reset after it."""
    d: Dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    g = p.add_argument_group("global options")
    g.add_argument("--color", choices=["auto", "always", "never"], **({"default": "auto"} if top else d),
                   help="colour: auto (a terminal without NO_COLOR/TERM=dumb; FORCE_COLOR forces), always, never")
    g.add_argument("-v", "--verbose", action="count", **({"default": 0} if top else d),
                   help="say more on stderr (repeatable)")
    g.add_argument("-q", "--quiet", action="count", **({"default": 0} if top else d),
                   help="say less on stderr: -q drops notes and warnings, -qq everything but errors")
    g.add_argument("--strict", action="store_true", **({"default": False} if top else d),
                   help="warnings fail: exit 1 when the command warned")
    add_config_flags(g, d, top)


def add_config_flags(g: Any, d: Dict[str, Any], top: bool) -> None:
    """``--config FILE`` and ``--no-config``: defined here only, used by every parser and by
    :func:`config_parser`, which reads them before the command's own parse."""
    g.add_argument("--config", metavar="FILE", type=path_arg, **({"default": None} if top else d),
                   help="read settings from FILE (default: $ENVCHECK_CONFIG, else envcheck.toml or [tool.envcheck] "
                        "in pyproject.toml, searched upward; ENVCHECK_* variables override it)")
    g.add_argument("--no-config", action="store_true", **({"default": False} if top else d),
                   help="read no config file")


def config_parser() -> argparse.ArgumentParser:
    """A parser of only the config flags: the settings they name must be read before the command's
    parse, because they become that parse's defaults (``parse_known_args`` leaves the rest)."""
    pre = Parser(add_help=False)
    add_config_flags(pre, {}, top=True)
    return pre


def each_parser(parser: argparse.ArgumentParser) -> Iterator[Tuple[List[str], argparse.ArgumentParser]]:
    """Every (sub-)parser with its command path (``[]``, ``["plan"]``, ``["matrix", "update"]``)."""
    stack: List[Tuple[List[str], argparse.ArgumentParser]] = [([], parser)]
    while stack:
        path, p = stack.pop()
        yield path, p
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, child in a.choices.items():
                    stack.append((path + [name], child))


def settings_universe(parser: argparse.ArgumentParser) -> Tuple[Set[str], Set[str]]:
    """Every settable flag (dest) of every command of ``parser`` (the whole command line) and every
    command's config table name (``plan``, ``docker-build``): what a config file may name
    (:func:`envcheck.settings.check_names`; asked only when a file names something the command run
    lacks — building every command's parser costs startup time)."""
    from envcheck.settings import _actions

    flags: Set[str] = set()
    commands: Set[str] = set()
    for path, p in each_parser(parser):
        if path:
            commands.add("-".join(path))
        flags.update(_actions(p))
    return flags, commands


def command_path(parser: argparse.ArgumentParser, argv: List[str]) -> Tuple[List[str], argparse.ArgumentParser]:
    """The command named in ``argv`` (``["matrix", "update"]``) and its parser."""
    path: List[str] = []
    current = parser
    skip = False
    for tok in argv:
        if skip:
            skip = False
            continue
        if tok == "--":
            break
        if tok in TAKES_VALUE:
            skip = True
            continue
        if tok.startswith("-"):
            continue
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or tok not in subs[0].choices:
            break
        path.append(tok)
        current = subs[0].choices[tok]
    return path, current


def verbosity(args: argparse.Namespace) -> int:
    """``-v`` minus ``-q``: 0 normal, 1+ more, -1 no notes/warnings, -2 errors only."""
    return int(getattr(args, "verbose", 0) or 0) - int(getattr(args, "quiet", 0) or 0)


def note(args: Any, text: str, level: int = 0) -> None:
    """A line on stderr shown at verbosity ≥ ``level`` (warnings: 0 → hidden by -q; details: 1 → -v)."""
    if args is None or verbosity(args) >= level:
        sys.stderr.write(f"envcheck: {text}\n")


def warn(args: Any, text: str, title: str = "", file: str = "") -> None:
    """A warning: stderr (unless -q); counts for ``--strict``; an ``::warning::`` under GitHub Actions."""
    if args is not None:
        args.warned = int(getattr(args, "warned", 0) or 0) + 1
    if args is None or verbosity(args) >= 0:
        sys.stderr.write(f"envcheck: warning: {text}\n")
    from envcheck.ci import annotate

    annotate("warning", text, title=title, file=file)


@contextmanager
def color_environment(choice: Optional[str]) -> Iterator[None]:
    """``--color always|never`` → ``FORCE_COLOR``/``NO_COLOR``+``TERM=dumb`` for every rich Console
    (rich reads them) for the duration of one command; the environment is restored after. In
    ``auto``, a non-empty ``NO_COLOR`` wins over ``FORCE_COLOR``."""
    keys = ("NO_COLOR", "FORCE_COLOR", "TERM")
    saved = {k: os.environ.get(k) for k in keys}
    try:
        if choice == "auto" and os.environ.get("NO_COLOR"):
            choice = "never"  # NO_COLOR wins over FORCE_COLOR (no-color.org)
        if choice == "never":  # no escape sequence at all: rich writes none to a dumb terminal
            os.environ["NO_COLOR"] = "1"
            os.environ["TERM"] = "dumb"
            os.environ.pop("FORCE_COLOR", None)
        elif choice == "always":
            os.environ["FORCE_COLOR"] = "1"
            os.environ.pop("NO_COLOR", None)
            if os.environ.get("TERM") == "dumb":
                os.environ["TERM"] = "xterm-256color"
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def strict_exit(args: argparse.Namespace, code: int) -> int:
    """``--strict``: a command that succeeded but warned exits 1 (and says so)."""
    warned = int(getattr(args, "warned", 0) or 0)
    if code == 0 and getattr(args, "strict", False) and warned:
        sys.stderr.write(f"envcheck: --strict: {warned} warning{'s' if warned != 1 else ''}: exit 1\n")
        return 1
    return code


#: ``--json`` documents: command path → (schema id, key holding a list document). Each id has its
#: JSON Schema in ``schemas/<id>.json`` (validated in tests/integrations/test_json_schemas.py).
JSON_SCHEMAS = {
    "plan": ("envcheck.plan.v1", None),
    "probe": ("envcheck.probe.v1", None),
    "verify": ("envcheck.verify.v1", None),
    "explain": ("envcheck.explain.v1", "findings"),
    # `explain --list`: the family table, a document of its own (stamped by the command itself)
    "explain-list": ("envcheck.explain-list.v1", "families"),
    "gpus": ("envcheck.gpus.v1", "gpus"),
    "matrix-show": ("envcheck.matrix-show.v1", "builds"),
    "matrix-validate": ("envcheck.matrix-validate.v1", None),
    "matrix-update": ("envcheck.matrix-update.v1", None),
    "matrix-status": ("envcheck.matrix-status.v1", None),
    "docker-build": ("envcheck.docker-build.v1", None),
    "docker-verify": ("envcheck.docker-verify.v1", None),
    "docker-base": ("envcheck.docker-base.v1", None),
    "config": ("envcheck.config.v1", None),
    "lock-check": ("envcheck.lock-check.v1", None),
    "fleet-diff": ("envcheck.fleet-diff.v1", None),
    # stamped by the fleet itself (envcheck.fleet.merge.FLEET_SCHEMA): --save writes the same document
    "fleet-merge": ("envcheck.fleet-merge.v1", None),
    # any --json command that stops on an error before printing its document (json_document)
    "error": ("envcheck.error.v1", None),
    # node reports (verify --report, a file, not a --json document): schemas/node-report.schema.json
}


def stamp_json(command: str, text: str) -> str:
    """Put ``"schema"`` first in the JSON document ``text`` printed by ``command`` (a list document
    becomes ``{"schema": …, "<key>": [...]}``); text that is not one JSON document is left alone."""
    import json

    entry = JSON_SCHEMAS.get(command)
    if entry is None or not text.strip():
        return text
    if text.startswith('{\n  "schema": ' + json.dumps(entry[0]) + ","):
        return text  # stamped by the command itself (plan --json): kept as it is, without parsing it again
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    sid, key = entry
    if isinstance(doc, dict) and doc.get("schema") in {i for i, _ in JSON_SCHEMAS.values()}:
        return text  # a command that prints another document of its own (explain --list) stamped it
    if isinstance(doc, list) and key:
        doc = {key: doc}
    if not isinstance(doc, dict):
        return text
    if "schema" not in doc and text.startswith('{\n  "') and text.isascii():
        # already json.dump(indent=2) text (ASCII: ensure_ascii; every such command uses the default
        # separators): the key goes in front as text — the same bytes as dumping it all again, without
        # the pure-Python indented encoder over a document that can be ~1 MB (plan --json)
        return '{\n  "schema": ' + json.dumps(sid) + ",\n" + text[2:].rstrip("\n") + "\n"
    doc = {"schema": sid, **{k: v for k, v in doc.items() if k != "schema"}}
    return json.dumps(doc, indent=2) + "\n"


def error_document(path: List[str], message: str, exit_code: int) -> str:
    """``--json`` of a command that stopped on an error: ``{"schema": "envcheck.error.v1", "command",
    "exit_code", "error"}`` (the same message stderr gets), so stdout is one JSON document either way."""
    import json

    doc = {"schema": JSON_SCHEMAS["error"][0], "command": " ".join(path), "exit_code": exit_code, "error": message}
    return json.dumps(doc, indent=2) + "\n"


@contextmanager
def json_document(args: argparse.Namespace,
                  failure: Optional[Callable[[BaseException], Optional[Tuple[str, int]]]] = None) -> Iterator[None]:
    """With ``--json``: collect what the command prints on stdout, stamp it with its schema, print it.
    Everything else (progress, warnings, GitHub annotations) goes to stderr meanwhile. A command that
    stops before printing anything, on an error ``failure`` turns into ``(message, exit code)`` (what
    the caller then writes to stderr), prints :func:`error_document` instead."""
    if not getattr(args, "json", False):
        yield
        return
    import io

    from envcheck.ci import JSON_MODE

    command = "-".join(p for p in getattr(args, "command_path", []) if p)
    real = sys.stdout
    buf = io.StringIO()
    JSON_MODE["on"] = True
    sys.stdout = buf  # type: ignore[assignment]
    failed: Optional[Tuple[str, int]] = None
    try:
        yield
    except BaseException as exc:
        failed = failure(exc) if failure is not None else None
        raise
    finally:
        sys.stdout = real
        JSON_MODE["on"] = False
        text = buf.getvalue()
        if text:
            real.write(stamp_json(command, text))
        elif failed is not None:
            real.write(error_document(list(getattr(args, "command_path", [])), *failed))
