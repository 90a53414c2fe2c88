"""`matrix update --index https://user:password@host/…`: the credentials are used for the fetch only,
and never written nor printed (breaker5 F1).

Before, the password went into the generated file's name (generated-index-u-s3cret-….toml), its
channel / index_url / pages / source fields, the summary on stdout, `matrix status`, and the one-line
error and --json error document when the fetch failed — the promise `plan --mirror` keeps ("left out
of every file and of the output") and edge.py's "no credentials in what is written" were broken.
Private indexes behind basic auth are common (e.g. a company's Artifactory/Nexus/devpi mirror of the
PyTorch wheel index); the test server below refuses a request without the right Authorization header.
"""

from __future__ import annotations

import base64
import hashlib

import pytest

from tests.update.index_support import send

SECRET = "s3cret"
SHA = hashlib.sha256(b"not a real wheel").hexdigest()
WHEEL = "torch-2.7.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"
PAGE = f'<html><body>\n<a href="/whl/cu128/{WHEEL}#sha256={SHA}">x</a>\n</body></html>\n'.encode()


def _basic_auth_page(server, path, body):
    want = "Basic " + base64.b64encode(f"u:{SECRET}".encode()).decode()

    def route(h):
        if h.headers.get("Authorization") != want:
            send(h, 401, b"login first", "text/plain", headers={"WWW-Authenticate": 'Basic realm="idx"'})
        else:
            send(h, 200, body, "text/html")

    server.routes[path] = route


def _everything(folder):
    """Every name and every byte under ``folder``, as one text."""
    return "\n".join([str(p) for p in folder.rglob("*")]
                     + [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()])


@pytest.mark.parametrize("json_out", [False, True])
def test_credentials_reach_the_server_but_no_file_name_file_or_output(cli, server, tmp_path, monkeypatch, json_out):
    _basic_auth_page(server, "/whl/torch/", PAGE)
    d = tmp_path / "d"
    index = server.url.replace("http://", f"http://u:{SECRET}@") + "/whl/"
    r = cli(["matrix", "update", "--index", index, "--data-dir", str(d), "--packages", "torch", "--retries", "0",
             *(["--json"] if json_out else [])])
    assert r.code == 0, r.err  # the server answered: the credentials were sent
    written = _everything(d)
    assert SHA in written  # the page was read and recorded
    assert SECRET not in written and "u:" not in written
    host = server.url.removeprefix("http://")
    assert f'index_url = "{server.url}/whl/"' in written and f'channel = "{host}"' in written
    assert SECRET not in r.out + r.err
    monkeypatch.setenv("ENVCHECK_DATA_DIR", str(d))
    for args in (["matrix", "status"], ["matrix", "status", "--json"]):
        st = cli(args)
        assert st.code == 0, st.err
        assert host in st.out and SECRET not in st.out + st.err


def test_a_wrong_password_is_refused_without_echoing_it(cli, server, tmp_path):
    _basic_auth_page(server, "/whl/torch/", PAGE)
    index = server.url.replace("http://", "http://u:wr0ng@") + "/whl/"
    r = cli(["matrix", "update", "--index", index, "--data-dir", str(tmp_path / "d"), "--packages", "torch",
             "--retries", "0"])
    assert r.code == 3 and "401" in r.err, (r.code, r.err)
    assert "wr0ng" not in r.out + r.err
    assert not (tmp_path / "d" / "index").exists() or not any((tmp_path / "d" / "index").iterdir())


@pytest.mark.parametrize("json_out", [False, True])
def test_a_failed_fetch_names_the_index_without_its_password(cli, tmp_path, json_out):
    r = cli(["matrix", "update", "--index", f"http://u:{SECRET}@127.0.0.1:1/whl", "--data-dir", str(tmp_path / "d"),
             "--packages", "torch", "--retries", "0", "--timeout", "2", *(["--json"] if json_out else [])])
    assert r.code == 3, (r.code, r.err)
    assert "127.0.0.1:1/whl" in r.out + r.err
    assert SECRET not in r.out + r.err


def test_a_bad_index_url_with_credentials_is_refused_without_them(cli, tmp_path):
    r = cli(["matrix", "update", "--index", f"ftp://u:{SECRET}@h.example/whl", "--data-dir", str(tmp_path / "d")])
    assert r.code == 2 and "h.example" in r.err, r.err
    assert SECRET not in r.out + r.err
