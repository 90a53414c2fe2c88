"""Every error envcheck prints is terminal-safe text (newcomer6 #7): an error relays what a path,
a file or another program said, and a colour code or other control sequence in it is dropped —
on stderr and in the --json error document alike (tests/docker/test_relayed_output.py: the
Docker engine's relayed build output)."""

from __future__ import annotations


def test_an_error_naming_a_path_with_escapes_prints_none(cli):
    """The same boundary for every command: a path given with a colour code in it."""
    r = cli(["verify", "--python", "/nonexistent\x1b[31mpy"])
    assert r.code == 2 and "/nonexistent" in r.err and "\x1b" not in r.err
    doc = cli(["verify", "--json", "--python", "/nonexistent\x1b[31mpy"]).json()
    assert "\x1b" not in doc["error"] and doc["exit_code"] == 2
