"""HTTP client for simple indexes: one :class:`requests.Session`, retries with backoff, timeouts.

* Content negotiation (PEP 691): ``Accept: application/vnd.pypi.simple.v1+json, text/html;q=0.1``
  — JSON when the server offers it (PyPI), HTML otherwise (download.pytorch.org).
* Retries (urllib3 :class:`~urllib3.util.Retry`): connection errors, read errors and HTTP 429/500/
  502/503/504, with exponential backoff; GET only. Redirects are followed up to
  :data:`MAX_REDIRECTS` times (a loop fails with a clear message).
* TLS certificates are always verified (``REQUESTS_CA_BUNDLE`` / ``SSL_CERT_FILE`` are honoured by
  requests for private CAs); there is no switch to turn that off.
* A body shorter than its ``Content-Length`` is an error (urllib3 2 enforces the length); a body
  over :data:`MAX_PAGE_BYTES`, or one that takes longer than ``timeout`` × 4 in all (a server that
  trickles bytes), is an error too.

Every failure raises :class:`envcheck.errors.IndexFetchError` (exit 3, could not run) naming the URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import requests
from requests.adapters import HTTPAdapter
import urllib3.exceptions
from urllib3.util import Retry

from envcheck import __version__
from envcheck.errors import IndexFetchError
from envcheck.update.pages import HTML_TYPES, JSON_TYPE, Link, PageError, parse_html, parse_json

__all__ = ["IndexClient", "Page", "ACCEPT", "MAX_REDIRECTS"]

ACCEPT = f"{JSON_TYPE}, text/html;q=0.1"
MAX_REDIRECTS = 10
RETRY_STATUS = (429, 500, 502, 503, 504)
#: The largest page read (the real torch listing is ~0.8 MiB as HTML): a server that sends more is
#: refused rather than read into memory.
MAX_PAGE_BYTES = 64 * 1024 * 1024
#: The longest Retry-After honoured, in seconds; a longer one fails at once with the server's answer.
MAX_RETRY_AFTER = 30.0


class _CappedRetry(Retry):
    """urllib3's Retry, but a server's Retry-After never makes envcheck sleep longer than
    :data:`MAX_RETRY_AFTER` seconds."""

    def get_retry_after(self, response):  # type: ignore[no-untyped-def]
        wait = super().get_retry_after(response)
        return None if wait is None else min(wait, MAX_RETRY_AFTER)


@dataclass(frozen=True)
class Page:
    """A fetched and parsed project page.

    Attributes:
        url: the URL asked for.
        kind: ``"json"`` (PEP 691) or ``"html"`` (PEP 503).
        links: the files it lists.
        nbytes: size of the body in bytes.
    """

    url: str
    kind: str
    links: Tuple[Link, ...]
    nbytes: int


class IndexClient:
    """Fetches simple-index pages.

    Args:
        timeout: seconds to wait for the connection and for each read (one number for both).
        retries: how many times a failed request is retried (0 = one attempt).
        backoff: backoff factor in seconds: waits ``backoff * 2**(n-1)`` before retry n.
    """

    def __init__(self, timeout: float = 30.0, retries: int = 3, backoff: float = 0.5):
        import math

        if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
            from envcheck.errors import UsageError

            raise UsageError(f"--timeout {timeout!r}: expected a number of seconds > 0")
        self.timeout = timeout
        self.retries = retries
        self.session = requests.Session()
        self.session.max_redirects = MAX_REDIRECTS
        self.session.headers.update({"Accept": ACCEPT, "User-Agent": f"envcheck/{__version__}"})
        retry = _CappedRetry(
            total=retries, connect=retries, read=retries, status=retries, redirect=MAX_REDIRECTS,
            backoff_factor=backoff, status_forcelist=RETRY_STATUS, allowed_methods=frozenset({"GET"}),
            raise_on_status=False, respect_retry_after_header=True,
        )

        self._open: set = set()  # connections in use, so a deadline can cut them
        adapter = _TrackingAdapter(self._open, max_retries=retry)
        self.session.mount("https://", adapter)
        self.session.mount("http://", adapter)

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> IndexClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_page(self, url: str) -> Page:
        """GET a project page and parse it by its content type.

        Raises:
            IndexFetchError: timeout, connection error, HTTP error status, redirect loop, truncated
                body, a content type that is neither PEP 691 JSON nor HTML, or an unparsable page.
        """
        resp, body = self._get(url)
        ctype = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
        try:
            text = body.decode(resp.encoding or "utf-8", errors="replace")
        except (LookupError, TypeError):
            raise IndexFetchError(f"{url}: unknown character set {str(resp.encoding)[:40]!r} in the "
                                  "Content-Type header (a simple index page is UTF-8)") from None
        try:
            if ctype == JSON_TYPE:
                kind, links = "json", parse_json(text, resp.url)
            elif ctype in HTML_TYPES:
                kind, links = "html", parse_html(text, resp.url)
            else:
                raise PageError(
                    f"content type {ctype or '(none)'!r} is neither {JSON_TYPE} (PEP 691) nor "
                    "text/html (PEP 503): is --index a simple index (…/simple/ or …/whl/)?"
                )
        except PageError as exc:
            raise IndexFetchError(f"{url}: {exc}") from None
        return Page(url, kind, tuple(links), len(body))

    def _read_body(self, url: str, resp: requests.Response) -> bytes:
        return _read_body_with_deadline(self, url, resp)

    @property
    def deadline(self) -> float:
        """Seconds one page may take in all, from connecting to its last byte (retries included)."""
        return self.timeout * 4 * (self.retries + 1) + MAX_RETRY_AFTER * self.retries

    def _get(self, url: str) -> Tuple[requests.Response, bytes]:
        import threading

        limit = self.deadline
        expired = threading.Event()

        def expire() -> None:  # cut every connection of this client: the blocked read fails at once
            expired.set()
            for conn in list(self._open):
                _cut(conn)

        timer = threading.Timer(limit, expire)
        timer.daemon = True
        timer.start()
        try:
            got = self._get_once(url, expired, limit)
            if expired.is_set():  # cut mid-way: what arrived is not the page
                got[0].close()
                raise IndexFetchError(url)
            return got
        except IndexFetchError:
            if expired.is_set():
                raise IndexFetchError(f"{url}: the page did not arrive within {limit:g} s from connecting "
                                      "(the server sends too slowly)") from None
            raise
        finally:
            timer.cancel()

    def _get_once(self, url: str, expired: Any, limit: float) -> Tuple[requests.Response, bytes]:
        tries = f" (after {self.retries} retr{'y' if self.retries == 1 else 'ies'})" if self.retries else ""
        try:
            resp = self.session.get(url, timeout=self.timeout, stream=True)
            if resp.status_code >= 400:
                hint = " (no such project page on this index?)" if resp.status_code == 404 else ""
                again = tries if resp.status_code in RETRY_STATUS else ""
                wait = resp.headers.get("Retry-After", "")
                if wait.isdigit() and float(wait) > MAX_RETRY_AFTER:
                    hint += f" (the server asks to retry after {wait} s)"
                resp.close()
                raise IndexFetchError(f"{url}: HTTP {resp.status_code} {resp.reason}{again}{hint}")
            return resp, self._read_body(url, resp)
        except requests.exceptions.TooManyRedirects:
            raise IndexFetchError(f"{url}: more than {MAX_REDIRECTS} redirects (a redirect loop?)") from None
        except requests.exceptions.SSLError as exc:
            raise IndexFetchError(f"{url}: TLS certificate check failed: {_reason(exc)}") from None
        except requests.exceptions.ChunkedEncodingError as exc:
            raise IndexFetchError(f"{url}: the body ended early (truncated): {_reason(exc)}") from None
        except (requests.exceptions.Timeout, requests.exceptions.ConnectionError) as exc:
            root = _root(exc)
            refused = isinstance(root, (urllib3.exceptions.NewConnectionError, urllib3.exceptions.NameResolutionError)) \
                if hasattr(urllib3.exceptions, "NameResolutionError") else isinstance(root, urllib3.exceptions.NewConnectionError)
            if not refused and (isinstance(exc, requests.exceptions.Timeout)
                                or isinstance(root, urllib3.exceptions.TimeoutError)):
                raise IndexFetchError(f"{url}: no answer within {self.timeout:g} s (timed out){tries}") from None
            raise IndexFetchError(f"{url}: cannot connect{tries}: {_reason(exc)}") from None
        except requests.exceptions.RequestException as exc:
            raise IndexFetchError(f"{url}: {_reason(exc)}") from None
        except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError) as exc:
            # a TLS alert or reset in the middle of a body, a connection cut by the deadline
            what = "TLS error" if "ssl" in type(exc).__module__.lower() or "SSL" in type(exc).__name__ else "connection failed"
            raise IndexFetchError(f"{url}: {what}: {_reason(exc) or type(exc).__name__}") from None


def _cut(conn: Any) -> None:
    import socket

    sock = getattr(conn, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _TrackingAdapter(HTTPAdapter):
    """requests' adapter whose connections register themselves in ``open`` while they live, so the
    client's one deadline (connect → last byte) can cut a server that trickles its headers."""

    def __init__(self, open_set: set, **kw: Any) -> None:
        self._open_set = open_set
        super().__init__(**kw)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        from urllib3.connection import HTTPConnection, HTTPSConnection
        from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

        super().init_poolmanager(*args, **kwargs)
        registry = self._open_set

        def tracked(base: Any) -> Any:
            class Tracked(base):  # type: ignore[misc, valid-type]
                def connect(self) -> None:
                    registry.add(self)
                    super().connect()

                def close(self) -> None:
                    registry.discard(self)
                    super().close()
            return Tracked

        class Http(HTTPConnectionPool):
            ConnectionCls = tracked(HTTPConnection)

        class Https(HTTPSConnectionPool):
            ConnectionCls = tracked(HTTPSConnection)

        self.poolmanager.pool_classes_by_scheme = {"http": Http, "https": Https}


