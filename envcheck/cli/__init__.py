"""The ``envcheck`` command line: argument parsing, dispatch, and the one place errors are caught.

Each sub-command lives in its own module with ``add_parser(subparsers)`` and ``run(args) -> int``;
heavy imports happen inside ``run`` so ``envcheck --help`` and ``envcheck plan`` start fast.
Exit codes: 0 ok · 1 no compatible build / a check failed · 2 bad input · 3 could not run (a tool
missing or failing, an index unreachable: nothing was judged; :class:`envcheck.errors.CouldNotRun`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from envcheck.cli.conventions import COMMAND_HELP, TAKES_VALUE, EmptyPath, NamesFolder, Parser
from envcheck.errors import EnvcheckError

TYPE_CHECKING = False  # typing and pathlib are not imported at run time: `envcheck --help` starts without them
if TYPE_CHECKING:
    from typing import Any, List, NoReturn, Optional, Tuple

COMMANDS = list(COMMAND_HELP)

DESCRIPTION = """\
envcheck makes PyTorch environments right the first time, and proves they work.

  envcheck plan --gpu 7900xtx --wsl          plan an install for a machine you describe
  envcheck plan -o out/                      plan for this machine; write pip/conda/Docker/lock files
  envcheck verify --lock out/envcheck.lock.toml   run real smoke tests in this environment
  envcheck gpus rtx                          which GPU names envcheck knows
"""


class _Parser(Parser):
    """argparse that exits 2 with a short message (never a traceback) on bad usage."""

    def _get_values(self, action: argparse.Action, arg_strings: List[str]) -> Any:
        # `--timeout=--` / `-o=--`: argparse drops the "--" and hands the command an empty list
        # instead of a value; keep it as the value, so the flag's own type and checks judge it
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            return self._get_value(action, "--")
        return super()._get_values(action, arg_strings)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        _say_error(message)
        exc = SystemExit(2)
        exc.usage_error = message  # type: ignore[attr-defined]  # main's --json error document reads it
        raise exc


def build_parser(argv: Optional[List[str]] = None) -> argparse.ArgumentParser:
    """The command line for ``argv``: with a command named, only that command's parser is built
    (argparse reads nothing of the others once the command is named), so ``envcheck plan …`` does
    not import the modules — and their imports — of every other command, nor build their parsers;
    with none (``envcheck --help``, a bad command), the top level lists every command from
    :data:`COMMAND_HELP` and imports none. ``argv=None``: everything (completion, tests)."""
    only = _command_of(argv)
    top_only = argv is not None and only is None
    parser = _Parser(
        prog="envcheck",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from envcheck.cli.conventions import add_common, each_parser

    parser.add_argument("--version", action=_VersionAction, nargs=0,
                        help="the version, the matrix data date and the newest torch release it knows")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        if only is not None and name != only:
            continue
        if top_only:  # listed, never parsed: a command in argv would have made `only` it
            sub.add_parser(name, help=COMMAND_HELP[name])
            continue
        try:
            mod = importlib.import_module(f"envcheck.cli.{name}")
        except ModuleNotFoundError as exc:  # a command not built yet
            if exc.name == f"envcheck.cli.{name}":
                continue
            raise
        mod.add_parser(sub)
    for path, p in each_parser(parser):
        if path and top_only:
            continue
        add_common(p, top=not path)
    return parser


def _command_of(argv: Optional[List[str]]) -> Optional[str]:
    """The command ``argv`` runs: its first word that is not a global option (or its value), when
    that is a command and no top-level help is asked before it; else ``None``."""
    skip = False
    for tok in argv or ():
        if skip:
            skip = False
        elif tok in ("-h", "--help", "--"):
            return None
        elif tok in TAKES_VALUE:
            skip = True
        elif not tok.startswith("-"):
            return tok if tok in COMMAND_HELP else None
    return None


class _VersionAction(argparse.Action):
    """``envcheck --version``: loads the matrix (only then) to name its data date and newest torch."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> NoReturn:
        from envcheck.matrix.freshness import version_line

        sys.stdout.write(version_line() + "\n")
        raise SystemExit(0)


