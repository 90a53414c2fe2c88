"""The parsed-matrix cache (envcheck/matrix/__init__.py ``_cached``): a warm start reads the rows a
TOML parse makes, and any change to the files makes it parse again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import envcheck.matrix as matrix_pkg
import envcheck.matrix.load as loader
from envcheck.errors import DataFileError
from envcheck.matrix import default_matrix_dir, load_matrix
from envcheck.matrix.load import load_dir


def _no_parse(monkeypatch):
    """Make a TOML parse fail the test: what is loaded now must come from the cache file."""
    def refuse(*args, **kwargs):
        raise AssertionError("parsed TOML although the cache holds these files")

    monkeypatch.setattr(loader, "load_dir", refuse)
    monkeypatch.setattr(loader, "load_file", refuse)


def test_a_warm_start_reads_the_rows_a_parse_makes(scratch, monkeypatch):
    d, cache = scratch
    cold = load_matrix(d)
    assert [p.suffix for p in cache.iterdir()] == [".marshal"]
    fresh = {name: dict(tables) for name, tables in load_dir(d).items()}
    matrix_pkg._load_cached.cache_clear()
    with monkeypatch.context() as mp:
        _no_parse(mp)
        warm = load_matrix(d)
        assert warm is not cold
        # every table of every file (diagnoses.toml's too, which a plan never reads): same rows, same types
        assert set(warm.files) == set(fresh)
        for name, tables in fresh.items():
            assert set(warm.files[name]) == set(tables), name
            for table, rows in tables.items():
                got = warm.files[name][table]
                assert got == rows, (name, table)
                assert [type(r) for r in got] == [type(r) for r in rows], (name, table)
    assert warm.builds == cold.builds and warm.releases == cold.releases
    assert [r.version for r in warm.releases[:2]] == [r.version for r in cold.releases[:2]]
    # the GPU-name lookup kept in the cache answers as the one made from the rows
    for typed in ("RTX 4090", "7900xtx", "H100 80GB", "a100", "Jetson AGX Orin", "MI300X", "Arc A770"):
        assert warm.find_gpu(typed) == cold.find_gpu(typed), typed
    assert warm.gpu_key_positions() == cold.gpu_key_positions()


def test_a_row_read_from_the_cache_is_still_frozen(scratch, monkeypatch):
    d, _ = scratch
    load_matrix(d)
    matrix_pkg._load_cached.cache_clear()
    with monkeypatch.context() as mp:
        _no_parse(mp)
        build = load_matrix(d).builds[0]
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        build.variant = "cu999"


def test_an_edited_file_is_parsed_again(scratch):
    d, _ = scratch
    assert load_matrix(d).find_gpu("RTX 4090").name == "GeForce RTX 4090"
    path = d / "gpus-nvidia.toml"
    text = path.read_text(encoding="utf-8")
    assert 'name = "GeForce RTX 4090"' in text
    path.write_text(text.replace('name = "GeForce RTX 4090"', 'name = "GeForce RTX 4090 (edited)"'),
                    encoding="utf-8")
    matrix_pkg._load_cached.cache_clear()
    assert load_matrix(d).find_gpu("RTX 4090").name == "GeForce RTX 4090 (edited)"


def test_a_damaged_cache_file_is_parsed_again_and_replaced(scratch):
    d, cache = scratch
    want = load_matrix(d).builds
    (stored,) = cache.iterdir()
    good = stored.read_bytes()
    for damage in (good[: len(good) // 2], b"", b"\x00garbage"):
        stored.write_bytes(damage)
        matrix_pkg._load_cached.cache_clear()
        assert load_matrix(d).builds == want
        assert stored.read_bytes() == good


def test_a_user_index_file_changes_what_is_loaded(scratch, tmp_path):
    """A generated-index file in the user's folder (what `envcheck matrix update` writes) is part of
    the key: adding it, then removing it, is seen at once."""
    d, _ = scratch
    index = tmp_path / "index"
    index.mkdir()
    assert load_matrix(d, index_dir=index).index_updates == []
    (index / "generated-index-pypi-torch.toml").write_text(
        '[[update]]\nchannel = "pypi"\npackage = "torch"\nindex_url = "https://example.invalid/simple/"\n'
        'pages = ["https://example.invalid/simple/torch/"]\nchecked = "2026-11-30T10:00:00Z"\n'
        'changed = "2026-11-30T10:00:00Z"\nfiles = 0\nsource = "https://example.invalid/simple/torch/"\nconfidence = "official"\n',
        encoding="utf-8")
    assert [u.channel for u in load_matrix(d, index_dir=index).index_updates] == ["pypi"]
    (index / "generated-index-pypi-torch.toml").unlink()
    assert load_matrix(d, index_dir=index).index_updates == []


def test_a_single_file_read_through_the_cache_matches_its_parse(tmp_path, monkeypatch):
    """load_file_cached (probe, the CPU-name table): platforms.toml's tables, from the cache file
    on a second process's start as from the parse."""
    monkeypatch.setenv("ENVCHECK_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "platforms.toml"
    shutil.copy(Path(default_matrix_dir()) / "platforms.toml", path)
    first = dict(matrix_pkg.load_file_cached(path))
    matrix_pkg._file_rows.cache_clear()
    with monkeypatch.context() as mp:
        _no_parse(mp)
        again = matrix_pkg.load_file_cached(path)
        assert {t: list(again[t]) for t in again} == first
    assert first["cpu_arch"] and first["distro"]
    matrix_pkg._file_rows.cache_clear()


def test_loading_reads_no_table_a_plan_does_not_need(scratch, monkeypatch):
    """Tables are rebuilt into rows when first read: loading the matrix (what every plan does) leaves
    diagnoses.toml's rules, the chip codenames and the AMD/WSL/Jetson tables as stored bytes."""
    d, _ = scratch
    load_matrix(d)
    matrix_pkg._load_cached.cache_clear()
    read = []
    real = matrix_pkg._StoredTables.__getitem__

    def noting(self, table):
        read.append(table)
        return real(self, table)

    monkeypatch.setattr(matrix_pkg._StoredTables, "__getitem__", noting)
    warm = load_matrix(d)
    assert {"build", "release", "gpu", "toolkit"} <= set(read)
    assert not {"diagnosis", "chip", "distro", "jetpack", "rocm_os", "step", "route"} & set(read)
    assert warm.chips and "chip" in read  # ... until a lookup asks for them


def test_a_folder_without_matrix_files_is_one_line_bad_input(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a matrix\n")
    with pytest.raises(DataFileError, match="holds no \\*.toml files"):
        load_matrix(tmp_path / "empty")
