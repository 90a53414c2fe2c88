"""No tracebacks, no hangs: generated command lines over every subcommand (seeded, bounded).

The argv generator takes each subcommand's flags from the real parser and gives them hostile values:
path components longer than NAME_MAX, ``--flag=--``, non-UTF-8 file names, FIFOs, devices,
endless files, NaN and huge numbers, control characters, shell metacharacters, empty strings,
matrix folders with an empty release list. Every run must end within its limit with exit 0, 1 or 2
and never print a traceback; bad input is exit 2 with one line.

The commands that build images, pull, or submit jobs (``docker base/build/ci/verify``, ``fleet
slurm --submit/--wait``) get their own generated run (:func:`test_generated_heavy_command_lines`):
fewer vectors (``HOSTILE_HEAVY``, default 16), each a real ``python -m envcheck`` process with a
deadline, against the real dockerd and Slurm, with what must not escape pinned last on the line —
images built FROM this run's labelled base and tagged for this run, pip pointed at an empty
wheelhouse and debootstrap at a closed port (nothing is downloaded), jobs named for this run with a
short ``--timeout``. ``docker build``'s input checks also keep their fixed vectors.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.docker.conftest import base_image, engine, run_base  # noqa: F401 - fixtures (labelled base)

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "fixtures" / "verify" / "cases"
SEED = 15
COUNT = int(os.environ.get("HOSTILE_ARGV", "400"))
SKIP_COMMANDS = {("docker", "base"), ("docker", "build"), ("docker", "ci"), ("docker", "verify")}
SKIP_FLAGS = {"--submit", "--wait", "--help"}
#: the exit codes envcheck has (envcheck/errors.py): ok, none fits / a check failed, bad input, could not run;
#: anything else (a signal, an unhandled error) is a crash
EXIT_CODES = (0, 1, 2, 3)


def has_error_line(code, err: str, out: str) -> bool:
    """Bad input (2) is refused before any work: stderr starts with the error (or usage); could not run (3)
    may come after the work's progress lines (`pip download …`, `debootstrap …`), so its error line is
    anywhere in stderr. A --json document on stdout carries the error instead."""
    if code == 2:
        return err.startswith(("envcheck", "usage:")) or bool(out)
    if code == 3:
        return "envcheck: error:" in err or bool(out)
    return True

#: real processes (envcheck, interpreters, docker, servers' clients) run here on purpose
pytestmark = pytest.mark.subprocess


def commands(heavy: bool = False):
    """``[(path, positionals, [(flag, takes_value)])]`` from the real parser: the light commands, or
    (``heavy``) the ones that build, pull or submit."""
    from envcheck.cli import build_parser

    out = []

    def walk(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs:
            for name, sp in subs[0].choices.items():
                walk(sp, path + [name])
            return
        skip = {"--help"} if heavy else SKIP_FLAGS
        flags = [(a.option_strings[-1], a.nargs != 0) for a in parser._actions
                 if a.option_strings and a.option_strings[-1] not in skip and "-h" not in a.option_strings]
        pos = [a for a in parser._actions if not a.option_strings]
        out.append((path, pos, flags))

    walk(build_parser(), [])
    if heavy:
        return [c for c in out if tuple(c[0]) in SKIP_COMMANDS or c[0] == ["fleet", "slurm"]]
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
        if "Traceback" in r.err or r.code not in EXIT_CODES:
            tally["tracebacks"] += 1
            problems.append(("traceback", argv, r.code, r.err[-1500:]))
        elif not has_error_line(r.code, r.err, r.out):
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


HEAVY_COUNT = int(os.environ.get("HOSTILE_HEAVY", "16"))


def pinned_last(path: list, tmp: Path, base: str, run: str) -> list:
    """What a generated heavy command line may not override (appended last; argparse keeps the last
    value of a flag): the labelled base, a run tag, no downloads, a named job with a short wait."""
    empty = tmp / "empty-wheelhouse"
    empty.mkdir(exist_ok=True)
    if path == ["docker", "base"]:
        return ["--mirror", "http://127.0.0.1:9/debian", "--tag", f"envcheck-test/fuzz-base-{run}:1"]
    if path == ["docker", "build"]:
        return ["--base-image", base, "--wheelhouse", str(empty), "--tag", f"envcheck-test/fuzz-{run}:1"]
    if path == ["docker", "ci"]:
        return ["--base-image", base, "--wheelhouse-root", str(empty), "--timeout", "20",
                "--report", str(tmp / "ci-report.json"), "--force"]
    if path == ["docker", "verify"]:
        return ["--timeout", "20"]
    return ["--job-name", f"envcheck-fuzz-{run}", "--reports", str(tmp / "reports"), "--timeout", "60",
            "--time", "00:02:00"]


def run_process(argv: list, limit: float, env=None, cwd=None) -> tuple:
    """``python -m envcheck ARGV`` in its own session; killed with its group at ``limit`` seconds.
    Returns ``(exit code or None when it hung, stdout, stderr)``."""
    p = subprocess.Popen([sys.executable, "-m", "envcheck", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, start_new_session=True, cwd=str(cwd or ROOT), env=env)
    try:
        out, err = p.communicate(timeout=limit)
        return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out.decode(errors="replace"), err.decode(errors="replace")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """The real test cluster of tests/fleet (munge, slurmctld, two slurmd on 127.0.0.1)."""
    from tests.fleet import slurm_cluster

    yield from slurm_cluster.running(tmp_path_factory.mktemp("slurm"))


@pytest.mark.docker
def test_generated_heavy_command_lines(tmp_path, run_base, engine, slurm, tally):  # noqa: F811 - fixtures above
    run = uuid.uuid4().hex[:10]
    rng = random.Random(SEED + 1)
    cmds = commands(heavy=True)
    assert {tuple(c[0]) for c in cmds} == SKIP_COMMANDS | {("fleet", "slurm")}
    values = hostile_values(tmp_path)
    problems, started, seen = [], time.monotonic(), set()
    try:
        for i in range(HEAVY_COUNT):
            path, pos, flags = cmds[i % len(cmds)]  # every heavy command, in turn
            argv = generate(random.Random(rng.random()), [(path, pos, flags)], values)
            if path == ["fleet", "slurm"]:
                argv.insert(2, rng.choice(["--submit", "--submit --wait"]))
                argv[2:3] = argv[2].split()
            argv += pinned_last(path, tmp_path, run_base, run)
            seen.add(tuple(path))
            # in tmp: sbatch writes the jobs' logs into the folder it was called from
            code, out, err = run_process(argv, 240, slurm.env if path == ["fleet", "slurm"] else None, tmp_path)
            if os.environ.get("HOSTILE_SHOW"):
                print(code, argv, err.strip().splitlines()[-1:] if err.strip() else "")
            tally["vectors.argv.heavy"] += 1
            if code is None:
                tally["hangs"] += 1
                problems.append(("hang", argv, err[-800:]))
            elif "Traceback" in err or code not in EXIT_CODES:
                tally["tracebacks"] += 1
                problems.append(("traceback", argv, code, err[-1500:]))
            elif not has_error_line(code, err, out):
                problems.append(("no error line", argv, err[-500:]))
            if time.monotonic() - started > 540:  # the CI budget; the count is still reported
                break
    finally:
        left = slurm.cancel(f"envcheck-fuzz-{run}")
        import docker

        for tag in (f"envcheck-test/fuzz-{run}:1", f"envcheck-test/fuzz-base-{run}:1"):
            try:  # only this run's tags: the engine is shared with other runs
                engine.images.remove(tag, force=True)
            except docker.errors.NotFound:
                pass
    assert seen == {tuple(c[0]) for c in cmds} or time.monotonic() - started > 540, seen
    assert left == "", f"jobs left in the queue: {left}"
    assert not problems, "\n\n".join(map(repr, problems[:10]))