def _ensure_streams() -> None:
    """A closed stdin reads as empty; a closed stdout makes any output an :class:`OutputError`
    (exit 1, "cannot write the output", as ``> /dev/full``); a closed stderr becomes /dev/null; and a
    character the terminal's encoding lacks (``—`` under ``LC_ALL=C`` or ``PYTHONIOENCODING=ascii``)
    is written as an escape (``\\u2014``) instead of raising UnicodeEncodeError."""
    if sys.stdin is None:  # `envcheck … <&-`: reading it is reading nothing (explain: "nothing to explain")
        sys.stdin = open(os.devnull)  # noqa: SIM115 (lives as long as the process)
    if sys.stdout is None:  # `envcheck … >&-`: what a command prints is an error, not silently lost
        sys.stdout = _Closed()  # type: ignore[assignment]
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (lives as long as the process)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass  # not a TextIOWrapper (a test's StringIO) or already closed
    if not isinstance(sys.stdout, _Output):
        sys.stdout = _Output(sys.stdout)  # type: ignore[assignment]


class OutputError(EnvcheckError, OSError):
    """Standard output cannot be written (a full disk, ``> /dev/full``, an I/O error). Exit code 1.

    An OSError too, so code that already tolerates a failed write (argparse printing ``--help``)
    still does."""

    exit_code = 1


class _Closed:
    """Standard output that was closed before envcheck started: every write fails like a full disk."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        if not text:
            return 0
        raise OSError(9, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(9, "standard output is closed")


class _Output:
    """``sys.stdout`` whose failed writes (other than a closed pipe) raise :class:`OutputError`."""

    def __init__(self, stream: Any):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write the output: {exc.strerror or exc}") from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write the output: {exc.strerror or exc}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """After EPIPE (``envcheck … | head -1``): point stdout at /dev/null so the exit flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


#: Longest file name component and path the kernel takes (Linux NAME_MAX / PATH_MAX, in bytes).
NAME_MAX, PATH_MAX = 255, 4096


def _check_paths(args: argparse.Namespace) -> None:
    """Every path flag (``type=Path``) is checked before a command runs: no NUL byte, no component
    longer than NAME_MAX, not longer than PATH_MAX, and a one-file flag's value not a folder's name
    (``dir/``) — bad input, exit 2, one line.

    Raises:
        UsageError: naming the flag's value.
    """
    from envcheck.errors import UsageError

    pathlib = sys.modules.get("pathlib")  # (None: no Path flag was given; path_arg imports it for one)
    for name, value in vars(args).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, EmptyPath):  # conventions.path_arg/path_text: "" given to a path flag or argument
                raise UsageError(f"{_arg_name(args, name)}: an empty path; give a file or folder name")
            if isinstance(v, NamesFolder):  # conventions.file_arg: "dir/" given to a one-file flag
                raise UsageError(f"--{name.replace('_', '-')} {ascii(str(v))[:80]}: names a folder (it ends "
                                 "in a slash); give a file name")
            if pathlib is None or not isinstance(v, pathlib.PurePath):
                continue
            raw = os.fsencode(v)
            flag = "--" + name.replace("_", "-")
            shown = ascii(str(v))[:80]
            if b"\0" in raw:
                raise UsageError(f"{flag} {shown}: a path cannot hold a NUL byte")

            if len(raw) > PATH_MAX or any(len(part) > NAME_MAX for part in raw.split(b"/")):
                raise UsageError(f"{flag} {shown}…: a path, or a name in it, is longer than the system allows "
                                 f"({NAME_MAX} bytes a name, {PATH_MAX} a path)")


def _arg_name(args: argparse.Namespace, dest: str) -> str:
    """How the user wrote the argument ``dest``: ``--report`` for a flag, its metavar (``FILE``,
    ``REPORT_OR_DIR``) for a positional one (hfix10 left `fleet merge ''` and `lock check ''`: they
    read the current folder). Asked only for an error, so the parser is built only then."""
    from envcheck.cli.conventions import each_parser

    path = list(getattr(args, "command_path", None) or [])
    for p_path, p in each_parser(args.build_parser()):
        if p_path != path:
            continue
        for a in p._actions:
            if a.dest == dest and not a.option_strings:
                return str(a.metavar or dest.upper())
    return "--" + dest.replace("_", "-")


