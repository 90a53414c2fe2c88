"""Settings from outside the command line, as uv and pixi do it.

Precedence, highest first: the command line · ``ENVCHECK_<COMMAND>_<FLAG>`` · ``ENVCHECK_<FLAG>`` ·
the config file's ``[<command>]`` table · its top level · the built-in default.

The config file is ``--config FILE``, else ``$ENVCHECK_CONFIG``, else the first of ``envcheck.toml``
or ``pyproject.toml`` with a ``[tool.envcheck]`` table found from the working directory upward
(``envcheck.toml`` wins in one folder). ``--no-config`` reads none; so does ``ENVCHECK_NO_CONFIG=1``
unless a file is named (``--config FILE`` or ``ENVCHECK_CONFIG``).

Keys are the long flag names (``backend``, ``format``, ``mirror``…), dashes or underscores. A key
at the top level applies to every command that has that flag; a command's table to that command only:
``[tool.envcheck.plan]`` in pyproject.toml, ``[plan]`` in envcheck.toml or a ``--config`` file
(``[docker-build]`` for ``docker build``). A key no command has, or a table no command is named, is
bad input naming the file and the key (:func:`check_names`). Values are TOML types: a string, a
boolean for a switch, a list for a repeatable flag.

Every flag has an environment variable: ``--backend`` → ``ENVCHECK_BACKEND``, ``--pin-python`` →
``ENVCHECK_PIN_PYTHON``; ``ENVCHECK_VERIFY_PYTHON`` targets one command (``ENVCHECK_DOCKER_BASE_MIRROR``
for a two-word one). A switch takes ``1/true/yes/on`` or ``0/false/no/off``; a repeatable flag takes a
comma-separated list, and the command line's values replace it (they are not added to it).

``-o``/``--output``, ``--force`` (and ``--help``, ``--version``) never come from outside the command
line: a variable must not make a command write or overwrite files the user did not name. An
``ENVCHECK_*`` variable that sets nothing (``ENVCHECK_FORCE``, a typo such as ``ENVCHECK_PYHTON``) is
a warning naming it (and the close names), never silently ignored (:func:`unread_variables`).

A shared key (top level, ``ENVCHECK_<FLAG>``) means one thing in every command it reaches: where a
command's flag of that name means something else (:data:`OWN_MEANING`: ``verify --python`` is an
interpreter, ``plan --python`` a version), only that command's own table or variable sets it.
"""

from __future__ import annotations

import argparse
import os
import sys

from envcheck.errors import UsageError

TYPE_CHECKING = False  # typing and pathlib are not imported at run time: `envcheck --help` starts without them
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

__all__ = ["Settings", "find_config", "read_config", "apply_settings", "ENV_PREFIX"]

ENV_PREFIX = "ENVCHECK_"
#: flags that never come from a file or the environment: they pick the file, or are one-shot
NOT_SETTABLE = {"help", "version", "config", "no_config", "output", "force", "command", "run"}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
MAX_CONFIG_BYTES = 1 << 20
#: variables the code reads itself, with a meaning of their own (ENVCHECK_MATRICES: the matrix
#: loader, and probe goes on without a matrix when it is unreadable; ENVCHECK_DATA_DIR: the user data
#: root holding index/ — the same folder `matrix update --data-dir` names, read by plan/status too). They never become a flag's default;
#: tests/integrations/test_cli_conventions.py fails when a new one collides with a flag.
READ_ELSEWHERE = {"ENVCHECK_MATRICES", "ENVCHECK_DATA_DIR", "ENVCHECK_CACHE_DIR", "ENVCHECK_NO_CACHE",
                  "ENVCHECK_NODE", "ENVCHECK_REPORTS", "ENVCHECK_UV", "ENVCHECK_NO_CONFIG", "ENVCHECK_CONFIG"}
#: names of envcheck's own harness, not settings: the GitHub Action's step variables (action.yml),
#: the test suite's and the benchmarks', and the mark :mod:`envcheck.runner` puts on its children.
#: Never warned about (:func:`unread_variables`).
HARNESS_PREFIXES = ("ENVCHECK_ACTION_", "ENVCHECK_TEST_", "ENVCHECK_BENCH_")
HARNESS = {"ENVCHECK_UPDATE_GOLDEN", "ENVCHECK_RUN_ID"}


