"""Helpers for the index tests: a real HTTP server on 127.0.0.1 and the real download.pytorch.org
listing.

The listing is ``../shared/data/pytorch-whl-torch-listing-2025-07.html``: the PEP 503 page of
https://download.pytorch.org/whl/torch/ as of July 2025 (2,442 links), kept by replicate/cog at
``tools/compatgen/internal/torch_test.html`` @097da31a. It is read from there, never copied here.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ENVCHECK_TEST_SHARED") or ROOT.parent / "shared")  # as tests/conftest.py

LISTING = SHARED / "data" / "pytorch-whl-torch-listing-2025-07.html"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"

Handler = Callable[[http.server.BaseHTTPRequestHandler], None]


def send(h: http.server.BaseHTTPRequestHandler, status: int, body: bytes = b"",
         ctype: Optional[str] = "text/html", headers: Optional[Dict[str, str]] = None,
         length: Optional[int] = None) -> None:
    """Write one response; ``length`` overrides Content-Length (a lie makes a truncated body)."""
    h.send_response(status)
    if ctype:
        h.send_header("Content-Type", ctype)
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(body) if length is None else length))
    if length is not None:
        h.send_header("Connection", "close")
        h.close_connection = True  # the client sees the connection end early
    h.end_headers()
    h.wfile.write(body)


class IndexServer:
    """Routes ``path → handler``; records every request as (path, Accept header)."""

    def __init__(self) -> None:
        self.routes: Dict[str, Handler] = {}
        self.requests: List[Tuple[str, str]] = []
        server = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                server.requests.append((self.path, self.headers.get("Accept", "")))
                route = server.routes.get(self.path)
                if route is None:
                    send(self, 404, b"not found", "text/plain")
                else:
                    route(self)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        # a client that gives up (timeout, redirect loop) resets the connection; socketserver would
        # print that to sys.stderr, which the in-process CLI runner captures as the command's output
        self.httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def html(self, path: str, body: bytes) -> None:
        self.routes[path] = lambda h: send(h, 200, body, "text/html")

    def json(self, path: str, doc: object) -> None:
        """A PEP 691 page; HTML clients (no JSON in Accept) get 406, as content negotiation allows."""
        data = json.dumps(doc).encode()

        def route(h: http.server.BaseHTTPRequestHandler) -> None:
            if JSON_TYPE in h.headers.get("Accept", ""):
                send(h, 200, data, JSON_TYPE)
            else:
                send(h, 406, b"JSON only", "text/plain")

        self.routes[path] = route

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def snapshot(d: Path) -> Dict[str, bytes]:
    """Every file in ``d`` (hidden temporaries included) → its bytes."""
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def slow(h: http.server.BaseHTTPRequestHandler, seconds: float = 3.0) -> None:
    time.sleep(seconds)
    send(h, 200, b"<html></html>")
