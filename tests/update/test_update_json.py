"""PEP 691 JSON pages (generated here) and content negotiation, as on https://pypi.org/simple/."""

from __future__ import annotations

import pytest

from envcheck.matrix import load_matrix
from envcheck.update.client import ACCEPT

H = {n: f"{n:x}" * 64 for n in range(1, 8)}  # distinct fake digests: "111…", "222…"


def pypi_doc(name: str, files, api: str = "1.1"):
    """A PEP 691 project page like PyPI's: absolute file URLs on another host, hashes, upload times."""
    return {
        "meta": {"api-version": api},
        "name": name,
        "files": [
            {"filename": fn, "url": f"https://files.example.org/packages/ab/cd/{fn}", "hashes": {"sha256": sha},
             "requires-python": ">=3.9", "upload-time": t, "yanked": y, "size": 1}
            for fn, sha, t, y in files
        ],
    }


TORCHAUDIO = [
    ("torchaudio-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl", H[1], "2025-06-04T19:13:59.123456Z", False),
    ("torchaudio-2.7.1-cp312-cp312-win_amd64.whl", H[2], "2025-06-04T19:14:30.000000Z", False),
    ("torchaudio-2.7.1-cp313-cp313t-manylinux_2_28_x86_64.whl", H[3], "2025-06-05T08:00:00Z", "broken upload"),
    ("torchaudio-2.7.1.tar.gz", H[4], "2025-06-04T19:00:00Z", False),              # an sdist: skipped
    ("torchaudio-2.8.0rc1-cp312-cp312-manylinux_2_28_x86_64.whl", H[5], "2025-07-01T00:00:00Z", False),  # pre-release
    ("torchaudio-0.7.0-cp38-cp38-manylinux1_x86_64.whl", H[6], "2020-10-27T00:00:00Z", False),  # older than 1.8's pair
]


def _update(cli, server, mx, *extra):
    return cli(["matrix", "update", "--index", f"{server.url}/simple/", "--channel", "pypi",
                "--packages", "torchaudio", "--matrices", str(mx), "--retries", "0", *extra])


def test_json_is_negotiated_and_parsed(cli, server, mx):
    server.json("/simple/torchaudio/", pypi_doc("torchaudio", TORCHAUDIO))  # 406 unless JSON is accepted
    r = _update(cli, server, mx, "--json")
    assert r.code == 0, r.err
    assert server.requests == [("/simple/torchaudio/", ACCEPT)]
    assert ACCEPT == "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
    pkg = r.json()["packages"][0]
    assert pkg["files"] == 3 and pkg["newest"] == "2.7.1"
    rows = [w for w in load_matrix(mx).index_wheels if w.package == "torchaudio"]
    assert len(rows) == 1
    row = rows[0]
    assert (row.version, row.variant, row.subindex, row.uploaded) == ("2.7.1", "", "", "2025-06-04")
    assert row.yanked == ("torchaudio-2.7.1-cp313-cp313t-manylinux_2_28_x86_64.whl",)
    assert f"torchaudio-2.7.1-cp312-cp312-win_amd64.whl#sha256={H[2]}" in row.files


def test_yanked_files_are_left_out_of_selections(cli, server, mx):
    server.json("/simple/torchaudio/", pypi_doc("torchaudio", TORCHAUDIO))
    assert _update(cli, server, mx).code == 0
    data = load_matrix(mx).index_data()
    assert data.select("pypi", "torchaudio", "2.7.1", "linux-x86_64", "3.13t") == []
    assert [f.sha256 for f in data.select("pypi", "torchaudio", "2.7.1", "linux-x86_64", "3.12")] == [H[1]]


def test_html_fallback_when_the_server_has_no_json(cli, server, mx):
    page = (b'<!DOCTYPE html><html><body>'
            b'<a href="../../packages/ab/torchaudio-2.7.1-cp312-cp312-win_amd64.whl#sha256=' + H[2].encode() + b'">'
            b'torchaudio-2.7.1-cp312-cp312-win_amd64.whl</a></body></html>')
    server.html("/simple/torchaudio/", page)
    r = _update(cli, server, mx)
    assert r.code == 0, r.err
    data = load_matrix(mx).index_data()
    files = data.files("pypi", "torchaudio")
    assert [(f.info.filename, f.sha256, f.subindex) for f in files] == [
        ("torchaudio-2.7.1-cp312-cp312-win_amd64.whl", H[2], "")]  # served outside the index: no sub-index


@pytest.mark.parametrize("api", ["2.0", ""])
def test_unknown_api_version_fails(cli, server, mx, api):
    server.json("/simple/torchaudio/", pypi_doc("torchaudio", TORCHAUDIO[:1], api=api))
    r = _update(cli, server, mx)
    assert r.code == 3
    assert "api-version" in r.err and "only 1.x" in r.err
    assert not list(mx.glob("generated-*"))

