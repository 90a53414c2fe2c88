"""Fixtures of the matrix tests."""

from __future__ import annotations

import shutil

import pytest

import envcheck.matrix as matrix_pkg
from envcheck.matrix import default_matrix_dir


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A copy of the shipped matrices and an empty cache folder of this test's own."""
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    cache = tmp_path / "cache"
    monkeypatch.setenv("ENVCHECK_CACHE_DIR", str(cache))
    monkeypatch.delenv("ENVCHECK_NO_CACHE", raising=False)
    matrix_pkg._load_cached.cache_clear()  # the in-process memo: each load here asks the cache folder
    yield d, cache
    matrix_pkg._load_cached.cache_clear()
