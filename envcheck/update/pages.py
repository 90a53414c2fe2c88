"""Read a "simple" project page: PEP 503 HTML or PEP 691 JSON → the files it links.

Both forms give, per file: its name, its URL, its sha256 (PEP 503: the ``#sha256=`` URL fragment;
PEP 691: ``hashes.sha256``), and whether it is yanked (PEP 592). HTML is read with
:class:`html.parser.HTMLParser`, never with regular expressions.

A page that ends before its ``</html>`` (when it opened ``<html>``) is treated as truncated, so a
connection cut short never passes for a shorter listing.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import unquote, urljoin, urlsplit

__all__ = ["Link", "PageError", "parse_html", "parse_json", "JSON_TYPE", "HTML_TYPES"]

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPES = ("application/vnd.pypi.simple.v1+html", "text/html")


class PageError(ValueError):
    """The page is not a valid simple-index page (the message says what is wrong)."""


@dataclass(frozen=True)
class Link:
    """One file on a simple page.

    Attributes:
        filename: the file name (URL-decoded last path segment: ``torch-2.7.1+cu128-….whl``).
        url: absolute URL of the file, without fragment.
        sha256: lower-case hex digest, or ``""`` when the page gives none.
        yanked: PEP 592 yanked.
        upload_time: PEP 700 ``upload-time`` (ISO 8601) when the page gives it, else ``""``.
    """

    filename: str
    url: str
    sha256: str = ""
    yanked: bool = False
    upload_time: str = ""


def _split_fragment(url: str) -> Tuple[str, Dict[str, str]]:
    base, _, frag = url.partition("#")
    hashes: Dict[str, str] = {}
    if frag and "=" in frag:
        algo, _, digest = frag.partition("=")
        hashes[algo.lower()] = digest.lower()
    return base, hashes


def _filename(url: str) -> str:
    return unquote(posixpath.basename(urlsplit(url).path))


class _AnchorParser(HTMLParser):
    def __init__(self, base_url: str):
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.links: List[Link] = []
        self.opened_html = False
        self.closed_html = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        if tag == "html":
            self.opened_html = True
        elif tag == "base":
            href = dict(attrs).get("href")
            if href:
                self.base_url = urljoin(self.base_url, href)
        elif tag == "a":
            a = dict(attrs)
            href = a.get("href")
            if not href:
                return
            url, hashes = _split_fragment(urljoin(self.base_url, href))
            self.links.append(Link(_filename(url), url, hashes.get("sha256", ""), "data-yanked" in a))

    def handle_endtag(self, tag: str) -> None:
        if tag == "html":
            self.closed_html = True


def parse_html(text: str, page_url: str) -> List[Link]:
    """Every ``<a href>`` of a PEP 503 page, resolved against ``page_url``.

    Raises:
        PageError: the page opened ``<html>`` but ended before ``</html>`` (truncated).
    """
    p = _AnchorParser(page_url)
    p.feed(text)
    p.close()
    if p.opened_html and not p.closed_html:
        raise PageError(f"the page ends before </html> ({len(text)} characters): truncated")
    return p.links


def parse_json(text: str, page_url: str) -> List[Link]:
    """The ``files`` of a PEP 691 JSON page (API version 1.x).

    Raises:
        PageError: not JSON (e.g. truncated), another API major version, or a malformed entry.
    """
    try:
        doc: Any = json.loads(text)
    except ValueError as exc:
        raise PageError(f"not valid JSON ({exc}); truncated or not a PEP 691 page") from None
    except RecursionError:
        raise PageError("JSON nested too deeply to be a PEP 691 page") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        raise PageError("JSON without a 'files' list: not a PEP 691 project page")
    api = str((doc.get("meta") or {}).get("api-version", ""))
    if not api.startswith("1."):
        raise PageError(f"PEP 691 api-version {api or '(none)'!r}: only 1.x is understood")
    out: List[Link] = []
    for i, f in enumerate(doc["files"]):
        if not isinstance(f, dict) or not isinstance(f.get("filename"), str) or not isinstance(f.get("url"), str):
            raise PageError(f"files[{i}]: an entry needs string 'filename' and 'url'")
        url, frag = _split_fragment(urljoin(page_url, f["url"]))
        hashes = f["hashes"] if isinstance(f.get("hashes"), dict) else {}
        sha = str(hashes.get("sha256") or frag.get("sha256") or "").lower()
        out.append(Link(f["filename"], url, sha, bool(f.get("yanked")), str(f.get("upload-time") or "")))
    return out
