"""The ``envcheck`` console script and ``python -m envcheck``: a Ctrl-C at any moment is one line and
exit 130, never a traceback — also while Python is still importing the rest of envcheck.

This module imports only ``os`` (loaded with the interpreter) and ``_signal`` (built in: the
``signal`` module would import ``enum`` first); :func:`main` installs its SIGINT handler
before it imports anything else. While the imports run, SIGINT ends the process at once (nothing has
been written yet); once they are done Python's own handler is back, so a Ctrl-C during a command
raises KeyboardInterrupt and the command's clean-up (a file set's rollback, a verify worker's group)
runs before the same one line. Importing this module changes nothing (a library user's handlers
stay theirs).
"""

import os

import _signal as signal  # type: ignore[import-not-found]  # the C module: no Python imports before the handler

INTERRUPTED = "envcheck: interrupted\n"
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C'd command


def _say_interrupted() -> None:
    try:
        os.write(2, INTERRUPTED.encode())
    except OSError:  # stderr closed: the exit code still says it
        pass


def _exit_now(signum: int, frame: object) -> None:  # noqa: ARG001 (signal handler signature)
    _say_interrupted()
    os._exit(EXIT_INTERRUPTED)


def _install() -> None:
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when the parent ignores SIGINT
            signal.signal(signal.SIGINT, _exit_now)
    except (ValueError, OSError):  # not the main thread (embedded): leave the handler alone
        pass


def _restore() -> None:
    try:
        if signal.getsignal(signal.SIGINT) is _exit_now:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):
        pass


def main(argv: "list[str] | None" = None) -> int:  # a string: no `from __future__` import to wait for
    """Run envcheck (``envcheck.cli.main``) with Ctrl-C as exit 130 and one line, wherever it lands.

    ``argv=None`` (the program itself): the handler stays installed after the command, for the
    interpreter's shutdown; a caller passing ``argv`` gets its own handler back.
    """
    _install()
    if argv is None:
        _catch_swallowed_interrupts()
        _fewer_collections()
    try:
        if argv is None:
            _untranslated_argparse()
        from envcheck.cli import main as cli_main
    except KeyboardInterrupt:  # the handler was not ours to install (not the main thread)
        _say_interrupted()
        return EXIT_INTERRUPTED
    _restore()
    try:
        code = cli_main(argv)
    except KeyboardInterrupt:  # before or after the command's own handling (parsing, settings)
        _say_interrupted()
        code = EXIT_INTERRUPTED
    except Exception as exc:
        if not _caused_by_interrupt(exc):
            raise
        _say_interrupted()
        code = EXIT_INTERRUPTED
    if argv is None:  # interpreter shutdown (flushing, atexit) is no place for a traceback either
        _install()
        if code == EXIT_INTERRUPTED:
            _exit_interrupted()
        _freeze_heap()
    return code


def _fewer_collections() -> None:
    """A run makes a few hundred thousand objects that live to its end (the matrix's rows, every
    candidate with its reasons) and almost no garbage cycles: with the default threshold (700 new
    objects) the collector runs hundreds of times and walks them again each time. 50,000 keeps
    collections for what a long run (a fleet wait, verify's workers) leaves behind, without walking a
    plan's objects over and over (#9: with :func:`_freeze_heap`, ~15 % of a plan's CPU time)."""
    import gc  # built in

    gc.set_threshold(50_000, 20, 20)


def _untranslated_argparse() -> None:
    """envcheck's command line is English: argparse's own phrases ("options", "usage: ", its errors)
    are used as they are, not looked up in gettext's catalogs. argparse asks gettext's default
    domain ("messages", which no catalog of argparse serves) for each phrase, and each lookup imports
    locale and lists the locale folders of every language in $LANGUAGE/$LC_ALL/$LANG: ~2.5 ms of every
    start (#9). Only the program itself (``argv=None``) does this, never a caller in its own process."""
    import argparse

    argparse._ = str  # type: ignore[attr-defined]  # the identity for a phrase
    argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural  # type: ignore[attr-defined]


def _freeze_heap() -> None:
    """The program is done: move every object it made (the matrix, ~1,500 candidates) out of the
    garbage collector's reach, so the collections of the interpreter's shutdown do not walk them —
    part of the ~15 % :func:`_fewer_collections` speaks of. Nothing runs after this
    but the shutdown, which still frees everything; only the program itself (``argv=None``) does it,
    never a caller in its own process (a test), whose garbage must stay collectable."""
    import gc  # built in

    gc.freeze()


def _catch_swallowed_interrupts() -> None:
    """A KeyboardInterrupt raised where Python cannot raise it (a weakref callback of the import
    machinery, a ``__del__``) is printed as "Exception ignored in …" and the run goes on as if no
    Ctrl-C came: end the program as for any other Ctrl-C instead."""
    import sys

    previous = sys.unraisablehook

    def hook(unraisable):  # type: ignore[no-untyped-def]
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _say_interrupted()
            os._exit(EXIT_INTERRUPTED)
        previous(unraisable)

    sys.unraisablehook = hook


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt is in ``exc``'s chain: Python turns one that lands in a class's
    ``__set_name__`` (a dataclass being imported) into ``RuntimeError: Error calling __set_name__``."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 50:
        if isinstance(cur, KeyboardInterrupt):
            return True
        cur = cur.__cause__ or cur.__context__
        seen += 1
    return False


def _exit_interrupted() -> None:
    """End the program with 130 after an interruption was handled. Under ``python -m``, CPython
    remembers a KeyboardInterrupt that once passed through a string ``eval``/``exec`` (namedtuple,
    dataclasses) even after it was caught, and at exit kills itself with SIGINT instead of returning
    the code (exit -2 after our one line); so the clean-up runs here (streams, atexit and weakref
    finalizers) and the process ends with the code it reported."""
    import atexit
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    try:
        atexit._run_exitfuncs()
    finally:
        os._exit(EXIT_INTERRUPTED)
