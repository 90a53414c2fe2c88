"""A run killed while it writes the matrix cache leaves no temporary file (breaker4: "cache temp file
left if killed").

The cache is written beside its final name and renamed into place. envcheck's own SIGINT handler
exits at once, and SIGTERM/SIGHUP end the process by default, so a signal in the write left
`.matrix-….marshal.envcheck-XXXXXXXX.tmp` behind, forever. Now the signals raise while the cache is
written (the write's own cleanup runs), and a temporary file a killed writer (SIGKILL) left is swept
by the next writer once it is older than any live write could be.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import HELD_FSYNC, signal_mid_write

# the child: a real `envcheck plan` on an empty cache whose write stops in fsync until it is signalled
CHILD = HELD_FSYNC + r"""
os.environ["ENVCHECK_CACHE_DIR"] = sys.argv[1]
sys.exit(main(["plan", "--gpu", "RTX 4090", "--driver", "570.124.06", "--json"]))
"""


def _temps(folder):
    return [n for n in os.listdir(folder) if n.endswith(".tmp")]


@pytest.mark.subprocess
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_the_cache_write_leaves_no_temporary_file(tmp_path, sig):
    cache, ready = tmp_path / "cache", tmp_path / "ready"
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ENVCHECK_NO_CACHE"}
    code, err = signal_mid_write([sys.executable, "-c", CHILD, str(cache), str(ready)], ready, sig,
                                 lambda: _temps(cache), env=env)
    assert code == 130, (code, err)
    assert "Traceback" not in err
    assert _temps(cache) == [], os.listdir(cache)


@pytest.mark.subprocess
def test_the_next_writer_sweeps_a_killed_writers_temporary_file_but_not_a_live_one(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    stale = cache / ".matrix-0123456789abc.marshal.envcheck-deadbeef.tmp"
    live = cache / ".matrix-0123456789abc.marshal.envcheck-c0ffee00.tmp"
    for p in (stale, live):
        p.write_bytes(b"half a cache")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))  # a SIGKILLed writer's, an hour ago
    env = {**{k: v for k, v in os.environ.items() if k != "ENVCHECK_NO_CACHE"}, "ENVCHECK_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-m", "envcheck", "plan", "--gpu", "RTX 4090", "--json"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert not stale.exists() and live.exists()
    assert any(n.endswith(".marshal") for n in os.listdir(cache))
