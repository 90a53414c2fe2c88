"""The hostile suite: generated inputs (Hypothesis, seeded and bounded), real parsers, real
processes, real servers on 127.0.0.1. Each module counts the vectors it tried in :data:`TALLY`;
``pytest tests/hostile -s`` prints the totals at the end (the figures of the closing note)."""

from __future__ import annotations

import collections
import os

import pytest
from hypothesis import HealthCheck, settings

#: Figures per class: vectors tried and what went wrong (tracebacks, hangs, clobbers, mixed sets,
#: stray processes, injections) — every test asserts its "wrong" count stays 0.
TALLY: collections.Counter[str] = collections.Counter()



def hostile(examples: int = 25) -> settings:
    """Seeded and bounded Hypothesis settings: the same vectors on every CI run (derandomized);
    HOSTILE_SCALE=N multiplies the count for a longer local run."""
    return settings(
        derandomize=True, deadline=None, database=None,
        max_examples=examples * int(os.environ.get("HOSTILE_SCALE", "1")),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                               HealthCheck.data_too_large],
    )


def pytest_terminal_summary(terminalreporter):  # noqa: D103
    if TALLY:
        terminalreporter.write_line("hostile vectors: " + ", ".join(f"{k}={v}" for k, v in sorted(TALLY.items())))


@pytest.fixture
def tally():
    return TALLY
