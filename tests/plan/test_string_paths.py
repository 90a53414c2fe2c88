"""Paths on a plan's way are strings (os.path), not pathlib (#9: pathlib imports urllib.parse and
ipaddress, ~5 ms of every start). These hold the string versions to what pathlib and urllib answer,
so a plan prints and writes exactly the paths and hosts it did before."""

from __future__ import annotations

import itertools
import random
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import pytest

from envcheck import edge, fsutil
from envcheck.errors import UsageError

PARTS = ["", ".", "..", "a", "bb", "c.d", " x", "é"]


def _paths():
    rng = random.Random(7)
    for n in range(1, 5):
        for combo in itertools.product(PARTS, repeat=n) if n < 3 else (rng.choices(PARTS, k=n) for _ in range(300)):
            for lead in ("", "/", "//", "///"):
                for trail in ("", "/", "//"):
                    yield lead + "/".join(combo) + trail


def test_clean_path_prints_what_pathlib_prints():
    seen = 0
    for p in _paths():
        want = str(PurePosixPath(p))
        if want.startswith("//") and not want.startswith("///"):
            want = want[1:]  # POSIX's implementation-defined "//" root: the same folder as "/" on Linux
        assert fsutil.clean_path(p) == want, p
        seen += 1
    assert seen > 2000


def test_parents_are_pathlibs_parents():
    for p in _paths():
        c = fsutil.clean_path(p)
        assert fsutil._parents(c) == [str(x) for x in PurePosixPath(c).parents], p


URLS = [
    "https://download.pytorch.org/whl/cu130", "http://127.0.0.1/simple", "https://Mirror.Example/pytorch-whl",
    "https://a/whl/rocm7.1", "https://x.y/p%20q/~u/+v", "https://host:8443/whl", "https://user:pw@host/whl",
    "https://host/whl?x=1", "https://host/whl#frag", "file:///srv/wheels", "ftp://host/whl", "https://",
    "https://-bad/whl", "https://host./whl", "https://host/a;b", "https://[::1]/whl", "https://host:99999/w",
    "https://ho st/w", "https://host/\u00e9", "HTTPS://host/w", "https:/host/w", "https://host//w//",
]


@pytest.mark.parametrize("url", URLS)
def test_the_plain_url_way_answers_as_urllib(url, monkeypatch):
    parts = urlsplit(url)
    assert edge.host_of(url) == parts.hostname
    assert edge.netloc_of(url) == parts.netloc

    def verdict():
        try:
            return edge.check_url(url, "--index")
        except UsageError as exc:
            return str(exc)

    fast = verdict()
    monkeypatch.setattr(edge, "_PLAIN_URL", r"(?!)")  # never matches: every URL takes urllib's way
    assert verdict() == fast


def test_a_set_written_as_strings_names_its_files_as_pathlib_would(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    written = fsutil.write_set("./out//", {"a.txt": "a\n", "b.txt": "b\n"})
    assert written == ["out/a.txt", "out/b.txt"]
    assert (tmp_path / "out" / "b.txt").read_text() == "b\n"
    assert fsutil.write_file(Path("one") / "x.txt", "x") == "one/x.txt"
