"""A real HTTP server on 127.0.0.1 serving a folder: the package indexes and mirrors that tests
install from (pip, uv and the recipe scripts talk to it exactly as to a remote index)."""

from __future__ import annotations

import contextlib
import http.server
import threading
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def serve_directory(root: Path) -> Iterator[str]:
    """Serve ``root`` read-only until the block ends; yields the base URL (no trailing slash)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(root), **kw)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