#: (command, flag dest) whose flag shares a name with other commands' but not their meaning: the
#: target Python *version* of plan/docker build vs the *interpreter* verify tests; a mirror of
#: download.pytorch.org vs docker base's Debian mirror; docker build's image tag vs the base image's.
#: Shared keys never reach these; ``[tool.envcheck.<command>]`` / ``ENVCHECK_<COMMAND>_<FLAG>`` do.
#: tests/integrations/test_cli_conventions.py fails when a new flag name gets a second meaning.
OWN_MEANING = {("verify", "python"), ("docker-verify", "python"), ("fleet-slurm", "python"),
               ("docker-base", "mirror"), ("docker-base", "tag")}

#: (command, flag dest) that name a program envcheck runs (an interpreter, envcheck as the nodes run
#: it). A config file *found* from the working directory upward may not set them — a cloned
#: repository's pyproject.toml would choose what runs — only the command line, the user's own
#: environment or a file the user names (``--config``/``$ENVCHECK_CONFIG``) do.
RUNS_A_PROGRAM = {("verify", "python"), ("docker-verify", "python"), ("fleet-slurm", "python"),
                  ("fleet-slurm", "envcheck")}


def env_names(command: str, dest: str) -> Tuple[str, str]:
    """(shared, command's own) environment variable of a flag: ``ENVCHECK_PYTHON``,
    ``ENVCHECK_VERIFY_PYTHON`` (``ENVCHECK_DOCKER_BASE_MIRROR`` for ``docker base``)."""
    own = command.upper().replace("-", "_")
    return f"{ENV_PREFIX}{dest.upper()}", f"{ENV_PREFIX}{own}_{dest.upper()}"


class Settings:
    """What was applied: ``values`` by flag dest, ``origins`` saying where each came from.

    A plain class: every command (``--help`` too) makes one, and a data class would cost the
    :mod:`dataclasses` import on that path."""

    def __init__(self, file: Optional[Path] = None, values: Optional[Dict[str, Any]] = None,
                 origins: Optional[Dict[str, str]] = None):
        self.file = file
        self.values: Dict[str, Any] = {} if values is None else values
        self.origins: Dict[str, str] = {} if origins is None else origins
        #: ENVCHECK_* variables that set nothing, one sentence each (the command line warns)
        self.warnings: List[str] = []

    def __repr__(self) -> str:
        return f"Settings(file={self.file!r}, values={self.values!r}, origins={self.origins!r})"


def find_config(start: os.PathLike[str] | str) -> Optional[Path]:
    """The nearest ``envcheck.toml``, or ``pyproject.toml`` with ``[tool.envcheck]``, from ``start`` up."""
    folder = os.path.realpath(start)
    while True:
        found = _config_in(folder)
        if found is not None:
            from pathlib import Path

            return Path(found)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _config_in(folder: str) -> Optional[str]:
    """``folder``'s envcheck.toml, else its pyproject.toml when that has ``[tool.envcheck]``."""
    own = os.path.join(folder, "envcheck.toml")
    if os.path.isfile(own):
        return own
    py = os.path.join(folder, "pyproject.toml")
    if os.path.isfile(py):
        try:
            with open(py, "rb") as fh:
                if b"envcheck" not in fh.read(MAX_CONFIG_BYTES + 1):
                    return None  # no [tool.envcheck] can be in it: not worth a TOML parse
        except OSError:
            pass  # _load says why
        try:
            if "envcheck" in _load(py).get("tool", {}):
                return py
        except UsageError:
            pass  # a broken pyproject that is not ours: keep looking
    return None


def _load(path: os.PathLike[str] | str) -> Dict[str, Any]:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--config {path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise UsageError(f"{path}: larger than {MAX_CONFIG_BYTES >> 20} MiB; not a config file")
    if sys.version_info >= (3, 11):  # imported here: most runs find no config file to parse
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:  # arrays/tables nested thousands deep: tomllib recurses per level
        raise UsageError(f"{path}: nested too deeply to be a config file") from None


def read_config(path: Path) -> Dict[str, Any]:
    """The envcheck table of a config file (``[tool.envcheck]`` of a pyproject.toml, else all of it).

    Raises:
        UsageError: unreadable, not TOML, or the table is not a table.
    """
    doc = _load(path)
    table = doc.get("tool", {}).get("envcheck", {}) if path.name == "pyproject.toml" else doc
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.envcheck] must be a table")
    return table