def _say_error(message: str) -> None:
    """``envcheck: error: MESSAGE`` on stderr, the message made safe for a terminal: an error often
    relays what a file, a path or another program said (the Docker engine's build output, pip's,
    sbatch's), and its colour codes or other control sequences are not envcheck's to replay
    (newcomer6 #7: ``last output: [91mERROR: …[0m``). They are shown escaped, never taken out: a
    path stays the path given (breaker6 F10: ``m\\x1b[2J.toml`` was shown as ``m.toml``)."""
    from envcheck.edge import escaped_text

    sys.stderr.write(f"envcheck: error: {escaped_text(message)}\n")


def _failure(exc: BaseException) -> Optional[Tuple[str, int]]:
    """What an error that ends a command is to the user: ``(message, exit code)`` — an
    :class:`EnvcheckError`'s own, a hostile path's (exit 2) — or ``None`` (interrupted, a bug).
    Used for stderr and for the ``--json`` error document alike (terminal-safe text in both)."""
    if isinstance(exc, (OutputError, BrokenPipeError)):
        return None  # stdout itself failed: nothing more goes there
    if isinstance(exc, EnvcheckError):
        from envcheck.edge import escaped_text

        return escaped_text(str(exc)), exc.exit_code
    if isinstance(exc, (OSError, ValueError)):
        why = _path_problem(exc)
        return (why, 2) if why is not None else None
    return None


def _refuse(argv: List[str], parser: argparse.ArgumentParser, path: List[str], message: str, code: int) -> int:
    """An error before the command runs: one ``envcheck: error:`` on stderr (and, for ``--json``,
    the error document on stdout); returns the exit code."""
    _say_error(message)
    if _wants_json(argv, parser):
        from envcheck.cli.conventions import error_document

        sys.stdout.write(error_document(path, message, code))
    return code


def _path_problem(exc: BaseException) -> Optional[str]:
    """A one-line message for the OS errors a hostile path gives (a name longer than NAME_MAX, a NUL
    byte, a loop of links, a folder on the way the user may not enter) wherever it is used; ``None``
    for any other error (a bug: re-raised)."""
    import errno

    if isinstance(exc, ValueError) and "null byte" in str(exc):
        return "a path cannot hold a NUL byte"
    if isinstance(exc, OSError) and exc.errno in (errno.ENAMETOOLONG, errno.ELOOP, errno.EACCES):
        name = ascii(str(exc.filename))[:80] if exc.filename is not None else "a path"
        return f"{name}: {exc.strerror}"
    return None


#: flags (argparse dest) that need an optional extra (envcheck.errors.EXTRAS) when given
FLAG_EXTRAS = {"junit": "junit"}


def _check_extras(args: argparse.Namespace) -> None:
    """Every optional extra the command line needs (a command's ``needs_extras`` default, a flag of
    :data:`FLAG_EXTRAS`), checked before any work — a run must not write a report and then stop on
    a missing package (newcomer M12).

    Raises:
        MissingExtra: one is not installed (exit 2).
    """
    from envcheck.errors import require_extra

    for extra in extras_needed(args):
        require_extra(extra)


def extras_needed(args: argparse.Namespace) -> List[str]:
    """The optional extras a parsed command line needs (its command's ``needs_extras``, its flags of
    :data:`FLAG_EXTRAS`), in order, once each — what :func:`_check_extras` checks, and what a
    script envcheck writes may call only where it says so (tests/structure/test_generated_needs.py)."""
    needed = list(getattr(args, "needs_extras", ()) or ())
    needed += [extra for dest, extra in FLAG_EXTRAS.items() if getattr(args, dest, None)]
    return list(dict.fromkeys(needed))


