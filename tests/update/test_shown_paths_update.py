"""`matrix update` prints the files it wrote with fsutil.shown(): a --data-dir holding a line break or
an escape sequence is one inert line (breaker5 F10, left by hfix7: only plan and probe were done)."""

from __future__ import annotations

import hashlib

from tests.update.index_support import send

EVIL = "d\nWrote evil\x1b[31m"
SHA = hashlib.sha256(b"not a real wheel").hexdigest()
WHEEL = "torch-2.7.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"
PAGE = f'<html><body>\n<a href="/whl/cu128/{WHEEL}#sha256={SHA}">x</a>\n</body></html>\n'.encode()


def test_the_files_written_are_named_on_one_inert_line(cli, server, tmp_path):
    server.routes["/whl/torch/"] = lambda h: send(h, 200, PAGE, "text/html")
    d = tmp_path / EVIL
    r = cli(["matrix", "update", "--index", server.url + "/whl/", "--data-dir", str(d), "--packages", "torch",
             "--retries", "0"])
    assert r.code == 0, r.err
    assert any(d.rglob("*.toml"))  # it wrote
    wrote = [ln for ln in r.out.splitlines() if "wrote" in ln]
    assert wrote and all("\\n" in ln and "\\x1b" in ln for ln in wrote), r.out
    assert "\x1b" not in r.out + r.err and "\nWrote evil" not in r.out + r.err
