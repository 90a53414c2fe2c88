"""Values from outside, checked at the edge; values going out, escaped for where they go.

Every string envcheck did not write itself — a flag, a field of a machine, lock or facts file, a
line of ``nvidia-smi`` output — is checked against its grammar where it comes in:

* :func:`check_name`: printable, one line, bounded length (a distro or GPU name);
* :func:`check_url`: an index or mirror URL — http, https or file, no whitespace, no shell
  metacharacters, no credentials in what is written (:func:`split_credentials`);
* :func:`check_image`: an OCI image reference (``python:3.12-slim``, ``ghcr.io/o/i@sha256:…``).

And everything written out goes through the escaper of its syntax: :func:`comment_text` for a
``#`` comment (every character that any of pip, TOML, YAML or Docker reads as a line break, and
every other control character, becomes a space), :func:`terminal_text` for the terminal (ANSI
escape sequences and control characters dropped), ``shlex.quote`` for shell words, and the TOML and
YAML writers for data.
"""

from __future__ import annotations

import re

from envcheck.errors import UsageError

TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:
    from typing import Optional, Tuple

#: Longest name accepted from a file or a tool (a GPU's marketing name is < 64 characters).
NAME_MAX = 200
#: Longest URL accepted.
URL_MAX = 2048

#: Characters ``str.splitlines`` (which pip's requirements reader uses) breaks lines on, plus
#: YAML's and TOML's line breaks: all of them are control or separator characters.
LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"

#: (patterns here are strings: ``re`` compiles and caches each on first use, not on every start: #9)
_ANSI = (r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[@-Z\\-_])"
         r"|\x9b[0-?]*[ -/]*[@-~]")

#: Characters a URL written into a shell command, a Dockerfile or a requirements file must not hold.
_URL_FORBIDDEN = set(" \t\"'`$\\;|&<>(){}*?!^#")


def _bad_char(ch: str) -> bool:
    """A control, format (bidi overrides), surrogate, private-use, unassigned or line/paragraph
    separator character."""
    import unicodedata  # (only for text that is not plainly printable)

    cat = unicodedata.category(ch)
    return cat[0] == "C" or cat in ("Zl", "Zp")


def printable_line(text: str) -> bool:
    """True when ``text`` holds only printable characters on one line (spaces allowed)."""
    # str.isprintable: no control, format, separator (but the space) or unassigned character, so
    # none of the _bad_char ones; the per-character look is for the rest (a no-break space is fine)
    return text.isprintable() or not any(_bad_char(ch) for ch in text)


def check_name(value: object, what: str, max_len: int = NAME_MAX) -> str:
    """A name from outside: a string, printable, one line, at most ``max_len`` characters.

    Raises:
        UsageError: it is not (the message names ``what`` and shows the value escaped).
    """
    if not isinstance(value, str):
        raise UsageError(f"{what}: expected a string, got {type(value).__name__}")
    if len(value) > max_len:
        raise UsageError(f"{what}: {len(value)} characters, more than the {max_len} a name may have")
    bad = next((ch for ch in value if _bad_char(ch)), None)
    if bad is not None:
        raise UsageError(f"{what}: {ascii(value)[:120]} holds a control or line-break character "
                         f"(U+{ord(bad):04X}); a name is printable text on one line")
    return value


def clean_name(value: object, max_len: int = NAME_MAX) -> Optional[str]:
    """A name read from a tool's output (``nvidia-smi``, ``rocminfo``): control characters and
    escape sequences become spaces, runs of spaces fold, the length is capped. ``None`` when
    nothing printable is left."""
    if not isinstance(value, str):
        return None
    text = " ".join(terminal_text(value, keep_newlines=False).split())
    text = text[:max_len].strip()
    return text or None


def comment_text(text: object) -> str:
    """``text`` made safe for one ``#`` comment line in any file envcheck writes: every line break
    (``\\n``, CR, VT, FF, U+001C–U+001E, NEL, U+2028/9) and every other control or format character
    becomes a space, ANSI escape sequences are dropped."""
    s = str(text)
    if s.isprintable():  # no control, format or separator character, so no escape sequence either
        return s
    s = re.sub(_ANSI, "", s)
    return "".join(" " if _bad_char(ch) else ch for ch in s)


def terminal_text(text: object, keep_newlines: bool = True) -> str:
    """``text`` made safe to print: ANSI/OSC escape sequences dropped, other control characters
    (except newline and tab, with ``keep_newlines``) replaced by ``?`` — so a file cannot move the
    cursor, recolour, retitle the terminal or fake a line of envcheck's output."""
    s = re.sub(_ANSI, "", str(text))
    keep = "\n\t" if keep_newlines else ""
    return "".join(ch if ch in keep or not _bad_char(ch) else ("?" if ch not in LINE_BREAKS else " ")
                   for ch in s)


