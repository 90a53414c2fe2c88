"""Fixtures for the index tests: a real HTTP server on 127.0.0.1, the real listing, scratch matrices."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.update.index_support import LISTING, ROOT, IndexServer


@pytest.fixture
def server():
    s = IndexServer()
    yield s
    s.close()


@pytest.fixture(scope="session")
def listing() -> bytes:
    if not LISTING.exists():
        pytest.skip(f"{LISTING} is absent (the shared data folder lives beside the checkout)")
    return LISTING.read_bytes()


@pytest.fixture
def mx(tmp_path: Path) -> Path:
    """A scratch copy of the hand-sourced matrices (no generated files)."""
    d = tmp_path / "matrices"
    d.mkdir()
    for p in (ROOT / "matrices").glob("*.toml"):
        if not p.name.startswith("generated-"):
            shutil.copy2(p, d / p.name)
    return d
