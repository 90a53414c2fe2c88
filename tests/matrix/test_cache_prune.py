"""The matrix cache removes only files envcheck wrote (breaker5 F0b: data loss).

The cache folder can be one of the user's own (``ENVCHECK_CACHE_DIR=.``, or ``$HOME/.cache``). The
prune used to unlink every ``matrix-*.pickle`` / ``matrix-*.marshal`` there but the 16 newest, and the
temporary-file sweep every ``.*.envcheck-*.tmp``: a data-science folder of ``matrix-embeddings-N.pickle``
lost its oldest files to ``envcheck gpus``. Now a file goes only when it is provably the cache's: its
name is the CRC-32 and length of the envcheck key stored inside it.
"""

from __future__ import annotations

import marshal
import os
import pickle
import subprocess
import sys
import time
import zlib

import pytest


def _name(key: str, ext: str) -> str:
    raw = key.encode()
    return f"matrix-{zlib.crc32(raw):08x}{len(raw):05x}.{ext}"


def _envcheck_marshal(folder, i):
    """A cache file as envcheck writes it (an older version's key: a different name each)."""
    key = repr(("0.0.9", sys.version, (("__init__.py", i),), ("m", i)))
    payload = marshal.dumps((key, {}, {}))
    p = folder / _name(key, "marshal")
    p.write_bytes(zlib.crc32(payload).to_bytes(4, "big") + payload)
    return p


def _envcheck_pickle(folder, i):
    """A cache file of envcheck before 2026-12 (a pickle of the key and the rows)."""
    key = repr(("0.0.8", (("__init__.py", i),), ("m", i)))
    p = folder / _name(key, "pickle")
    p.write_bytes(pickle.dumps((key, {"cuda.toml": {}}), protocol=pickle.HIGHEST_PROTOCOL))
    return p


def _age(p, days):
    t = time.time() - days * 86400
    os.utime(p, (t, t))


@pytest.mark.subprocess
def test_the_users_matrix_files_in_the_cache_folder_are_never_removed(tmp_path):
    users = []
    for i in range(1, 21):  # breaker5's reproduction: 20 pickles of the user's, the oldest 20 days old
        p = tmp_path / f"matrix-embeddings-{i}.pickle"
        p.write_text(f"precious {i}\n")
        _age(p, i)
        users.append(p)
    for name in ("matrix-a.marshal", "matrix-0123456789abc.marshal", "matrix-0123456789abc.pickle"):
        p = tmp_path / name  # the last two have the cache's name pattern but not its content
        p.write_text("mine\n")
        _age(p, 30)
        users.append(p)
    ours_old = [_envcheck_marshal(tmp_path, i) for i in range(20)] + [_envcheck_pickle(tmp_path, i) for i in range(3)]
    for n, p in enumerate(ours_old):
        _age(p, 40 + n)
    tmp_users = [tmp_path / ".notes.envcheck-draft.tmp", tmp_path / ".m.json.envcheck-0123456789.tmp"]
    tmp_ours = tmp_path / f".{ours_old[0].name}.envcheck-0a1b2c3d4e.tmp"  # a SIGKILLed cache writer's
    for p in [*tmp_users, tmp_ours]:
        p.write_text("x")
        _age(p, 1)
    env = {**{k: v for k, v in os.environ.items() if k != "ENVCHECK_NO_CACHE"}, "ENVCHECK_CACHE_DIR": "."}
    out = subprocess.run([sys.executable, "-m", "envcheck", "gpus"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert [p.name for p in users if not p.exists()] == []
    assert [p.read_text() for p in users[:20]] == [f"precious {i}\n" for i in range(1, 21)]
    assert [p.name for p in tmp_users if not p.exists()] == []
    # envcheck's own old files are still pruned: 16 names of the cache's pattern stay (the user's two
    # look-alikes among them: they are newer), so 14 of envcheck's, this run's and the 13 newest old ones
    cache = sorted(p.name for p in tmp_path.iterdir() if p not in users and p.suffix in (".marshal", ".pickle"))
    assert len(cache) == 14, cache
    assert [p.exists() for p in ours_old] == [True] * 13 + [False] * 10
    assert not tmp_ours.exists()