def _asks_help(argv: List[str]) -> bool:
    """``-h``/``--help``/``--version`` on the command line (before ``--``)."""
    words = argv[:argv.index("--")] if "--" in argv else argv
    return any(w in ("-h", "--help", "--version") for w in words)


def _wants_json(argv: List[str], parser: argparse.ArgumentParser) -> bool:
    """``--json`` on the command line (before ``--``) or set by the settings, for a command that has it."""
    words = argv[:argv.index("--")] if "--" in argv else argv
    has = any("--json" in a.option_strings for a in parser._actions)
    return has and ("--json" in words or bool(parser.get_default("json")))


def main(argv: Optional[List[str]] = None) -> int:
    """Run envcheck; returns the exit code.

    Commands set ``args.exit_code`` before printing, so a reader that closes the pipe early
    (``| head -1``) does not change the exit code. Standard output that cannot be written (a full
    disk, ``> /dev/full``) is a one-line error and exit 1.
    """
    from envcheck.cli.conventions import (
        color_environment, command_path, config_parser, json_document, settings_universe, strict_exit)
    from envcheck.settings import apply_settings

    _ensure_streams()
    argv = list(sys.argv[1:] if argv is None else argv)
    # a shell asking for completions needs every command's parser; otherwise only the one run
    parser = build_parser(None if "_ARGCOMPLETE" in os.environ else argv)
    if "_ARGCOMPLETE" in os.environ:
        from envcheck.cli.completion import autocomplete

        autocomplete(parser)  # a shell asking for completions: answers and exits
    path, target = command_path(parser, argv)
    early, _ = config_parser().parse_known_args(argv)
    if early.config is not None:
        from pathlib import Path

        if not isinstance(early.config, Path) or str(early.config) in ("", ".", "--"):
            return _refuse(argv, target, path, "--config: an empty path; give a settings file (--config envcheck.toml)", 2)
    try:
        settings = apply_settings(target, "-".join(path), early.config, early.no_config, os.environ, os.getcwd(),
                                  universe=lambda: settings_universe(build_parser(None)))
    except EnvcheckError as exc:
        if not _asks_help(argv):
            return _refuse(argv, target, path, str(exc), exc.exit_code)
        # --help / --version read no setting: they still answer (and the help explains the settings)
        from envcheck.settings import Settings

        sys.stderr.write(f"envcheck: warning: settings not read: {exc}\n")
        settings = Settings()
    except (OSError, ValueError) as exc:  # a --config name too long, with a NUL byte, a loop of links
        why = _path_problem(exc)
        if why is None:
            raise
        return _refuse(argv, target, path, f"--config: {why}", 2)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        message = getattr(exc, "usage_error", None)  # (_Parser.error wrote it to stderr already)
        if message is not None and _wants_json(argv, target):
            from envcheck.cli.conventions import error_document

            sys.stdout.write(error_document(path, message, 2))
        raise
    args.settings, args.argv, args.command_path = settings, argv, path
    args.build_parser = build_parser  # the whole command line, for `envcheck config` (commands never import cli)
    from envcheck.cli.conventions import note, warn

    for text in settings.warnings:  # an ENVCHECK_* variable that sets nothing is said, never ignored
        warn(args, text)
    if settings.file is not None:
        note(args, f"config file: {settings.file}", level=1)
    for dest, origin in settings.origins.items():
        note(args, f"--{dest.replace('_', '-')} = {settings.values[dest]!r} (from {origin})", level=1)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        with color_environment(getattr(args, "color", "auto")), json_document(args, _failure):
            _check_paths(args)
            _check_extras(args)
            code = int(args.run(args) or 0)
            sys.stdout.flush()  # a write error shows here, not as a traceback at exit
        return strict_exit(args, code)
    except EnvcheckError as exc:
        if isinstance(exc, OutputError):
            _silence_stdout()  # the unwritten rest would fail again at exit
        _say_error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("envcheck: interrupted\n")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return int(getattr(args, "exit_code", 0) or 0)
    except (OSError, ValueError) as exc:
        failed = _failure(exc)
        if failed is None:
            raise
        _say_error(failed[0])
        return failed[1]
