"""The outputs of one command are all or nothing, like `plan`'s set (breaker5 F4, left by hfix7:
`fleet merge --save a --junit b` signalled while b was written kept the finished a). A real
`envcheck fleet merge` / `verify --facts` whose LAST output holds in fsync is signalled: none of its
outputs may be left, no temporary file or folder of its own, and files the user had (replaced with
--force) are back as they were."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, signal_mid_write
from tests.fleet.conftest import make_report

FACTS = sorted((ROOT / "tests" / "fixtures" / "verify" / "cases").glob("*.json"))[0]

# fsync holds only for the temporary file of the output named by argv[3] (the command's last output)
CHILD = r"""
import os, sys, time
real = os.fsync
def held(fd):
    try:
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        name = ""
    if name.startswith("." + sys.argv[3]):
        open(sys.argv[2], "w").close()
        time.sleep(60)
    real(fd)
os.fsync = held
os.environ["ENVCHECK_NO_CACHE"] = "1"
from envcheck.entry import main
sys.exit(main(sys.argv[4:]))
"""


def _commands(tmp_path: Path) -> dict:
    reps = tmp_path / "reps"
    reps.mkdir()
    make_report(FACTS, reps / "node1.json")
    out = tmp_path / "out"
    return {
        "fleet merge": (["fleet", "merge", str(reps), "--save", str(out / "s.json"), "--junit", str(out / "j.xml"),
                         "--prometheus", str(out / "p.prom")], ["s.json", "j.xml", "p.prom"]),
        "verify": (["verify", "--facts", str(FACTS), "--report", str(out / "r.json"), "--junit", str(out / "j.xml"),
                    "--save-facts", str(out / "sf.json")], ["r.json", "j.xml", "sf.json"]),
    }


@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["fleet merge", "verify"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_the_last_output_is_written_keeps_none_of_them(tmp_path, command, sig):
    args, names = _commands(tmp_path)[command]
    out, ready = tmp_path / "out", tmp_path / "ready"
    code, err = signal_mid_write([sys.executable, "-c", CHILD, "-", str(ready), names[-1], *args], ready, sig,
                                 lambda: out.is_dir(), cwd=tmp_path)
    assert code == 130, (code, err)
    assert "Traceback" not in err
    assert not out.exists(), sorted(os.listdir(out))


@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["fleet merge", "verify"])
def test_with_force_an_interrupted_command_puts_back_what_the_user_had(tmp_path, command):
    args, names = _commands(tmp_path)[command]
    out, ready = tmp_path / "out", tmp_path / "ready"
    out.mkdir()
    for n in names:
        (out / n).write_text(f"the user's {n}\n")
    code, err = signal_mid_write([sys.executable, "-c", CHILD, "-", str(ready), names[-1], *args, "--force"], ready,
                                 signal.SIGTERM, lambda: True, cwd=tmp_path)
    assert code == 130, (code, err)
    assert sorted(os.listdir(out)) == sorted(names)  # no temporary file or kept link left
    assert all((out / n).read_text() == f"the user's {n}\n" for n in names)