def _norm(key: str) -> str:
    return key.replace("-", "_").lower()


def _actions(parser: argparse.ArgumentParser) -> Dict[str, argparse.Action]:
    out = {}
    for a in parser._actions:  # argparse keeps them here; there is no public accessor
        if a.dest in NOT_SETTABLE or not a.option_strings or isinstance(a, argparse._HelpAction):
            continue
        out[a.dest] = a
    return out


def _flag(a: argparse.Action) -> str:
    return max(a.option_strings, key=len)


def _convert(a: argparse.Action, value: Any, origin: str) -> Any:
    """A config/env value as argparse would have stored it for ``a``."""
    where = f"{origin}: {_flag(a)}"
    if isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        if isinstance(value, bool):
            b = value
        elif isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            b = value.strip().lower() in _TRUE
        else:
            raise UsageError(f"{where} is a switch: give true or false, not {value!r}")
        return b if isinstance(a, argparse._StoreTrueAction) else not b
    if isinstance(a, argparse._CountAction):
        try:
            return int(value)
        except (TypeError, ValueError):
            raise UsageError(f"{where}: give a number, not {value!r}") from None
    many = isinstance(a, argparse._AppendAction)
    if many:
        items = value if isinstance(value, list) else [x.strip() for x in str(value).split(",") if x.strip()]
    else:
        if isinstance(value, (list, dict)):
            raise UsageError(f"{where} takes one value, not {value!r}")
        items = [value]
    out = []
    for item in items:
        if isinstance(item, (dict, list)):
            raise UsageError(f"{where}: {item!r} is not a value")
        text = str(item).lower() if isinstance(item, bool) else str(item)
        v: Any = a.type(text) if callable(a.type) else text
        if a.choices is not None and v not in a.choices:
            raise UsageError(f"{where}: {text!r} is not one of {', '.join(map(str, a.choices))}")
        out.append([v] if a.nargs in ("+", "*") else v)
    return out if many else out[0]


class Replaced(list):  # type: ignore[type-arg]
    """A repeatable flag's value from the config file or the environment: the command line replaces
    it rather than adding to it (argparse's append/extend actions copy the default before their
    first item; this copy is empty)."""

    def __copy__(self) -> list:  # type: ignore[type-arg]
        return []


def _repeatable(a: argparse.Action) -> bool:
    return isinstance(a, (argparse._AppendAction, argparse._ExtendAction))


