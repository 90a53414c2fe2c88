"""Fixtures for probe tests: the matrix probe loads, and a replayer of recorded machines (see replay.py)."""

from __future__ import annotations

import pytest

from tests.probe.replay import machine_replay


@pytest.fixture(scope="session")
def probe_matrix():
    from envcheck.probe import load_probe_matrix

    return load_probe_matrix()


@pytest.fixture
def replay_machine(probe_matrix):
    """``replay_machine(name, overrides=None, **probe_kw) -> (Machine, Replay)``."""
    from envcheck.probe import probe_machine

    def go(name: str, overrides=None, **kw):
        root, replay = machine_replay(name, overrides)
        kw.setdefault("docker", False)
        kw.setdefault("nvml", False)
        return probe_machine(probe_matrix, root=root, runner=replay, **kw), replay

    return go