def _read_body_with_deadline(client: IndexClient, url: str, resp: requests.Response) -> bytes:
    """The whole body, or :class:`IndexFetchError` when it exceeds :data:`MAX_PAGE_BYTES` or takes
    longer than ``timeout`` × 4 in all — a watchdog closes the connection, because a server that
    trickles a byte at a time never trips the per-read timeout."""
    import threading

    limit = client.timeout * 4
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        resp.close()

    timer = threading.Timer(limit, expire)
    timer.daemon = True
    timer.start()
    chunks, size = [], 0
    try:
        for chunk in resp.iter_content(chunk_size=1 << 16):  # a short body raises here
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_PAGE_BYTES:
                raise IndexFetchError(f"{url}: the page is larger than {MAX_PAGE_BYTES >> 20} MiB; "
                                      "not a simple-index project page?")
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError, ValueError,
            AttributeError):
        if expired.is_set():
            raise IndexFetchError(f"{url}: the body did not arrive within {limit:g} s "
                                  "(the server sends too slowly)") from None
        raise
    finally:
        timer.cancel()
        if size > MAX_PAGE_BYTES:
            resp.close()
    if expired.is_set():
        raise IndexFetchError(f"{url}: the body did not arrive within {limit:g} s (the server sends too slowly)")
    return b"".join(chunks)


