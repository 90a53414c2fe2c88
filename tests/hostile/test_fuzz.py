"""No tracebacks, no hangs: generated command lines over every subcommand (seeded, bounded).

The argv generator takes each subcommand's flags from the real parser and gives them hostile values:
path components longer than NAME_MAX, ``--flag=--``, non-UTF-8 file names, FIFOs, devices,
endless files, NaN and huge numbers, control characters, shell metacharacters, empty strings,
matrix folders with an empty release list. Every run must end within its limit with exit 0, 1 or 2
and never print a traceback; bad input is exit 2 with one line.

Left out of the random part (they build images, pull, or submit jobs): ``docker base/build/ci/
verify`` and ``fleet slurm --submit/--wait``; ``docker build``'s input checks get fixed vectors.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "fixtures" / "verify" / "cases"
SEED = 15
COUNT = int(os.environ.get("HOSTILE_ARGV", "400"))
SKIP_COMMANDS = {("docker", "base"), ("docker", "build"), ("docker", "ci"), ("docker", "verify")}
SKIP_FLAGS = {"--submit", "--wait", "--help"}

#: real processes (envcheck, interpreters, docker, servers' clients) run here on purpose
pytestmark = pytest.mark.subprocess


def commands():
    """``[(path, positionals, [(flag, takes_value)])]`` from the real parser."""
    from envcheck.cli import build_parser

    out = []

    def walk(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs:
            for name, sp in subs[0].choices.items():
                walk(sp, path + [name])
            return
        flags = [(a.option_strings[-1], a.nargs != 0) for a in parser._actions
                 if a.option_strings and a.option_strings[-1] not in SKIP_FLAGS and "-h" not in a.option_strings]
        pos = [a for a in parser._actions if not a.option_strings]
        out.append((path, pos, flags))

    walk(build_parser(), [])
    return [c for c in out if tuple(c[0]) not in SKIP_COMMANDS]


def hostile_values(d: Path) -> list:
    fifo = d / "fifo.toml"
    if not fifo.exists():
        os.mkfifo(fifo)
    nonutf8 = os.fsdecode(b"\xff\xfe-\xc3(.toml")
    (d / os.fsencode(nonutf8).decode("utf-8", "surrogateescape")).write_bytes(b"schema = 1\n")
    empty_mx = d / "empty-mx"
    if not empty_mx.exists():
        empty_mx.mkdir()
        for p in (ROOT / "matrices").glob("*.toml"):
            shutil.copy2(p, empty_mx / p.name)
        rel = empty_mx / "releases.toml"
        if rel.exists():
            rel.write_text("# no releases\n")
    return [
        "--", "-", "", " ", "x" * 300, "a/" + "b" * 300 + "/c.toml", str(d / ("n" * 256)), nonutf8,
        str(d / nonutf8), str(fifo), "/dev/zero", "/dev/null", "/dev/urandom", str(d), str(d / "new" / "f.json"),
        "nan", "inf", "-1", "0", "1e309", "99999999999999999999", "3.12", "3.13t", "2.7", "A100", "7900xtx",
        "cu128", "rocm6.4", "sm_89", "gfx1100", "x\ny", "\x1b[31mred", "\x00", "$(id)", "https://u:p@h.example/$(id)",
        "http://127.0.0.1:9/whl/", "file:///nonexistent", "torch,torchvision", "a,,b", "===", "*", "\u2028",
        str(CASES / "C01.json"), str(empty_mx), "ubuntu22.04", "linux", "x86_64", "pip,lock", "all",
    ]


def generate(rng: random.Random, cmds, values) -> list:
    path, pos, flags = rng.choice(cmds)
    argv = list(path)
    for _ in range(rng.randint(0, 4)):
        flag, takes = rng.choice(flags)
        if not takes:
            argv.append(flag)
        elif rng.random() < 0.3:
            argv.append(f"{flag}={rng.choice(['--', '-', '', rng.choice(values)])}")
        else:
            argv += [flag, rng.choice(values)]
    for a in pos:
        if a.nargs in ("*", "?") and rng.random() < 0.5:
            continue
        argv.append(rng.choice(values))
    if path == ["matrix", "update"]:
        argv += ["--index", "http://127.0.0.1:9/whl/", "--retries", "0", "--timeout", "2", "--dry-run"]
    if path == ["verify"] and "--facts" not in argv:
        argv += ["--facts", str(CASES / "C01.json")]
    return argv


def run_limited(cli, argv, limit=90.0):
    box = {}

    def go():
        try:
            box["r"] = cli(argv)
        except BaseException as exc:  # noqa: B902 - a traceback is exactly what this test looks for
            import traceback

            box["exc"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(limit)
    return box if not t.is_alive() else {"hang": True}


def test_generated_command_lines(cli, tmp_path, monkeypatch, tally):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(SEED)
    cmds = commands()
    values = hostile_values(tmp_path)
    problems = []
    started = time.monotonic()
    for _ in range(COUNT):
        argv = generate(rng, cmds, values)
        got = run_limited(cli, argv)
        tally["vectors.argv"] += 1
        if "hang" in got:
            tally["hangs"] += 1
            problems.append(("hang", argv))
            continue
        if "exc" in got:
            tally["tracebacks"] += 1
            problems.append(("traceback", argv, got["exc"][-1500:]))
            continue
        r = got["r"]
        if "Traceback" in r.err or r.code not in (0, 1, 2):
            tally["tracebacks"] += 1
            problems.append(("traceback", argv, r.code, r.err[-1500:]))
        elif r.code == 2 and not (r.err.startswith(("envcheck", "usage:")) or r.out):
            problems.append(("no error line", argv, r.err[-500:]))
        if time.monotonic() - started > 240:  # the CI budget; the count is still reported
            break
    assert not problems, "\n\n".join(map(repr, problems[:10]))


@pytest.mark.parametrize("argv", [
    ["docker", "build", "--gpu", "A100", "--base-image", "python:3.12\nRUN id"],
    ["docker", "build", "--gpu", "A100", "--tag", "UPPER/case:x y"],
    ["docker", "build", "--lock", "/dev/zero"],
    ["docker", "build", "--gpu", "A100", "--mirror", "https://m.example/$(id)"],
])
def test_docker_build_refuses_bad_input_before_building(cli, argv, tally):
    r = run_limited(cli, argv, 120)
    tally["vectors.argv"] += 1
    assert "r" in r, r
    assert r["r"].code == 2 and "Traceback" not in r["r"].err, r["r"].err
