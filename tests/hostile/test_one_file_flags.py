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


NASTY = ["out\nWrote evil", "r\x1b]0;PWNED\x07\x1b[31mred"]


@pytest.mark.subprocess  # (probe runs the machine's tools)
@pytest.mark.parametrize("name", NASTY)
def test_a_path_with_control_characters_is_printed_on_one_line_without_escapes(tmp_path, monkeypatch, name):
    """breaker5 F10: `plan -o $'out\\nWrote evil'` printed a fake 'Wrote evil/…' line, and an OSC
    sequence in the name retitled the terminal (wrote…, refusing…, probe's 'Wrote …')."""
    monkeypatch.chdir(tmp_path)
    runs = [run_cli(["plan", "--gpu", "RTX 4090", "-o", name]),
            run_cli(["plan", "--gpu", "RTX 4090", "-o", name]),  # the second refuses to overwrite
            run_cli(["probe", "-o", f"{name}/m.json"])]
    assert [r.code for r in runs] == [0, 2, 0], [r.err for r in runs]
    for r in runs:
        text = r.out + r.err
        assert "\x1b" not in text and "\x07" not in text, ascii(text)
        assert not any(line.startswith("Wrote evil") for line in text.splitlines()), text
    assert "wrote " in runs[0].out and "refusing to overwrite" in runs[1].err
    assert (tmp_path / name / "m.json").is_file() and (tmp_path / name / "requirements.txt").is_file()


@pytest.mark.parametrize("text", ["r4/", "r4/.", "a/r4/."])
def test_report_given_a_folders_name_gets_a_file_per_node_inside_it(text):
    """breaker5 F9: `verify --report r4/.` wrote a FILE r4, though the help says a folder given with a
    trailing slash gets <node>.json."""
    from envcheck.fleet.report import report_path

    assert report_path(text, {"id": "gpu007"}).name == "gpu007.json"
    assert report_path(text, {"id": "gpu007"}).parent.name == "r4"
