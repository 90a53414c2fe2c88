"""A damaged, odd or hostile matrix cache never stops a command nor changes an answer (breaker4 F1,
F4, F12): the cache file carries a CRC-32 of its payload, is read only as a regular file (no FIFO,
device or symbolic link, a size cap), is written atomically never through a link, and a table that
still fails to rebuild is taken from a fresh parse, which rewrites the file."""

from __future__ import annotations

import marshal
import os
import shutil
import subprocess
import sys
import zlib

import pytest

import envcheck.matrix as matrix_pkg
from envcheck.errors import UsageError
from envcheck.matrix import default_matrix_dir, load_matrix


def _fresh(d):
    matrix_pkg._load_cached.cache_clear()
    return load_matrix(d)


def _answers(mx):
    """Every row of every table (driver floors, builds, GPUs…), and the GPU lookup."""
    return ({f: {t: list(rows) for t, rows in tables.items()} for f, tables in mx.files.items()},
            mx.gpu_key_positions())


def _split(blob: bytes):
    assert zlib.crc32(blob[4:]).to_bytes(4, "big") == blob[:4], "the cache file starts with its payload's CRC-32"
    return marshal.loads(blob[4:])


def _join(key, plain, derived, checksum=True):
    payload = marshal.dumps((key, plain, derived))
    crc = zlib.crc32(payload) if checksum else zlib.crc32(payload) ^ 1
    return crc.to_bytes(4, "big") + payload


