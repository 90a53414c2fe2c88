"""Every error envcheck prints is terminal-safe text (newcomer6 #7): an error relays what a path,
a file or another program said, and a colour code or other control sequence in it is shown escaped
(as ascii() writes it, never dropped: breaker6 F10) —
on stderr and in the --json error document alike (tests/docker/test_relayed_output.py: the
Docker engine's relayed build output)."""

from __future__ import annotations

import pytest


def test_an_error_naming_a_path_with_escapes_prints_none(cli):
    """The same boundary for every command: a path given with a colour code in it."""
    r = cli(["verify", "--python", "/nonexistent\x1b[31mpy"])
    assert r.code == 2 and "/nonexistent" in r.err and "\x1b" not in r.err
    doc = cli(["verify", "--json", "--python", "/nonexistent\x1b[31mpy"]).json()
    assert "\x1b" not in doc["error"] and doc["exit_code"] == 2


def test_a_path_with_escapes_is_shown_escaped_never_shortened(cli, tmp_path, monkeypatch):
    """breaker6 F10: `--machine $'m\\x1b[2J.toml'` said "m.toml: cannot read" while m.toml existed: the
    escape sequence was dropped, and the message named another file. It is shown as ascii() writes it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.toml").write_text("")
    r = cli(["plan", "--machine", "m\x1b[2J.toml"])
    assert r.code == 2 and "\x1b" not in r.err and "m\\x1b[2J.toml" in r.err and "m.toml" not in r.err, r.err
    doc = cli(["plan", "--json", "--machine", "m\x1b[2J.toml"]).json()
    assert "\x1b" not in doc["error"] and "m\\x1b[2J.toml" in doc["error"]


@pytest.mark.parametrize("argv", [
    ["fleet", "merge", "r\x1b[31mx"],  # a path fleet names itself
    ["fleet", "diff", "a\x1b[31mx", "b"],
    ["verify", "--python", "/nonexistent\x1b[31mpy"],  # a path named by the OS error
])
def test_every_error_shows_control_characters_escaped(cli, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    r = cli(argv)
    assert r.code == 2 and "\x1b" not in r.err and "\\x1b[31m" in r.err, r.err
