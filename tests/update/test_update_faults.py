"""Faults: each gives a clear message and a non-zero exit, and leaves every matrix file as it was.

Exit codes: 3 (could not run) when a page cannot be fetched or parsed (the input was fine), 2 for bad input.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envcheck import fsutil
from envcheck.update.client import IndexClient
from envcheck.update.update import run_update
from tests.update.index_support import send, slow, snapshot

OK_PAGE = (b"<!DOCTYPE html><html><body>\n"
           b'<a href="/whl/cpu/torch-2.7.1%2Bcpu-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=' + b"a" * 64 + b'">'
           b"torch-2.7.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl</a><br/>\n</body></html>\n")


def _update(cli, server, mx: Path, *extra: str, packages: str = "torch"):
    return cli(["matrix", "update", "--index", f"{server.url}/whl/", "--channel", "pytorch",
                "--packages", packages, "--matrices", str(mx), "--retries", "0", *extra])


@pytest.fixture
def seeded(cli, server, mx):
    """Matrices that already hold a generated torch file (so 'untouched' covers an existing file)."""
    server.html("/whl/torch/", OK_PAGE)
    assert _update(cli, server, mx).code == 0
    server.routes.clear()
    server.requests.clear()
    return mx


def _assert_fails(cli, server, mx, code, *needles, extra=(), packages="torch"):
    before = snapshot(mx)
    r = _update(cli, server, mx, *extra, packages=packages)
    assert r.code == code, (r.out, r.err)
    for n in needles:
        assert n in r.err, r.err
    assert "Traceback" not in r.err
    assert snapshot(mx) == before
    return r


def test_timeout(cli, server, seeded):
    server.routes["/whl/torch/"] = slow
    _assert_fails(cli, server, seeded, 3, "no answer within 0.3 s (timed out)", "/whl/torch/", extra=("--timeout", "0.3"))


def test_404(cli, server, seeded):
    _assert_fails(cli, server, seeded, 3, "HTTP 404", "/whl/torch/")


def test_500_is_retried_then_fails(cli, server, seeded):
    server.routes["/whl/torch/"] = lambda h: send(h, 500, b"boom", "text/plain")
    before = snapshot(seeded)
    r = cli(["matrix", "update", "--index", f"{server.url}/whl/", "--channel", "pytorch", "--packages", "torch",
             "--matrices", str(seeded), "--retries", "2"])
    assert r.code == 3 and "HTTP 500" in r.err
    assert len(server.requests) == 3  # one attempt + two retries
    assert snapshot(seeded) == before


def test_503_then_ok_succeeds_on_retry(server, mx):
    calls = []

    def flaky(h):
        calls.append(1)
        if len(calls) == 1:
            send(h, 503, b"busy", "text/plain")
        else:
            send(h, 200, OK_PAGE)

    server.routes["/whl/torch/"] = flaky
    with IndexClient(timeout=5, retries=2, backoff=0) as client:
        res = run_update(index=f"{server.url}/whl/", packages=["torch"], matrices=mx, channel="pytorch", client=client)
    assert len(calls) == 2
    assert res.packages[0].files == 1 and res.packages[0].written


def test_truncated_body(cli, server, seeded):
    server.routes["/whl/torch/"] = lambda h: send(h, 200, OK_PAGE[:60], "text/html", length=len(OK_PAGE))
    _assert_fails(cli, server, seeded, 3, "truncated")


def test_truncated_html_without_length(cli, server, seeded):
    cut = OK_PAGE[: OK_PAGE.index(b"</body>")]
    server.routes["/whl/torch/"] = lambda h: send(h, 200, cut, "text/html")
    _assert_fails(cli, server, seeded, 3, "truncated", "</html>")


def test_truncated_json(cli, server, seeded):
    body = b'{"meta": {"api-version": "1.1"}, "name": "torch", "files": [{"filename": "torch-2.7.1'
    server.routes["/whl/torch/"] = lambda h: send(h, 200, body, "application/vnd.pypi.simple.v1+json")
    _assert_fails(cli, server, seeded, 3, "not valid JSON")


def test_wrong_content_type(cli, server, seeded):
    server.routes["/whl/torch/"] = lambda h: send(h, 200, OK_PAGE, "application/octet-stream")
    _assert_fails(cli, server, seeded, 3, "content type 'application/octet-stream'")


def test_redirect_loop(cli, server, seeded):
    server.routes["/whl/torch/"] = lambda h: send(h, 302, b"", None, {"Location": "/whl/torch2/"})
    server.routes["/whl/torch2/"] = lambda h: send(h, 302, b"", None, {"Location": "/whl/torch/"})
    _assert_fails(cli, server, seeded, 3, "redirect")


def test_malformed_file_name(cli, server, seeded):
    bad = OK_PAGE.replace(b"torch-2.7.1%2Bcpu-cp312", b"torch-2.7.1%2Bcpu-cp312-extra-junk")
    server.html("/whl/torch/", bad)
    _assert_fails(cli, server, seeded, 3, "malformed wheel file name",
                  "torch-2.7.1+cpu-cp312-extra-junk-cp312-manylinux_2_28_x86_64.whl")


def test_file_of_another_package(cli, server, seeded):
    server.html("/whl/torch/", OK_PAGE.replace(b"/torch-2.7.1", b"/torchvision-0.22.1"))
    _assert_fails(cli, server, seeded, 3, "is a torchvision wheel on the page for torch")


def test_second_package_failing_writes_nothing(cli, server, seeded):
    server.html("/whl/torch/", OK_PAGE.replace(b"2.7.1", b"2.7.2"))  # would change the torch file
    _assert_fails(cli, server, seeded, 3, "/whl/torchvision/", "HTTP 404", packages="torch,torchvision")


@pytest.mark.parametrize("url", ["ftp://example.org/whl/", "download.pytorch.org/whl", "https:///whl/",
                                 "https://example.org/whl/?x=1"])
def test_bad_index_url_is_usage_error(cli, mx, url):
    before = snapshot(mx)
    r = cli(["matrix", "update", "--index", url, "--matrices", str(mx)])
    assert r.code == 2 and "is not an index URL" in r.err
    assert snapshot(mx) == before


def test_bad_package_name_is_usage_error(cli, mx):
    r = cli(["matrix", "update", "--packages", "torch,torch vision", "--matrices", str(mx)])
    assert r.code == 2 and "'torch vision' is not a package name" in r.err


def test_bad_numbers_are_usage_errors(cli, mx):
    r = cli(["matrix", "update", "--timeout", "0", "--matrices", str(mx)])
    assert r.code == 2 and "--timeout" in r.err


def test_failed_replace_rolls_back(server, seeded, monkeypatch):
    """A failure between the two os.replace calls puts the first file back as it was."""
    server.html("/whl/torch/", OK_PAGE.replace(b"2.7.1", b"2.7.2"))
    server.html("/whl/torchvision/", OK_PAGE.replace(b"/torch-2.7.1", b"/torchvision-0.22.1"))
    before = snapshot(seeded)
    real = os.replace
    calls = []

    def failing(src, dst):
        if Path(dst).parent != seeded:  # e.g. the parsed-matrix cache
            return real(src, dst)
        calls.append(Path(dst).name)
        if len(calls) == 2:
            raise KeyboardInterrupt  # an interrupt mid-way, the worst moment
        return real(src, dst)

    monkeypatch.setattr(fsutil.os, "replace", failing)
    with IndexClient(timeout=5, retries=0) as client, pytest.raises(KeyboardInterrupt):
        run_update(index=f"{server.url}/whl/", packages=["torch", "torchvision"], matrices=seeded,
                   channel="pytorch", client=client)
    assert calls[:2] == ["generated-index-pytorch-torch.toml", "generated-index-pytorch-torchvision.toml"]
    assert snapshot(seeded) == before


def test_unwritable_folder_is_usage_error(cli, server, seeded, monkeypatch):
    server.html("/whl/torch/", OK_PAGE.replace(b"2.7.1", b"2.7.2"))
    before = snapshot(seeded)

    def no_space(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil, "_mkstemp", no_space)  # where every temporary file of fsutil is made
    r = _update(cli, server, seeded)
    assert r.code == 2 and "No space left on device" in r.err and "nothing was changed" in r.err
    assert snapshot(seeded) == before


# -- hostile servers (a tester's findings) ---------------------------------------------------------

def _trickle(h):
    """Headers at once, then one byte every 0.1 s for ever (each read beats the timeout)."""
    import time

    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.end_headers()
    try:
        for _ in range(600):
            h.wfile.write(b"<")
            h.wfile.flush()
            time.sleep(0.1)
    except OSError:
        pass


def test_a_trickling_server_hits_the_overall_deadline(cli, server, seeded):
    server.routes["/whl/torch/"] = _trickle
    _assert_fails(cli, server, seeded, 3, "did not arrive within", extra=("--timeout", "0.5", "--retries", "0"))


def test_long_retry_after_is_capped(cli, server, seeded, monkeypatch):
    import envcheck.update.client as client

    monkeypatch.setattr(client, "MAX_RETRY_AFTER", 0.2)
    server.routes["/whl/torch/"] = lambda h: send(h, 429, b"slow down", "text/plain", headers={"Retry-After": "100000"})
    import time

    t = time.monotonic()
    _assert_fails(cli, server, seeded, 3, "HTTP 429", extra=("--retries", "1"))
    assert time.monotonic() - t < 10


def test_connection_refused_is_not_called_a_timeout(cli, seeded):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    before = snapshot(seeded)
    r = cli(["matrix", "update", "--index", f"http://127.0.0.1:{port}/whl/", "--packages", "torch",
             "--matrices", str(seeded), "--retries", "0"])
    assert r.code == 3 and "cannot connect" in r.err and "timed out" not in r.err
    assert snapshot(seeded) == before


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_non_finite_timeouts_are_usage_errors(cli, mx, value):
    r = cli(["matrix", "update", "--timeout", value, "--matrices", str(mx)])
    assert r.code == 2 and "--timeout" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("had", ["nothing", "data folder", "index folder"])
def test_a_failed_update_leaves_no_folder_it_made(cli, server, tmp_path, monkeypatch, had):
    """breaker4 F7: the default data folder (here $ENVCHECK_DATA_DIR) is made before the fetch; a
    fetch that fails removes what the update made and keeps what the user had."""
    data = tmp_path / "w" / "data"
    if had != "nothing":
        (data / "index" if had == "index folder" else data).mkdir(parents=True)
        (data / "mine.txt").write_text("mine\n")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    monkeypatch.setenv("ENVCHECK_DATA_DIR", str(data))
    monkeypatch.setenv("ENVCHECK_CACHE_DIR", str(tmp_path / "cache"))
    r = cli(["matrix", "update", "--index", f"{server.url}/whl/", "--packages", "torch", "--retries", "0"])
    assert r.code == 3 and "HTTP 404" in r.err and "Traceback" not in r.err, r.err
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if "cache" not in p.parts)
    assert after == before
    if had != "nothing":
        assert (data / "mine.txt").read_text() == "mine\n"
