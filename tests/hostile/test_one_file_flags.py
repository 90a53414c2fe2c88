"""A one-file output flag given a folder's name (a trailing slash) is refused before anything runs:
`probe -o newdir/` wrote a FILE called newdir, and so did `verify --save-facts sf/` and `--junit j/`
(breaker5 F9). A Path drops the slash, so the flag's type keeps it (cli.conventions.file_arg)."""

from __future__ import annotations

import os

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize("args, flag", [
    (["probe", "-o", "{d}/"], "--output"),
    (["probe", "-o", "{d}/."], "--output"),
    (["verify", "--facts", "none.json", "--save-facts", "{d}/"], "--save-facts"),
    (["verify", "--facts", "none.json", "--junit", "{d}/"], "--junit"),
    (["fleet", "merge", ".", "--save", "{d}/"], "--save"),
    (["fleet", "merge", ".", "--junit", "{d}/"], "--junit"),
    (["fleet", "merge", ".", "--prometheus", "{d}/"], "--prometheus"),
])
def test_a_trailing_slash_on_a_one_file_flag_is_refused(tmp_path, monkeypatch, args, flag):
    monkeypatch.chdir(tmp_path)
    d = "newdir"
    out = run_cli([a.format(d=d) for a in args])
    assert out.code == 2, (out.code, out.err)
    assert out.err.count("\n") == 1 and f"{flag} '{d}/" in out.err and "names a folder" in out.err, out.err
    assert os.listdir(tmp_path) == [], os.listdir(tmp_path)  # no file called newdir, nothing at all