def test_every_table_cut_short_is_parsed_again(scratch):
    """breaker4's repro: the outer file still unmarshals, each table blob is cut in half."""
    d, cache = scratch
    want = _answers(load_matrix(d))
    (stored,) = cache.iterdir()
    good = stored.read_bytes()
    key, plain, derived = _split(good)
    for tables in plain.values():
        for name, blob in tables.items():
            tables[name] = blob[: len(blob) // 2]
    stored.write_bytes(marshal.dumps((key, plain, derived)))  # the old format: no checksum
    assert _answers(_fresh(d)) == want
    assert stored.read_bytes() == good  # written again


def test_a_single_flipped_bit_never_changes_an_answer(scratch):
    """One bit of a driver version flipped (560.35.05 → 560.35.04 reads as an older floor)."""
    d, cache = scratch
    want = _answers(load_matrix(d))
    (stored,) = cache.iterdir()
    good = stored.read_bytes()
    at = good.index(b"560.35.05")
    bad = bytearray(good)
    bad[at + 8] ^= 1
    stored.write_bytes(bytes(bad))
    assert _answers(_fresh(d)) == want
    assert stored.read_bytes() == good
    # and a flipped byte anywhere (the marshal type codes, references, lengths): never a traceback
    for off in range(4, len(good), len(good) // 40):
        bad = bytearray(good)
        bad[off] ^= 0x41
        stored.write_bytes(bytes(bad))
        assert _answers(_fresh(d)) == want, off


def test_a_table_that_passes_the_checksum_but_does_not_rebuild_is_parsed_again(scratch):
    """A file whose checksum matches but one table is damaged (written by another envcheck's code,
    or crafted): the table is rebuilt from a fresh parse when first read — not a traceback later."""
    d, cache = scratch
    want = _answers(load_matrix(d))
    (stored,) = cache.iterdir()
    good = stored.read_bytes()
    key, plain, derived = _split(good)
    for damage in (lambda b: b[: len(b) // 2], lambda b: marshal.dumps(("NoSuchRow", ("x",), [(1,)])),
                   lambda b: marshal.dumps(("Build", ("a", "b"), [(1,)])), lambda b: b"\xff" + b[1:]):
        plain2 = {f: dict(t) for f, t in plain.items()}
        plain2["torch-builds.toml"]["build"] = damage(plain2["torch-builds.toml"]["build"])
        stored.write_bytes(_join(key, plain2, derived))
        mx = _fresh(d)
        assert _answers(mx) == want
        assert stored.read_bytes() == good  # the fresh parse rewrote it


def test_a_file_failing_its_checksum_is_not_used(scratch, monkeypatch):
    d, cache = scratch
    load_matrix(d)
    (stored,) = cache.iterdir()
    key, plain, derived = _split(stored.read_bytes())
    stored.write_bytes(_join(key, plain, derived, checksum=False))
    parsed = []
    real = matrix_pkg._plain
    monkeypatch.setattr(matrix_pkg, "_plain", lambda files: parsed.append(1) or real(files))
    _fresh(d)
    assert parsed == [1]


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_at_the_cache_name_does_not_hang(scratch):
    d, cache = scratch
    n_builds = len(load_matrix(d).builds)
    (stored,) = cache.iterdir()
    stored.unlink()
    os.mkfifo(stored)
    # in a child with a deadline: a blocking open of a FIFO with no writer would hang the test run
    code = ("import sys; from pathlib import Path; from envcheck.matrix import load_matrix; "
            "print(len(load_matrix(Path(sys.argv[1])).builds))")
    out = subprocess.run([sys.executable, "-c", code, str(d)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "ENVCHECK_CACHE_DIR": str(cache)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(n_builds)
    assert os.path.exists(stored) and not os.path.isfile(stored)  # the FIFO was neither read nor replaced


def test_a_link_to_dev_zero_or_to_a_good_cache_is_not_read(scratch, tmp_path, monkeypatch):
    d, cache = scratch
    want = _answers(load_matrix(d))
    (stored,) = cache.iterdir()
    elsewhere = tmp_path / "elsewhere.marshal"
    os.replace(stored, elsewhere)
    parsed = []
    real = matrix_pkg._plain
    monkeypatch.setattr(matrix_pkg, "_plain", lambda files: parsed.append(1) or real(files))
    for target in ("/dev/zero", str(elsewhere)):
        os.symlink(target, stored)
        assert _answers(_fresh(d)) == want
        assert os.path.islink(stored) and os.readlink(stored) == target  # not written through, not replaced
        stored.unlink()
    assert parsed == [1, 1]  # both were misses (a parse each), not reads through the link


def test_the_cache_is_never_written_through_a_link(scratch, tmp_path):
    """A link planted at the cache name (a shared cache folder) must not make envcheck write the
    file it points at."""
    d, cache = scratch
    cache.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    load_matrix(d)
    (name,) = [p.name for p in cache.iterdir()]
    for p in cache.iterdir():
        p.unlink()
    os.symlink(victim, cache / name)
    _fresh(d)
    assert victim.read_text() == "mine\n"
    assert os.path.islink(cache / name)


def test_an_oversized_cache_file_is_not_read(scratch, monkeypatch):
    d, cache = scratch
    want = _answers(load_matrix(d))
    monkeypatch.setattr(matrix_pkg, "_CACHE_CAP", 1000)
    parsed = []
    real = matrix_pkg._plain
    monkeypatch.setattr(matrix_pkg, "_plain", lambda files: parsed.append(1) or real(files))
    assert _answers(_fresh(d)) == want
    assert parsed == [1]


def test_a_cache_folder_that_is_a_file_or_a_fifo_is_not_used(tmp_path, monkeypatch):
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    odd = tmp_path / "odd"
    odd.write_text("x")
    monkeypatch.setenv("ENVCHECK_CACHE_DIR", str(odd))
    monkeypatch.delenv("ENVCHECK_NO_CACHE", raising=False)
    assert _fresh(d).find_gpu("RTX 4090").name == "GeForce RTX 4090"
    assert odd.read_text() == "x"
    matrix_pkg._load_cached.cache_clear()


@pytest.mark.parametrize("value, used", [("0", True), ("false", True), ("no", True), ("", True),
                                          ("1", False), ("true", False), ("YES", False)])
def test_no_cache_takes_only_a_true_value(scratch, monkeypatch, value, used):
    d, cache = scratch
    monkeypatch.setenv("ENVCHECK_NO_CACHE", value)
    _fresh(d)
    assert cache.exists() == used


@pytest.mark.subprocess
def test_no_cache_with_an_odd_value_is_one_line_bad_input(scratch, monkeypatch):
    d, _ = scratch
    monkeypatch.setenv("ENVCHECK_NO_CACHE", "maybe")
    with pytest.raises(UsageError, match="ENVCHECK_NO_CACHE.*true or false"):
        _fresh(d)
    out = subprocess.run([sys.executable, "-m", "envcheck", "plan", "--json", "--gpu", "RTX 4090"],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "ENVCHECK_NO_CACHE": "maybe"})
    assert out.returncode == 2
    assert '"envcheck.error.v1"' in out.stdout and "Traceback" not in out.stderr