def _root(exc: BaseException) -> BaseException:
    """The innermost cause: requests wraps urllib3's MaxRetryError, which wraps the reason."""
    seen = exc
    for _ in range(5):
        nxt = getattr(seen, "reason", None) or (seen.args[0] if seen.args and isinstance(seen.args[0], BaseException) else None)
        if not isinstance(nxt, BaseException) or nxt is seen:  # ssl.SSLError's reason is a string
            break
        seen = nxt
    return seen


def _reason(exc: BaseException) -> str:
    """A one-line reason without object reprs: ``IncompleteRead(50 bytes read, 128 more expected)``."""
    root = _root(exc)
    text = str(root)
    m = re.search(r"IncompleteRead\([^)]*\)", text)
    if m:
        return m.group(0)
    m = re.search(r"\[Errno -?\d+\] [^'\"\)]+|Connection refused|Name or service not known", text)
    return " ".join((m.group(0) if m else text).split())[:300]


def page_urls(index: str, package: str, subindexes: Optional[List[str]] = None) -> List[str]:
    """The project page(s) to read: ``<index>/<package>/`` or ``<index>/<sub>/<package>/`` each."""
    base = index if index.endswith("/") else index + "/"
    if not subindexes:
        return [f"{base}{package}/"]
    return [f"{base}{s.strip('/')}/{package}/" for s in subindexes]
