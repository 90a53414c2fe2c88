"""The one way envcheck reads user-named files and writes files: nothing the user had is lost.

Reading (:func:`read_input`): only regular files (or ``-`` for standard input), at most a size cap —
a FIFO, a character device (``/dev/zero``, ``/dev/tty``) or a folder is refused at once instead of
blocking or reading forever.

Writing one file (:func:`write_file`): the text goes to a temporary file in the target's folder,
flushed to disk, then into place — with :func:`os.link` when the target must not exist (the kernel
refuses atomically if something appeared meanwhile, so two runs cannot both "create" it) or
:func:`os.replace` when ``force`` allows replacing a *regular file*. Something that is not a regular
file (a FIFO, a device, a folder, a symbolic link — dangling or not) is never replaced, even with
``force``.

Writing a set of files (:func:`write_set`, ``plan -o DIR``, ``matrix update``): all or nothing.
Under an exclusive lock on DIR, every new file is staged in a transaction folder inside DIR (same
file system), the current files are hard-linked aside, and a journal records the step; the files
are then renamed into place. A failure, SIGINT or SIGTERM rolls back to the old set at once; after a
SIGKILL or a power cut the next writer (or reader, :func:`recover`) of DIR rolls the half-done set
back from the journal, and removes leftover temporary files.

A command that fails leaves nothing it made: folders created for a write that failed are removed
again when empty, and a download into a folder (:func:`undo_on_failure`, ``plan --download``, a
wheelhouse) that fails or is interrupted removes the folders and files it added.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time

from envcheck.errors import OutputExistsError, UsageError

TYPE_CHECKING = False  # typing is not imported at run time; json only where used, signal never (start-up, #9)
# Paths are strings here (os.path): pathlib's import (with urllib.parse and ipaddress, which it
# imports) is ~5 ms of every plan (#9). What a caller gets back is the path as str(pathlib.Path(…))
# would print it (:func:`clean_path`).
if TYPE_CHECKING:
    from re import Pattern
    from typing import Callable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

    PathLike = Union[str, "os.PathLike[str]"]

#: Default cap for an input file (machine, lock, facts, report files are kilobytes).
INPUT_CAP = 64 * 1024 * 1024
#: Prefix of transaction folders inside a target folder (never a name envcheck renders).
TXN_PREFIX = ".envcheck-txn-"
#: Marker in the names of envcheck's temporary files (``.NAME.envcheck-XXXXXXXX.tmp``).
TMP_MARK = ".envcheck-"
#: How long a writer waits for another envcheck writing into the same folder.
LOCK_WAIT_S = 30.0


# -- reading ------------------------------------------------------------------------------------
def read_input(path: PathLike, flag: str = "", cap: int = INPUT_CAP, stdin_ok: bool = False,
               follow: bool = True) -> bytes:
    """The bytes of a user-named input file, refusing what is not a regular file.

    ``-`` (with ``stdin_ok``) reads standard input, at most ``cap`` bytes. ``follow=False`` refuses a
    symbolic link too (a file envcheck itself names in a folder others may write: the matrix cache).

    Raises:
        UsageError: missing, unreadable, not a regular file, or larger than ``cap`` (one line).
    """
    where = f"{flag} {shown(path)}".strip() if flag else shown(path)
    if stdin_ok and os.fsdecode(path) == "-":
        stream = getattr(sys.stdin, "buffer", None)
        try:
            if stream is None:
                data = (sys.stdin.read(cap + 1) or "").encode("utf-8", "replace") if sys.stdin else b""
            else:
                data = _read_capped(stream, cap)
        except (OSError, ValueError) as exc:
            raise UsageError(f"{where}: cannot read standard input: {exc}") from None
        if len(data) > cap:
            raise UsageError(f"{where}: standard input is larger than {cap} bytes; give the part that matters")
        return data
    try:
        nofollow = 0 if follow else getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | nofollow)
    except ValueError:
        raise UsageError(f"{ascii(where)[:120]}: a path cannot hold a NUL byte") from None
    except OSError as exc:
        raise UsageError(f"{where}: cannot read: {_reason(exc)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{where}: {_kind(st.st_mode)}, not a regular file; give a file")
        if st.st_size > cap:
            raise UsageError(f"{where}: {st.st_size} bytes, more than the {cap} a file of this kind may have")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = _read_capped(fh, cap)
    except OSError as exc:
        raise UsageError(f"{where}: cannot read: {_reason(exc)}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > cap:  # grew while read (a file still being written)
        raise UsageError(f"{where}: more than the {cap} bytes a file of this kind may have")
    return data


def read_input_text(path: PathLike, flag: str = "", cap: int = INPUT_CAP, stdin_ok: bool = False) -> str:
    """:func:`read_input` decoded as UTF-8.

    Raises:
        UsageError: as :func:`read_input`, or the bytes are not UTF-8.
    """
    data = read_input(path, flag, cap, stdin_ok)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"{flag} {shown(path)}".strip() if flag else shown(path)
        raise UsageError(f"{where}: not UTF-8 text (byte {exc.start})") from None


def _read_capped(fh, cap: int) -> bytes:
    chunks: List[bytes] = []
    total = 0
    while total <= cap:
        chunk = fh.read(min(1 << 20, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def shown(path: PathLike) -> str:
    """A path as a message prints it: as it is, or, holding a line break, an escape sequence or bytes
    that are not text, as ``ascii()`` writes it — one line, inert (a name must not fake a line of
    envcheck's output or retitle the terminal: breaker5 F10; errors.OutputExistsError does the same)."""
    s = os.fsdecode(path)
    return s if s.isprintable() else ascii(s)


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return "a file name in the path is too long"
    return exc.strerror or str(exc)


# -- one file -----------------------------------------------------------------------------------
def existing_kind(path: PathLike) -> Optional[str]:
    """``None`` when nothing is at ``path`` (not even a dangling symbolic link); ``"file"`` for a
    regular file; otherwise what it is (``"a FIFO (named pipe)"``, ``"a symbolic link"``…)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            return None
        raise
    return "file" if stat.S_ISREG(st.st_mode) else _kind(st.st_mode)


def clean_path(path: PathLike) -> str:
    """``str(pathlib.Path(path))`` without pathlib: repeated slashes and ``.`` parts dropped, no
    trailing slash, ``""`` read as ``.``; ``..`` is kept (through a link it may name another folder)."""
    s = os.fspath(path)
    if os.name == "nt":  # drive letters, both separators: pathlib's own rules
        from pathlib import Path

        return str(Path(s))
    parts = [p for p in s.split("/") if p not in ("", ".")]
    root = "/" if s.startswith("/") else ""
    return root + "/".join(parts) or "."


def _parents(path: str) -> List[str]:
    """``[str(p) for p in Path(path).parents]`` for a :func:`clean_path` path: ``a/b`` → ``a``, ``.``;
    ``/a/b`` → ``/a``, ``/``."""
    out: List[str] = []
    while path not in (".", "/"):
        head = os.path.dirname(path)
        path = head if head else "."
        out.append(path)
    return out


def check_target(path: PathLike, force: bool, flag: str = "-o") -> str:
    """Check, before any work is done, that ``path`` may be written.

    Raises:
        UsageError: not a regular file (even with ``force``), a parent is not a folder, a name
            too long.
        OutputExistsError: it exists and ``force`` is false (a dangling link counts as existing).
    """
    path = clean_path(path)
    if path in ("", ".") or os.path.basename(path) in ("", ".", ".."):
        raise UsageError(f"{flag} {shown(path)}: give a file name")
    try:
        kind = existing_kind(path)
        for parent in _parents(path):
            pk = existing_kind(parent)
            if pk is None:
                continue
            if not os.path.isdir(parent):
                raise UsageError(f"{flag} {shown(path)}: {shown(parent)} is not a directory")
            break
    except OSError as exc:
        raise UsageError(f"{flag} {shown(path)}: {_reason(exc)}") from None
    except ValueError:
        raise UsageError(f"{flag} {ascii(path)[:120]}: a path cannot hold a NUL byte") from None
    if kind is not None and kind != "file":
        raise UsageError(f"{flag} {shown(path)}: refusing to replace {kind}, not a regular file (even with --force); "
                         "give a file name")
    if kind is not None and not force:
        raise OutputExistsError([str(path)])
    return path


def _claim(directory: PathLike, prefix: str, suffix: str, make: Callable[[str], None]) -> str:
    """A new name ``prefix`` + random letters + ``suffix`` in ``directory``, claimed by ``make(path)``
    (an ``O_EXCL`` create or a ``mkdir``: the kernel refuses a name that exists) — what
    :mod:`tempfile` does, without importing it (and with it random, shutil, bz2, lzma…)."""
    for _ in range(100):
        path = os.path.join(directory, f"{prefix}{os.urandom(5).hex()}{suffix}")
        try:
            make(path)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary name", os.fsdecode(directory))


def _mkstemp(directory: PathLike, prefix: str, suffix: str) -> Tuple[int, str]:
    """``tempfile.mkstemp``: a new file (mode 0600, not following a link), open for writing."""
    fds: List[int] = []
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    tmp = _claim(directory, prefix, suffix, lambda p: fds.append(os.open(p, flags, 0o600)))
    return fds[0], tmp


def _mkdtemp(directory: PathLike, prefix: str) -> str:
    """``tempfile.mkdtemp``: a new folder (mode 0700)."""
    return _claim(directory, prefix, "", lambda p: os.mkdir(p, 0o700))


def _temp_beside(path: str, data: bytes, mode: Optional[int] = None) -> str:
    fd, tmp = _mkstemp(os.path.dirname(path) or ".", f".{os.path.basename(path)[:40]}{TMP_MARK}", ".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode if mode is not None else 0o644)
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def utf8_safe(text: str) -> str:
    """``text`` with each character UTF-8 cannot carry (a lone surrogate, as ``json.loads`` accepts from
    ``"\\udc80"`` in a node report's host id) as ``?``: one rule for every output envcheck writes, the
    files (:func:`encoded`) and the formats that would otherwise escape it into something invalid
    (JUnit XML's ``&#56448;``) — breaker6 F5: `fleet merge --prometheus` failed with a traceback."""
    return text.encode("utf-8", "replace").decode("utf-8")


def encoded(text: Union[str, bytes]) -> bytes:
    """The bytes an output file holds for ``text``: UTF-8 of :func:`utf8_safe`; bytes as they are."""
    return text.encode("utf-8", "replace") if isinstance(text, str) else text


def write_file(path: PathLike, text: Union[str, bytes], force: bool = False, flag: str = "-o",
               mkdir: bool = True) -> str:
    """Write one file atomically; never replace anything but a regular file, and that only with
    ``force``. UTF-8 with ``\\n`` line ends for text. SIGTERM/SIGHUP raise while it runs (SIGINT
    already does), so an interrupted write removes its temporary file and the folders it made, like
    a set's commit (breaker5 F4: `probe -o sub/m.json` killed in fsync left ``.m.json.envcheck-*.tmp``).

    Raises:
        UsageError / OutputExistsError: as :func:`check_target`, or the write failed (nothing
            half-written is left).
    """
    path = check_target(path, force, flag)
    data = encoded(text)
    try:
        with _signals_raise(), _empty_folders_go(_parents(path)[0]):
            _write_file(path, data, force, flag, mkdir)
    except OSError as exc:
        raise UsageError(f"{flag} {shown(path)}: cannot write: {_reason(exc)}") from None
    return path


def write_files(outputs: Sequence[Tuple[PathLike, Union[str, bytes], str]], force: bool = False) -> List[str]:
    """The one-file outputs of one command (``fleet merge --save A --junit B``: each ``(path, text,
    flag)``, in any folders), all or nothing, like :func:`write_set`: every file is written to a
    temporary name beside its target first, then all are moved into place. A failure or an interrupt
    (SIGINT, SIGTERM, SIGHUP) before the last is in place puts back what the user had and removes
    the rest (breaker5 F4: an interrupted `fleet merge` kept the finished --save). (Not journalled
    like a set: a SIGKILL between two renames can leave the first.)

    Raises:
        UsageError / OutputExistsError: as :func:`write_file`; nothing is changed.
    """
    targets = [(check_target(p, force, flag), encoded(t), flag)
               for p, t, flag in outputs]
    staged: List[str] = []
    placed: List[Tuple[str, str, Optional[str]]] = []  # a target (maybe) in place, its temp file, what it replaced
    now = ("", "")  # the flag and path being written (for the error)
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(_signals_raise())
            for path, _, _ in targets:
                stack.enter_context(_empty_folders_go(_parents(path)[0]))
            try:
                for path, data, flag in targets:
                    now = (flag, path)
                    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                    mode = None
                    with contextlib.suppress(OSError):
                        mode = stat.S_IMODE(os.lstat(path).st_mode)
                    staged.append(_temp_beside(path, data, mode))
                for (path, _, flag), tmp in zip(targets, staged):
                    now, old = (flag, path), None
                    if force and existing_kind(path) == "file":  # kept (a hard link) until all are in place
                        def keep(p: str, path: str = path) -> None:
                            os.link(path, p)

                        old = _claim(os.path.dirname(path) or ".", f".{os.path.basename(path)[:40]}{TMP_MARK}", ".tmp", keep)
                    placed.append((path, tmp, old))
                    _place(tmp, path, force, flag)
            except BaseException:
                for path, tmp, old in reversed(placed):
                    if old is not None:  # (put back even when the replace had not happened: the same file)
                        os.replace(old, path)
                    elif _ours(tmp, path):  # never a file another writer made meanwhile
                        _unlink(path)
                placed.clear()
                raise
            finally:
                for p in staged + [old for _, _, old in placed if old is not None]:
                    _unlink(p)
    except OSError as exc:
        raise UsageError(f"{now[0]} {shown(now[1])}: cannot write: {_reason(exc)}; nothing was changed") from None
    return [path for path, _, _ in targets]


def _ours(tmp: str, path: str) -> bool:
    """``path`` is the file placed from ``tmp`` (a hard link to it, or ``tmp`` moved there)."""
    try:
        return os.path.samefile(tmp, path)
    except FileNotFoundError:
        return not os.path.exists(tmp) and os.path.lexists(path)
    except OSError:
        return False


def _write_file(path: str, data: bytes, force: bool, flag: str, mkdir: bool) -> None:
    if mkdir:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    mode = None
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(os.lstat(path).st_mode)
    tmp = _temp_beside(path, data, mode)
    try:
        _place(tmp, path, force, flag)
    finally:
        _unlink(tmp)


def _place(tmp: str, path: str, force: bool, flag: str) -> None:
    """Move ``tmp`` to ``path``: create-only without ``force`` (link fails if anything exists),
    else replace only a regular file."""
    if not force:
        try:
            os.link(tmp, path)
            return
        except FileExistsError:
            raise OutputExistsError([str(path)]) from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
        # a file system without hard links: O_EXCL claims the name, then the content moves over it
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        os.replace(tmp, path)
        return
    kind = existing_kind(path)
    if kind is not None and kind != "file":
        raise UsageError(f"{flag} {shown(path)}: refusing to replace {kind} (even with --force)")
    os.replace(tmp, path)


def _unlink(p: PathLike) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass


# -- a set of files -----------------------------------------------------------------------------
@contextlib.contextmanager
def folder_lock(directory: PathLike, flag: str = "-o", wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold an exclusive advisory lock (flock) on ``directory``.

    Raises:
        UsageError: another envcheck held it for longer than ``wait_s``.
    """
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here; the create-only link still guards names
        yield
        return
    try:  # the folder itself is locked: no lock file is left behind
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise UsageError(f"{flag} {shown(directory)}: cannot lock: {_reason(exc)}") from None
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise UsageError(f"{flag} {shown(directory)}: cannot lock: {_reason(exc)}") from None
                if time.monotonic() > deadline:
                    raise UsageError(f"{flag} {shown(directory)}: another envcheck has been writing into it for "
                                     f"{wait_s:.0f} s; try again when it is done") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


class _Interrupted(KeyboardInterrupt):
    """SIGTERM/SIGHUP during a commit, turned into an exception so the rollback runs (and the
    command line reports it as an interruption, never a traceback)."""


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """During a commit, SIGTERM/SIGHUP raise (like SIGINT's KeyboardInterrupt) so ``finally`` runs.

    (``_signal``, the built-in module ``signal`` wraps in enums: the same calls, without ~1 ms of
    imports on a plan's way, #9; a previous handler is given back as it was taken.)"""
    import _signal as signal  # type: ignore[import-not-found]

    old = {}  # outside the main thread signal.signal raises ValueError: nothing is changed there

    def handler(signum, frame):  # noqa: ARG001
        raise _Interrupted(signum)

    for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if sig is not None:
            with contextlib.suppress(OSError, ValueError):
                old[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, h in old.items():
            with contextlib.suppress(OSError, ValueError):
                signal.signal(sig, h)


def write_file_interruptible(path: PathLike, data: bytes, flag: str) -> str:
    """:func:`write_file` with ``force``: for files written on the side (the matrix cache), where an
    interrupted run must leave nothing behind (breaker4: a cache temp file was left); every
    :func:`write_file` now turns SIGTERM and SIGHUP into an exception while it runs."""
    return write_file(path, data, force=True, flag=flag)


def sweep_temp_files(folder: PathLike, older_than_s: float, target: Optional[Pattern[str]] = None) -> None:
    """Remove envcheck's temporary files (:func:`is_temp_name`) in ``folder`` older than ``older_than_s``:
    what a process killed outright (SIGKILL, power loss) left; a writer's own is younger. With
    ``target``, only those of a final name that pattern matches in full (the matrix cache sweeps its
    own, never another command's in a folder the user shares with it)."""
    import time

    limit = time.time() - older_than_s
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        final = temp_target(name)
        if final is not None and (target is None or target.fullmatch(final)):
            p = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                st = os.lstat(p)
                if stat.S_ISREG(st.st_mode) and st.st_mtime < limit:
                    os.unlink(p)


#: the random part of a temporary file's name: :func:`_claim`'s 10 hex digits, or the 8 characters of
#: :mod:`tempfile` (envcheck before 2026-12)
_TMP_RANDOM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def temp_target(name: str) -> Optional[str]:
    """The final name (cut to 40 characters) of the file whose temporary file is called ``name``
    (``.NAME.envcheck-XXXXXXXXXX.tmp``, as :func:`_temp_beside` makes it); ``None`` for any other name
    — a user's ``.notes.envcheck-draft.tmp`` is not envcheck's (breaker5 F0b: remove only our own)."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    head, mark, rnd = name[:-4].rpartition(TMP_MARK)
    if not mark or len(head) < 2 or len(rnd) not in (8, 10) or not set(rnd) <= _TMP_RANDOM:
        return None
    return head[1:]


def _first_missing(path: str) -> Optional[str]:
    """The topmost folder on the way to ``path`` that does not exist yet (``path`` itself when only
    it is missing); ``None`` when ``path`` exists."""
    try:
        if existing_kind(path) is not None:
            return None
        top = path
        for parent in _parents(path):
            if existing_kind(parent) is not None:
                break
            top = parent
    except OSError:  # cannot tell (a parent we may not read): claim nothing, remove nothing
        return None
    return top


@contextlib.contextmanager
def _empty_folders_go(folder: str) -> Iterator[None]:
    """A block that may create ``folder`` and its missing parents: when it fails, those it created
    are removed again if still empty (never a file another writer put there meanwhile). Through a
    ``..`` (``-o new/../m.json``) only the folders before it are known to be the ones it made: those
    go (breaker5 F8: rmdir("new/..") failed and stopped, so ``new/`` stayed); one after it may be the
    user's, reached another way, and is left."""
    top = _first_missing(folder)
    try:
        yield
    except BaseException:
        if top is not None:
            chain = [folder, *_parents(folder)]
            for p in chain[:chain.index(top) + 1]:
                if ".." in p.split("/"):
                    continue
                try:
                    os.rmdir(p)
                except OSError:
                    break
        raise


@contextlib.contextmanager
def undo_on_failure(*folders: PathLike) -> Iterator[None]:
    """For a block that creates or fills ``folders`` (``plan --download DIR``, a wheelhouse): when
    it fails or is interrupted (an exception, SIGINT, SIGTERM, SIGHUP), remove what it added — a
    folder that did not exist before (the first missing parent, with everything the block put in
    it), and in a folder that existed, the entries that were not there before. What the user had
    stays as it was; on success nothing is touched.
    """
    made: List[str] = []
    before: dict = {}
    for f in folders:
        p = clean_path(f)
        top = _first_missing(p)
        if top is not None:
            made.append(top)
        elif os.path.isdir(p) and not os.path.islink(p):
            before[p] = set(os.listdir(p))
    try:
        with _signals_raise():
            yield
    except BaseException:
        for p, names in before.items():
            with contextlib.suppress(OSError):
                for name in set(os.listdir(p)) - names:
                    q = os.path.join(p, name)
                    if os.path.isdir(q) and not os.path.islink(q):
                        _rmtree(q)
                    else:
                        _unlink(q)
        for top in made:
            if os.path.isdir(top) and not os.path.islink(top):
                _rmtree(top)
        raise


def _fsync_dir(directory: str) -> None:
    """Flush a folder's entries, where the system can (not every one opens a folder to flush it)."""
    with contextlib.suppress(OSError, AttributeError):
        _fsync_file(directory)


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_staging(txn: str) -> None:
    """Before the journal of a set that replaces files the user had: the staged copies (``new/``) and
    the backups (``old/``) are on disk. After a power cut the rollback reads a staged copy that is
    gone as "moved in" and puts the backup back, else removes the target: were the journal on disk
    and those entries not, it would remove a file the user had. (A set of new files needs neither:
    any target found after a crash is one the set made. The journal's own fsync does not cover
    them: a folder's fsync holds its own entries, not those of the folders inside it.)"""
    _fsync_dir(os.path.join(txn, "new"))
    _fsync_dir(os.path.join(txn, "old"))


def _rollback(directory: str, txn: str) -> None:
    """Undo a transaction from its journal: every target back to what it was, then drop the folder.

    A target whose staged ``new/NAME`` is still there was never moved in (left alone); one whose
    staged file is gone was replaced: its ``old/NAME`` backup goes back, or it is removed when it
    did not exist before.
    """
    import json

    try:
        with open(os.path.join(txn, "journal.json"), encoding="utf-8") as fh:
            journal = json.loads(fh.read())
        names = [n for n in journal.get("names", []) if isinstance(n, str) and "/" not in n and n not in ("", ".", "..")]
    except (OSError, ValueError, AttributeError):
        names = []  # the journal was never completed: nothing was moved in yet
    if not os.path.exists(os.path.join(txn, "done")):
        for name in names:
            new, dst = os.path.join(txn, "new", name), os.path.join(directory, name)
            if os.path.exists(new):
                try:
                    ours = os.path.exists(dst) and os.path.samefile(new, dst)  # linked in, staged copy not yet dropped
                except OSError:
                    ours = False
                if not ours:
                    continue  # never moved in
            old = os.path.join(txn, "old", name)
            if os.path.exists(old):
                os.replace(old, dst)
            else:
                _unlink(dst)
    _rmtree(txn)


def _rmtree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def recover(directory: PathLike) -> List[str]:
    """Finish or roll back transactions a killed writer left in ``directory`` and remove its
    leftover temporary files. Returns what was found (for a message); ``[]`` when it was clean.

    Safe to call often: without leftovers it only lists the folder. Takes the folder's lock only
    when there is something to do (and gives up quietly if another writer holds it).
    """
    d = clean_path(directory)
    try:
        names = os.listdir(d)
    except OSError:
        return []
    left = [n for n in names if _leftover(n)]
    if not left:
        return []
    try:
        with folder_lock(d, wait_s=0.0):
            _recover_locked(d)
    except UsageError:
        return []  # another writer is at work (it recovers first), or the folder is read-only
    return left


def _leftover(name: str) -> bool:
    return name.startswith(TXN_PREFIX) or temp_target(name) is not None


def _recover_locked(d: str) -> None:
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        if n.startswith(TXN_PREFIX) and os.path.isdir(p) and not os.path.islink(p):
            _rollback(d, p)
        elif _leftover(n) and existing_kind(p) == "file":
            _unlink(p)  # a temporary file of a writer that was killed (the target is intact)


def write_set(directory: PathLike, files: Mapping[str, Union[str, bytes]], force: bool = False,
              flag: str = "-o", _hook=None) -> List[str]:
    """Write every ``name → text`` into ``directory`` (created if needed), all or nothing. With
    ``force``, a file that already holds exactly its new text is left as it is (re-planning into the
    same folder rewrites, renames and flushes to disk only what changed).

    Raises:
        OutputExistsError: a target exists and ``force`` is false (nothing is written).
        UsageError: ``directory`` is not a folder or cannot be written; a target is not a regular
            file (even with ``force``); nothing is changed.
    """
    d = clean_path(directory)
    for name in files:
        if "/" in name or os.sep in name or name in ("", ".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
    try:
        kind = existing_kind(d)
        if kind is not None and not os.path.isdir(d):
            raise UsageError(f"{flag} {shown(d)}: exists and is not a directory")
    except OSError as exc:
        raise UsageError(f"{flag} {shown(d)}: cannot create the folder: {_reason(exc)}") from None
    with _empty_folders_go(d):  # a set that fails leaves no empty folder it made
        return _write_set(d, files, force, flag, _hook)


def _write_set(d: str, files: Mapping[str, Union[str, bytes]], force: bool, flag: str, _hook) -> List[str]:
    try:
        os.makedirs(d, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{flag} {shown(d)}: cannot create the folder: {_reason(exc)}") from None
    targets = [os.path.join(d, n) for n in files]
    try:
        with folder_lock(d, flag):
            _recover_locked(d)
            odd = [(t, k) for t in targets for k in [existing_kind(t)] if k is not None and k != "file"]
            if odd:
                raise UsageError(f"{flag} {shown(d)}: refusing to replace what is not a regular file (even with --force):\n"
                                 + "\n".join(f"  {t}: {k}" for t, k in odd))
            if not force:
                existing = [t for t in targets if existing_kind(t) is not None]
                if existing:
                    raise OutputExistsError(existing)
            _commit(d, files, force, flag, _hook)
    except OSError as exc:
        raise UsageError(f"{flag} {shown(d)}: cannot write: {_reason(exc)}; nothing was changed") from None
    return targets


def _same_content(path: str, data: bytes) -> bool:
    """``path`` is a regular file (not a link) holding exactly ``data``."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data):
            return False
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        with os.fdopen(fd, "rb") as fh:
            return fh.read(len(data) + 1) == data
    except OSError:
        return False


def _commit(d: str, files: Mapping[str, Union[str, bytes]], force: bool, flag: str, hook) -> None:
    if force:  # a file that already holds its new bytes is left as it is: no copy, rename or fsync
        as_bytes = {n: encoded(t) for n, t in files.items()}
        files = {n: b for n, b in as_bytes.items() if not _same_content(os.path.join(d, n), b)}
        if not files:
            return
    if len(files) == 1:  # one rename is all or nothing by itself: no transaction folder or journal
        ((name, text),) = files.items()
        if hook:
            hook(0, name)
        with _signals_raise():
            _write_file(os.path.join(d, name), encoded(text), force, flag, mkdir=False)
            _fsync_dir(d)
        return
    txn = _mkdtemp(d, TXN_PREFIX)
    new_dir, old_dir = os.path.join(txn, "new"), os.path.join(txn, "old")
    finished = False
    replaces = False  # a target has a version the user had (backed up in old/)
    try:
        with _signals_raise():
            os.mkdir(new_dir)
            os.mkdir(old_dir)
            for name, text in files.items():
                data = encoded(text)
                target, staged, backup = os.path.join(d, name), os.path.join(new_dir, name), os.path.join(old_dir, name)
                mode = None
                with contextlib.suppress(OSError):
                    mode = stat.S_IMODE(os.lstat(target).st_mode)
                tmp = _temp_beside(staged, data, mode)
                os.replace(tmp, staged)
                if existing_kind(target) == "file":
                    replaces = True
                    try:
                        os.link(target, backup)
                    except OSError:
                        import shutil

                        shutil.copy2(target, backup)
                        _fsync_file(backup)
            if replaces:
                _fsync_staging(txn)
            _write_journal(txn, list(files))
            _fsync_dir(txn)
            for i, name in enumerate(files):
                if hook:
                    hook(i, name)
                src, dst = os.path.join(new_dir, name), os.path.join(d, name)
                if force:
                    kind = existing_kind(dst)
                    if kind is not None and kind != "file":
                        raise UsageError(f"{flag} {dst}: refusing to replace {kind} (even with --force)")
                    os.replace(src, dst)
                else:
                    try:
                        os.link(src, dst)
                    except FileExistsError:
                        raise OutputExistsError([dst]) from None
                    os.unlink(src)
            _fsync_dir(d)
            os.close(os.open(os.path.join(txn, "done"), os.O_WRONLY | os.O_CREAT, 0o666))  # Path.touch
            finished = True
    finally:
        if finished:
            _remove_committed(txn, list(files))
        else:
            _rollback(d, txn)


def _remove_committed(txn: str, names: List[str]) -> None:
    """Remove a committed transaction folder, which holds exactly what :func:`_commit` put there:
    ``journal.json``, ``done``, ``new/`` (emptied by the commit) and ``old/NAME`` links. Each is
    removed by name through a descriptor of its folder opened without following links (as
    :func:`shutil.rmtree` does: a link swapped in is removed, never followed); anything else found
    there goes through :func:`_rmtree`. (No shutil import on a plan's path: ~3 ms, issue #9.)"""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        if os.unlink not in os.supports_dir_fd or os.rmdir not in os.supports_dir_fd:
            raise OSError(errno.ENOTSUP, "no dir_fd")
        top = os.open(txn, flags)
        try:
            old = os.open("old", flags, dir_fd=top)
            try:
                for name in names:
                    with contextlib.suppress(FileNotFoundError):  # a file that did not exist before
                        os.unlink(name, dir_fd=old)
            finally:
                os.close(old)
            for name in ("old", "new"):
                os.rmdir(name, dir_fd=top)
            for name in ("journal.json", "done"):
                os.unlink(name, dir_fd=top)
        finally:
            os.close(top)
        os.rmdir(txn)
    except OSError:
        _rmtree(txn)


def _write_journal(txn: str, names: List[str]) -> None:
    """``journal.json``: ``{"names": [...]}``, the bytes ``json.dump`` writes (without importing json
    for plain names: :func:`envcheck.jsontypes.json_string`)."""
    from envcheck.jsontypes import json_string

    tmp = os.path.join(txn, "journal.json.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write('{"names": [' + ", ".join(json_string(n) for n in names) + "]}")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, os.path.join(txn, "journal.json"))
