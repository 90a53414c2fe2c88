"""User-facing errors, each with the exit code the command line returns.

Exit codes (the command-line contract in DESIGN.md):

* 0 — ok
* 1 — no compatible build, or a verify check failed (:class:`NoCompatibleBuild`)
* 2 — bad input: usage, unknown GPU, malformed matrix or machine file, refused overwrite
  (:class:`UsageError` and its subclasses)
* 3 — could not run: a tool envcheck runs (pip, uv, docker, debootstrap) is missing or failed, an
  index or the network could not be reached, data a flag needs is not there yet
  (:class:`CouldNotRun` and its subclasses). Nothing was judged: it is neither "no build fits"
  nor "a check failed", and running again later (or after installing the tool) may succeed.

Only :func:`envcheck.cli.main` catches these; everything below it raises, so tests can assert on
the exception and its message.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Sequence


class EnvcheckError(Exception):
    """Base class: a failure to report to the user as a message, never as a traceback."""

    exit_code = 1


class UsageError(EnvcheckError):
    """Bad input from the user: flags, names, files. Exit code 2."""

    exit_code = 2


class UnknownGpuError(UsageError):
    """A ``--gpu`` name matched no GPU in ``matrices/gpus*.toml``.

    Attributes:
        query: what the user typed.
        suggestions: close matches (canonical GPU names), best first.
    """

    def __init__(self, query: str, suggestions: list[str], generic: bool = False, among: str = "",
                 also: Sequence[str] = ()):
        """``among``: the unquoted ``--gpu`` words ``query`` is part of (shown as given); ``also``: the
        other words among them that name no GPU."""
        self.query = query
        self.suggestions = suggestions
        self.generic = generic
        hint = ""
        if generic:  # "nvidia", "AMD Radeon(TM) Graphics" (what many Ryzen APUs report), "": no model in it
            hint = ("\n  no GPU model in it (a vendor or a generic graphics name is not one): give the model (RTX 4090), "
                    "its PCI id from `lspci -nn` (1002:15bf) or its architecture (--gpu gfx1103)")
        elif suggestions:
            hint = "\n  did you mean: " + ", ".join(suggestions)
        import shlex

        first = query.split()[0] if query.split() else ""
        narrow = f"; `envcheck gpus {shlex.quote(first)}` narrows it down" if first else ""
        where = ""
        if among:  # unquoted words: say which of them are not understood, and how to quote
            where = f" (in --gpu {among}" + "".join(f"; {a!r} is none either" for a in also) + ")"
            hint += ("\n  unquoted words are read only as whole GPU names, and none is dropped: quote each GPU's "
                     "name as one value: --gpu 'NAME A' --gpu 'NAME B' (or --gpu 'NAME A' 'NAME B')")
        super().__init__(
            f"unknown GPU {query!r}{where}{hint}\n  `envcheck gpus` lists every GPU envcheck knows{narrow}; "
            "a GPU can also be given by architecture (--gpu sm_89, --gpu gfx1100)."
        )


class DataFileError(UsageError):
    """A matrix, machine or lock file is malformed.

    Attributes:
        path: the file.
        key: the dotted key path inside it (``build[12].sm``), or ``""`` for the whole file.
    """

    def __init__(self, path: object, key: str, message: str):
        self.path = str(path)
        self.key = key
        where = f"{self.path}: {key}" if key else self.path
        super().__init__(f"{where}: {message}")


class OutputExistsError(UsageError):
    """Refused to overwrite files the user already has (pass ``--force``)."""

    def __init__(self, paths: list[str]):
        self.paths = paths
        # a name with a line break or an escape sequence is listed as ascii() writes it: one line, inert
        listed = "\n".join(f"  {p if p.isprintable() else ascii(p)}" for p in paths)
        super().__init__(
            f"refusing to overwrite existing file(s):\n{listed}\n  pass --force to replace them "
            "(the old content is replaced atomically, never half-written)"
        )


class NoCompatibleBuild(EnvcheckError):
    """No candidate build satisfied every constraint. Exit code 1."""

    exit_code = 1


class CouldNotRun(EnvcheckError):
    """The command could not do its work, for a reason outside the input and outside the verdict:
    a tool it runs is missing or failed, an index or the network could not be reached. Exit code 3
    (DESIGN.md), so a script tells "could not run" from "no build fits" (1) and "bad input" (2)."""

    exit_code = 3


class IndexFetchError(CouldNotRun):
    """A wheel index page could not be read or made no sense (timeout, HTTP error, truncated body,
    wrong content type, redirect loop, malformed file name). Exit code 3: the input was fine, the
    fetch failed; nothing was written."""


class IndexDataMissing(CouldNotRun):
    """The generated index data (``matrices/generated-index-*.toml``) lacks the wheel files asked
    for (e.g. hashes for a release newer than the last ``envcheck matrix update``). Exit code 3."""


class MissingExtra(UsageError):
    """A command needs an optional dependency that is not installed. Exit code 2; the message names
    what to install (:func:`envcheck.install_hint.extra_hint`: the packages the extra pulls, and this
    envcheck's own source for every extra — never ``envcheck[...]``, a name PyPI gives another project)."""


#: optional extra → (import name, what needs it); pyproject.toml [project.optional-dependencies]
EXTRAS = {
    "docker": ("docker", "`envcheck docker` (build and verify images)"),
    "update": ("requests", "`envcheck matrix update` (reading wheel indexes)"),
    "junit": ("junitparser", "JUnit XML reports (--junit)"),
    "completion": ("argcomplete", "`envcheck completion` (shell completion scripts)"),
}


def require_extra(extra: str) -> None:
    """Import the module of ``extra`` (see :data:`EXTRAS`) or raise one clear line saying what to install.

    Raises:
        MissingExtra: the package is not installed (exit 2).
    """
    import importlib

    module, feature = EXTRAS[extra]
    try:
        importlib.import_module(module)
    except ImportError:
        from envcheck.install_hint import extra_hint

        raise MissingExtra(f"{feature} needs the '{extra}' extra: {extra_hint(extra)}") from None
