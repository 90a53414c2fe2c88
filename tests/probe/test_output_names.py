"""`probe -o NAME` with a name that is not printable UTF-8 (breaker2 F17 leftover): a file name of
bytes that are not UTF-8 (Python holds them as surrogate escapes) ended in a UnicodeEncodeError
traceback, because the machine file's comment names the file ("Plan for it anywhere with: envcheck
plan --machine NAME"); a name with a line break would have broken that comment into a TOML line.
Every printed command quotes such a word as bash's $'…' (edge.shell_word): one line, the same bytes.
Real files, a real bash.
"""

from __future__ import annotations

import os
import subprocess

import pytest

pytestmark = pytest.mark.subprocess  # a real probe (it asks docker, nvidia-smi…) and a real bash

NAMES = [b"m\xff.toml", b"x\nschema = 2.toml", b"tab\there.toml", "caf\u00e9 it's.toml".encode()]


@pytest.mark.parametrize("raw", NAMES, ids=["not-utf8", "newline", "tab", "quote-and-accent"])
def test_probe_writes_any_name_and_its_comment_pastes_back(cli, tmp_path, raw):
    name = os.fsdecode(raw)
    target = tmp_path / name
    r = cli(["probe", "-o", str(target)])
    assert r.code == 0 and "Traceback" not in r.err, r.err
    data = (tmp_path / name).read_bytes()
    text = data.decode("utf-8")  # the file is UTF-8 text (TOML), whatever the name's bytes
    comment = text.splitlines()[1]
    assert comment.startswith("# Plan for it anywhere with: envcheck plan --machine ")
    assert cli(["plan", "--machine", str(target), "-q"]).code in (0, 1)  # the TOML still reads
    # the command in the comment, pasted into bash, names exactly this file
    word = comment.split("--machine ", 1)[1]
    got = subprocess.run(["bash", "-c", f"printf '%s' {word}"], capture_output=True, timeout=30, cwd=tmp_path)
    assert got.stdout == raw, (word, got.stdout)