def escaped_text(text: object, keep_newlines: bool = True) -> str:
    """``text`` safe to print with nothing taken out: every control, format or line-break character
    (but newline and tab, with ``keep_newlines``) is written as ``ascii()`` writes it (``\\x1b``),
    so an escape sequence in a path or a program's output reaches the terminal as inert text and
    the message still names what was given (breaker6 F10: ``m\\x1b[2J.toml`` was shown as
    ``m.toml``, a file that existed); as :func:`envcheck.fsutil.shown` shows a path."""
    s = str(text)
    if s.isprintable():
        return s
    keep = "\n\t" if keep_newlines else ""
    return "".join(ch if ch in keep or not _bad_char(ch) else ascii(ch)[1:-1] for ch in s)


# -- URLs ---------------------------------------------------------------------------------------
#: an http(s) URL of the plainest shape: a host name, no port, user-info, query or fragment, a path
#: of unreserved characters. Every rule of :func:`check_url` holds for it, so it is checked without
#: urllib (whose import, with ipaddress, is ~3 ms of every plan: #9); any other URL takes the full way.
_PLAIN_URL = r"https?://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?:/[A-Za-z0-9._~%+/-]*)?"


def host_of(url: str) -> str | None:
    """The host name of ``url`` in lower case (``urlsplit(url).hostname``), None without one."""
    if re.fullmatch(_PLAIN_URL, url):
        return url.split("/", 3)[2].lower()
    from urllib.parse import urlsplit

    return urlsplit(url).hostname


def netloc_of(url: str) -> str:
    """``urlsplit(url).netloc``: the host (with user-info and port, as written)."""
    if re.fullmatch(_PLAIN_URL, url):
        return url.split("/", 3)[2]
    from urllib.parse import urlsplit

    return urlsplit(url).netloc


def split_credentials(url: str) -> Tuple[str, bool]:
    """``("https://host/path", True)`` for ``https://user:secret@host/path``: the URL without its
    user-info, and whether it had any."""
    if "@" not in url:
        return url, False
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, False
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), True


def redact(url: str) -> str:
    """``https://***@host/path`` for a URL carrying credentials; the URL itself otherwise."""
    if "@" not in url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, "***@" + host, parts.path, parts.query, parts.fragment))


CREDENTIALS_HINT = ("pass them at install time instead: a ~/.netrc entry for the host, pip's keyring "
                    "support, or PIP_INDEX_URL / PIP_EXTRA_INDEX_URL in the environment of `pip install`")


def check_url(value: object, what: str, schemes: Tuple[str, ...] = ("http", "https", "file"),
              allow_query: bool = False) -> str:
    """A URL from outside: one of ``schemes``, a host (except ``file:``), no whitespace, control
    characters or shell metacharacters, ASCII only (percent-encode the rest), bounded length.
    Credentials are allowed here; :func:`split_credentials` takes them out before anything is
    written.

    Raises:
        UsageError: it is not such a URL (one line naming ``what``).
    """
    if not isinstance(value, str):
        raise UsageError(f"{what}: expected a URL string, got {type(value).__name__}")
    if len(value) <= URL_MAX and value.startswith(tuple(f"{s}:" for s in schemes)) and re.fullmatch(_PLAIN_URL, value):
        return value
    from urllib.parse import urlsplit

    shown = ascii(redact(value) if "@" in value else value)[:160]
    if len(value) > URL_MAX:
        raise UsageError(f"{what}: a URL of {len(value)} characters, more than {URL_MAX}")
    if not value.isascii() or not printable_line(value):
        raise UsageError(f"{what}: {shown}: a URL is printable ASCII on one line (percent-encode the rest)")
    if any(ch.isspace() for ch in value):
        raise UsageError(f"{what}: {shown}: a URL has no spaces (percent-encode them as %20)")
    if "#" in value:
        raise UsageError(f"{what}: {shown}: an index URL has no #fragment")
    bad = sorted({ch for ch in value if ch in _URL_FORBIDDEN} - ({"?"} if allow_query else set()))
    if bad:
        raise UsageError(f"{what}: {shown}: a URL here has no whitespace or shell metacharacters "
                         f"({' '.join(bad)}); percent-encode them")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (raises ValueError on a bad port)
    except ValueError as exc:
        raise UsageError(f"{what}: {shown}: not a URL ({exc})") from None
    if parts.scheme not in schemes:
        raise UsageError(f"{what}: {shown}: expected a {'/'.join(schemes)} URL")
    if parts.scheme != "file" and not parts.hostname:
        raise UsageError(f"{what}: {shown}: the URL names no host")
    if not re.fullmatch(r"[A-Za-z0-9.:\[\]_~%+-]*", parts.netloc.rpartition("@")[2]):
        raise UsageError(f"{what}: {shown}: the host part holds characters a host name cannot")
    if any(ch in "[]" for ch in parts.path + parts.query):
        raise UsageError(f"{what}: {shown}: brackets only belong around an IPv6 host; percent-encode them")
    return value


