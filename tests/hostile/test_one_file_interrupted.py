"""SIGTERM/SIGHUP during a one-file write (`probe -o`, `verify --save-facts/--report`, `fleet merge
--save/--junit`: all through fsutil.write_file) leaves no temporary file and no folder of its own
(breaker5 F4: `probe -o sub/m.json` killed in fsync left `sub/.m.json.envcheck-*.tmp` for good).
A real `envcheck probe` whose write is held in fsync is signalled, as a slow disk or NFS would hold it."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from tests.conftest import HELD_FSYNC, signal_mid_write

# the child: a real `envcheck probe -o` (no cache write) whose file write stops in fsync until signalled
CHILD = HELD_FSYNC + r"""
os.environ["ENVCHECK_NO_CACHE"] = "1"
sys.exit(main(["probe", "-o", sys.argv[1]]))
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_during_a_one_file_write_leaves_nothing_of_its_own(tmp_path, sig):
    work, ready = tmp_path / "work", tmp_path / "ready"
    work.mkdir()
    (work / "mine.txt").write_text("the user's")
    target = work / "new" / "sub" / "m.json"  # two folders the write makes
    code, err = signal_mid_write([sys.executable, "-c", CHILD, str(target), str(ready)], ready, sig,
                                 lambda: any(n.endswith(".tmp") for n in os.listdir(target.parent)), cwd=work)
    assert code == 130, (code, err)
    assert "Traceback" not in err
    assert sorted(os.listdir(work)) == ["mine.txt"], [str(p) for p in work.rglob("*")]
    assert (work / "mine.txt").read_text() == "the user's"
