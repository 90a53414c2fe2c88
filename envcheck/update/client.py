"""HTTP client for simple indexes: one :class:`requests.Session`, retries with backoff, timeouts.

* Content negotiation (PEP 691): ``Accept: application/vnd.pypi.simple.v1+json, text/html;q=0.1``
  — JSON when the server offers it (PyPI), HTML otherwise (download.pytorch.org).
* Retries (urllib3 :class:`~urllib3.util.Retry`): connection errors, read errors and HTTP 429/500/
  502/503/504, with exponential backoff; GET only. Redirects are followed up to
  :data:`MAX_REDIRECTS` times (a loop fails with a clear message).
* TLS certificates are always verified (``REQUESTS_CA_BUNDLE`` / ``SSL_CERT_FILE`` are honoured by
  requests for private CAs); there is no switch to turn that off.
* A body shorter than its ``Content-Length`` is an error (urllib3 2 enforces the length).

Every failure raises :class:`envcheck.errors.IndexFetchError` (exit 1) naming the URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

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


@dataclass(frozen=True)
class Page:
    """A fetched and parsed project page.

    Attributes:
        url: the URL asked for; ``final_url`` after redirects.
        kind: ``"json"`` (PEP 691) or ``"html"`` (PEP 503).
        links: the files it lists.
        nbytes: size of the body in bytes.
    """

    url: str
    final_url: str
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
        self.timeout = timeout
        self.retries = retries
        self.session = requests.Session()
        self.session.max_redirects = MAX_REDIRECTS
        self.session.headers.update({"Accept": ACCEPT, "User-Agent": f"envcheck/{__version__}"})
        retry = Retry(
            total=retries, connect=retries, read=retries, status=retries, redirect=MAX_REDIRECTS,
            backoff_factor=backoff, status_forcelist=RETRY_STATUS, allowed_methods=frozenset({"GET"}),
            raise_on_status=False, respect_retry_after_header=True,
        )
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("https://", adapter)
        self.session.mount("http://", adapter)

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> "IndexClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_page(self, url: str) -> Page:
        """GET a project page and parse it by its content type.

        Raises:
            IndexFetchError: timeout, connection error, HTTP error status, redirect loop, truncated
                body, a content type that is neither PEP 691 JSON nor HTML, or an unparsable page.
        """
        resp = self._get(url)
        ctype = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
        body = resp.content
        text = body.decode(resp.encoding or "utf-8", errors="replace")
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
        return Page(url, resp.url, kind, tuple(links), len(body))

    def _get(self, url: str) -> requests.Response:
        tries = f" (after {self.retries} retr{'y' if self.retries == 1 else 'ies'})" if self.retries else ""
        try:
            resp = self.session.get(url, timeout=self.timeout)
            if resp.status_code >= 400:
                hint = " (no such project page on this index?)" if resp.status_code == 404 else ""
                again = tries if resp.status_code in RETRY_STATUS else ""
                raise IndexFetchError(f"{url}: HTTP {resp.status_code} {resp.reason}{again}{hint}")
            resp.content  # read the whole body now, inside the try (a short body raises here)
            return resp
        except requests.exceptions.TooManyRedirects:
            raise IndexFetchError(f"{url}: more than {MAX_REDIRECTS} redirects (a redirect loop?)") from None
        except requests.exceptions.SSLError as exc:
            raise IndexFetchError(f"{url}: TLS certificate check failed: {_reason(exc)}") from None
        except requests.exceptions.ChunkedEncodingError as exc:
            raise IndexFetchError(f"{url}: the body ended early (truncated): {_reason(exc)}") from None
        except (requests.exceptions.Timeout, requests.exceptions.ConnectionError) as exc:
            if isinstance(exc, requests.exceptions.Timeout) or isinstance(_root(exc), urllib3.exceptions.TimeoutError):
                raise IndexFetchError(f"{url}: no answer within {self.timeout:g} s (timed out){tries}") from None
            raise IndexFetchError(f"{url}: cannot connect{tries}: {_reason(exc)}") from None
        except requests.exceptions.RequestException as exc:
            raise IndexFetchError(f"{url}: {_reason(exc)}") from None


def _root(exc: BaseException) -> BaseException:
    """The innermost cause: requests wraps urllib3's MaxRetryError, which wraps the reason."""
    seen = exc
    for _ in range(5):
        nxt = getattr(seen, "reason", None) or (seen.args[0] if seen.args and isinstance(seen.args[0], BaseException) else None)
        if nxt is None or nxt is seen:
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
    return (m.group(0) if m else text)[:300]


def page_urls(index: str, package: str, subindexes: Optional[List[str]] = None) -> List[str]:
    """The project page(s) to read: ``<index>/<package>/`` or ``<index>/<sub>/<package>/`` each."""
    base = index if index.endswith("/") else index + "/"
    if not subindexes:
        return [f"{base}{package}/"]
    return [f"{base}{s.strip('/')}/{package}/" for s in subindexes]