# -- image references (OCI / distribution reference grammar) ------------------------------------
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*(?::{_TAG})?(?:@{_DIGEST})?"


def check_image(value: object, what: str = "--base-image") -> str:
    """An image reference in the OCI distribution grammar (``name[:tag][@digest]``, at most 255
    characters in the name).

    Raises:
        UsageError: it is not one.
    """
    if not isinstance(value, str) or not value:
        raise UsageError(f"{what}: give an image reference like python:3.12-slim")
    name = value.split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    if len(value) > 512 or len(name) > 255 or not (_plain_reference(value)
                                                   or re.fullmatch(_REFERENCE, value, re.ASCII)):
        raise UsageError(f"{what}: {ascii(value)[:160]} is not an image reference "
                         "([registry/]name[:tag][@digest], lowercase name, e.g. python:3.12-slim)")
    return value


_LOWER_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_TAG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _plain_reference(value: str) -> bool:
    """Whether ``value`` is ``part[/part…][:tag]``, every part a path component (lowercase letters and
    digits, joined by ``.``, ``_``, ``__`` or dashes) and the tag plain: the form of every image the
    matrices name (``nvidia/cuda:12.8.0-runtime-ubuntu24.04``, ``ghcr.io/astral-sh/uv:0.5``), which
    :data:`_REFERENCE` matches too (a domain like ``ghcr.io`` is such a part). Checked with string
    methods: compiling :data:`_REFERENCE` is ~0.8 ms of a plan's Dockerfile (#9); any other value (a
    digest, a port, an upper-case host) is for the pattern. ``False`` says nothing about validity."""
    name, tag = value, None
    if ":" in value.rsplit("/", 1)[-1]:
        name, _, tag = value.rpartition(":")
        if not (0 < len(tag) <= 128 and tag[0] not in ".-" and _TAG_CHARS.issuperset(tag)):
            return False
    return all(_path_component(part) for part in name.split("/"))


def _path_component(part: str) -> bool:
    """``[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*``, without compiling it."""
    if not part or part[0] not in _LOWER_ALNUM or part[-1] not in _LOWER_ALNUM:
        return False
    run = ""  # the separator between two runs of letters and digits
    for ch in part:
        if ch in _LOWER_ALNUM:
            if run and run not in (".", "_", "__") and run != "-" * len(run):
                return False
            run = ""
        elif ch in "._-":
            run += ch
        else:
            return False
    return True


#: Words PowerShell passes to a native program as they are (no quotes needed): no space, quote,
#: ``$``, backtick, ``;``, ``,`` (array), ``@`` (splatting), ``&``, ``|``, braces, parentheses, ``#``, ``<>``.
_PS_PLAIN = r"[A-Za-z0-9_.:/\\=+-]+"
#: PowerShell reads these as single quotes too (and doubles each to mean one).
_PS_QUOTES = "'\u2018\u2019\u201a\u201b"


def shell_word(word: str, windows: bool = False, one_line: bool = False) -> str:
    """``word`` quoted for the shell a user pastes a printed command into: POSIX sh (``shlex.quote``),
    or PowerShell on Windows (single quotes, each single quote doubled).

    Bytes that are not UTF-8 (a file name Python holds as surrogate escapes) — and, with
    ``one_line`` (a command inside a ``#`` comment), control characters and line breaks — make the
    word bash's ``$'…'`` with ``\\xHH`` escapes: the same bytes when pasted, on one line, and text
    any file can hold (never a UnicodeEncodeError)."""
    import shlex

    if not windows:
        if _utf8(word) and (not one_line or word.isprintable()):
            return shlex.quote(word)
        return _ansi_c(word)
    if word and re.fullmatch(_PS_PLAIN, word):
        return word
    return "'" + "".join(c * 2 if c in _PS_QUOTES else c for c in word) + "'"


def _utf8(word: str) -> bool:
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:  # surrogate escapes: bytes of a name that are not UTF-8
        return False
    return True


def _ansi_c(word: str) -> str:
    """bash's ``$'…'`` form of ``word``: printable characters as they are, every other byte (of the
    file system's encoding, surrogate escapes included) as ``\\xHH``."""
    import os

    out = []
    for ch in word:
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch.isprintable() and _utf8(ch):
            out.append(ch)
        else:
            out.append("".join(f"\\x{b:02x}" for b in os.fsencode(ch)))
    return "$'" + "".join(out) + "'"


def shell_command(argv: list[str] | tuple[str, ...], windows: bool = False) -> str:
    """One command line of ``argv``, each word quoted by :func:`shell_word` (PowerShell runs a quoted
    program path only after its call operator: ``& 'C:\\my env\\python.exe' -m pip …``)."""
    words = [shell_word(str(a), windows) for a in argv]
    if windows and words and words[0].startswith("'"):
        words[0] = "& " + words[0]
    return " ".join(words)