def apply_settings(parser: argparse.ArgumentParser, command: str, config: Optional[Path], no_config: bool,
                   environ: Mapping[str, str], cwd: os.PathLike[str] | str,
                   universe: Optional[Callable[[], Tuple[Set[str], Set[str]]]] = None) -> Settings:
    """Set ``parser``'s defaults from the config file and the environment (the command line, parsed
    after this, still wins). Returns what was set and from where.

    ``universe()`` answers every settable flag of every command and every command's table name
    (``plan``, ``docker-build``…); it is asked only when the file holds a key or a table that is not
    ``command``'s (building every command's parser costs startup time). Without it such names pass.

    Raises:
        UsageError: a missing/invalid config file, an unknown key or table (naming the file and
            the key), a value of the wrong kind.
    """
    actions = _actions(parser)
    s = Settings()
    named, flag = config, "--config"
    if named is None and environ.get("ENVCHECK_CONFIG"):  # the command line's --config first
        from pathlib import Path

        named, flag = Path(environ["ENVCHECK_CONFIG"]), "$ENVCHECK_CONFIG"
    if no_config:
        path = None
    elif named is not None:  # a file named explicitly wins over $ENVCHECK_NO_CONFIG
        try:
            found = os.path.isfile(named)
        except (OSError, ValueError):  # a NUL byte; (isfile itself answers False for a name too long)
            found = False
        if not found:
            why = ("no such file" if not os.path.lexists(named) else "not a regular file") \
                if len(os.path.basename(os.fsencode(named))) <= 255 else "a name longer than the system allows"
            raise UsageError(f"{flag} {ascii(str(named))[1:-1][:200]}: {why}")
        path = named
    elif environ.get("ENVCHECK_NO_CONFIG", "").lower() in _TRUE:
        path = None
    else:
        path = find_config(cwd)
    layers: List[Tuple[str, Dict[str, Any]]] = []
    if path is not None:
        s.file = path
        table = read_config(path)
        top = {k: v for k, v in table.items() if not isinstance(v, dict)}
        own = table.get(command, {}) if isinstance(table.get(command), dict) else {}
        check_names(path, table, command, actions, universe)
        layers += [(f"{path}", top), (f"{path} [{command}]", own)]
    for origin, values in layers:
        for key, value in values.items():
            dest = _norm(key)
            if dest not in actions:
                if origin.endswith("]"):  # a command table: every key must be a flag of that command
                    raise UsageError(f"{origin}: {key!r} is not a flag of `envcheck {command}`"
                                     + did_you_mean(dest, set(actions) - NOT_SETTABLE, _flag_name))
                continue  # a top-level key for other commands (check_names knows it is one)
            if not origin.endswith("]") and (command, dest) in OWN_MEANING:
                continue  # a shared key means the other commands' flag, not this one's
            if named is None and (command, dest) in RUNS_A_PROGRAM:
                raise UsageError(f"{origin}: {key!r} names a program envcheck would run, and this file was found "
                                 "from the working folder, not named: a found file (a cloned repository's) may not "
                                 f"choose what runs — give {_flag(actions[dest])} on the command line, set "
                                 f"{env_names(command, dest)[1]}, or name the file with --config")
            s.values[dest] = _convert(actions[dest], value, origin)
            s.origins[dest] = origin
    for dest, a in actions.items():
        shared, own = env_names(command, dest)
        for var in ((own,) if (command, dest) in OWN_MEANING else (shared, own)):
            if var in environ and var not in READ_ELSEWHERE:
                s.values[dest] = _convert(a, environ[var], f"${var}")
                s.origins[dest] = f"${var}"
    if s.values:
        parser.set_defaults(**{dest: Replaced(v) if isinstance(v, list) and _repeatable(actions[dest]) else v
                               for dest, v in s.values.items()})
    s.warnings = unread_variables(command, actions, environ, universe)
    return s


def unread_variables(command: str, actions: Mapping[str, argparse.Action], environ: Mapping[str, str],
                     universe: Optional[Callable[[], Tuple[Set[str], Set[str]]]]) -> List[str]:
    """One sentence per ``ENVCHECK_*`` variable in ``environ`` that sets nothing: a flag that only
    the command line takes (``ENVCHECK_FORCE``, ``ENVCHECK_OUTPUT``), or a name that is no flag's
    variable, of this command or any other (a typo: the close names are given). A variable of
    another command's flag (``ENVCHECK_TIMEOUT`` while planning) is fine: it is read there.

    ``universe()`` (every command's flags and table names) is asked only when a variable is not
    this command's — most runs have none, and building every parser costs start-up time.
    """
    own = {n for dest in actions for n in env_names(command, dest)}
    odd = sorted(k for k in environ if k.startswith(ENV_PREFIX) and k not in own and k not in READ_ELSEWHERE
                 and k not in HARNESS and not k.startswith(HARNESS_PREFIXES))
    if not odd:
        return []
    flags, commands = universe() if universe is not None else (set(actions), {command})
    heads = sorted((c.upper().replace("-", "_") + "_" for c in commands), key=len, reverse=True)
    names = {f"{ENV_PREFIX}{f.upper()}" for f in flags} | {f"{ENV_PREFIX}{h}{f.upper()}" for h in heads for f in flags}
    out = []
    for var in odd:
        rest = var[len(ENV_PREFIX):]
        head = next((h for h in heads if rest.startswith(h)), "")
        dest = rest[len(head):].lower()
        if dest in NOT_SETTABLE - {"command", "run"}:
            flag = "-o/--output" if dest == "output" else f"--{dest.replace('_', '-')}"
            out.append(f"${var} is not read: {flag} is given on the command line only (a variable must never "
                       "make envcheck write or overwrite files, or pick what to run)"
                       + ("; name the settings file with $ENVCHECK_CONFIG" if dest == "config" else ""))
        elif var not in names:
            out.append(f"${var} is not read: no envcheck flag or setting has that name"
                       + did_you_mean(var, names | READ_ELSEWHERE, lambda c: "$" + c)
                       + " (`envcheck config COMMAND` lists each flag's variable)")
    return out


def _flag_name(dest: str) -> str:
    return dest.replace("_", "-")


def did_you_mean(word: str, names: Iterable[str], show: Callable[[str], str] = str) -> str:
    """``"; did you mean a, b?"`` — the names closest to ``word`` (each as ``show`` writes it), or
    ``""``: the one suggestion of every settings name a user can mistype (a config key, a table, an
    ``ENVCHECK_*`` variable)."""
    import difflib

    close = difflib.get_close_matches(word, sorted(names), n=3)
    return f"; did you mean {', '.join(show(c) for c in close)}?" if close else ""


def check_names(path: Path, table: Mapping[str, Any], command: str, actions: Mapping[str, argparse.Action],
                universe: Optional[Callable[[], Tuple[Set[str], Set[str]]]]) -> None:
    """Every top-level key of a config table is some command's flag and every table a command's:
    a typo (``pyhton``) or a table under another file's name (``[tool.envcheck.plan]`` in an
    envcheck.toml) is bad input, never silently dropped (newcomer3 #8).

    Raises:
        UsageError: ``FILE: 'key' …`` with the close names, or the table name this file uses.
    """
    pyproject = path.name == "pyproject.toml"
    where = "[tool.envcheck]" if pyproject else "the top level"
    known: Optional[Tuple[Set[str], Set[str]]] = None
    for key, value in table.items():
        if isinstance(value, dict):
            if key == command:
                continue
            if not pyproject and key == "tool":
                inner = value.get("envcheck")
                named = [k for k, v in inner.items() if isinstance(v, dict)] if isinstance(inner, dict) else []
                hint = (f"write [{named[0]}] for `envcheck {named[0].replace('-', ' ')}`" if named
                        else "write its keys at the top level")
                raise UsageError(f"{path}: [tool.envcheck…] is pyproject.toml's table name; in {path.name} {hint} "
                                 "([<command>] tables, keys for every command at the top level)")
        elif _norm(key) in actions:
            continue
        if universe is None:
            continue
        known = known or universe()
        flags, commands = known
        if isinstance(value, dict):
            if key in commands:
                continue
            name = f"[tool.envcheck.{key}]" if pyproject else f"[{key}]"
            form = "[tool.envcheck.<command>]" if pyproject else "[<command>]"
            raise UsageError(f"{path}: {name} is not a command's table" + did_you_mean(key, commands)
                             + f" — tables are named {form}: {', '.join(sorted(commands))}")
        if _norm(key) in NOT_SETTABLE:
            raise UsageError(f"{path}: {key!r} is given on the command line only, never in a config file")
        if _norm(key) not in flags:
            raise UsageError(f"{path}: {key!r} at {where} is not a flag of any envcheck command"
                             + did_you_mean(_norm(key), flags, _flag_name))


def effective(parser: argparse.ArgumentParser, args: argparse.Namespace, settings: Settings,
              argv: List[str], command: str = "") -> List[Dict[str, Any]]:
    """Every settable flag of ``parser``: its value in ``args``, where it came from, and the
    environment variable that sets it (the command's own one where the flag's meaning is its own)."""
    given = set()
    actions = _actions(parser)
    for dest, a in actions.items():
        if any(t == o or t.startswith(o + "=") for t in argv for o in a.option_strings):
            given.add(dest)
    rows = []
    for dest, a in sorted(actions.items(), key=lambda kv: _flag(kv[1])):
        value = getattr(args, dest, None)
        origin = "command line" if dest in given else settings.origins.get(dest, "default")
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if _repeatable(a) and a.nargs in ("+", "*") and isinstance(value, list):
            # argparse keeps one list per use of the flag (`--gpu A B --gpu C`): shown as the values
            # given, as in the file (`gpu = ["RTX 4090"]`), never a list inside a list
            value = [v for group in value for v in (group if isinstance(group, list) else [group])]
        shared, own = env_names(command, dest)
        env = own if (command, dest) in OWN_MEANING else shared
        rows.append({"flag": _flag(a), "env": env, "value": value, "origin": origin})
    return rows
