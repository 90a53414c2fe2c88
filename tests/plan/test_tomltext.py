"""envcheck.tomltext writes tomli_w.dumps's bytes (the lock of every plan is written through it, so a
plan does not import tomli_w, datetime and math, #9). tomli_w is the oracle."""

from __future__ import annotations

import datetime
from types import MappingProxyType

import pytest
import tomli_w
from hypothesis import given, settings, strategies as st

from envcheck.tomltext import toml_text

#: keys: bare ones, and any text (quoted, escaped)
KEYS = st.sampled_from(["a", "torch", "driver_full", "b-c", "x_1", "", "with space", "ü", "q\"uote"]) | st.text(max_size=6)
SCALARS = (st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
           | st.text(st.characters(), max_size=40) | st.sampled_from(["\t", "\x7f", "\x00\x08\x0c\r\n", "\\", "\u2028"]))


def _values(inner):
    tables = st.dictionaries(KEYS, inner, max_size=4)
    # lists of tables: some short (inline), some long or holding lists (an array of tables)
    return st.lists(inner, max_size=4) | st.tuples(inner) | tables | st.lists(tables, min_size=1, max_size=3)


VALUES = st.recursive(SCALARS, _values, max_leaves=30)


@settings(max_examples=500, deadline=None)
@given(doc=st.dictionaries(KEYS, VALUES, max_size=6))
def test_the_bytes_of_tomli_w(doc):
    assert toml_text(doc) == tomli_w.dumps(doc)


@pytest.mark.parametrize("doc", [
    {},
    {"a": {}, "b": {"c": {}}, "d": [{}], "e": []},
    {"step": [{"key": "x", "shell": "line one\nline two"}, {"key": "y"}]},  # a line break: an array of tables
    {"t": [{"k": "v" * 84}], "u": [{"k": "v" * 85}]},  # 100 characters inline, and 101
    {"t": [{"k": [1, [2, []]]}], "n": [[{"a": 1}], [[]]]},  # lists inside inline tables start at the first indent
    {"x": 1, "sub": {"y": 2}, "z": 3},  # plain keys first, then tables
])
def test_edges(doc):
    assert toml_text(doc) == tomli_w.dumps(doc)


@pytest.mark.parametrize("doc", [
    {"when": datetime.date(2026, 12, 2)},  # not a lock's value: tomli_w writes it
    {"m": MappingProxyType({"a": 1})},
])
def test_other_values_are_tomli_w_s(doc):
    assert toml_text(doc) == tomli_w.dumps(doc)


@pytest.mark.parametrize("doc", [{1: "a key that is not text"}, {"a": object()}, {"a": [None]}])
def test_what_tomli_w_refuses_it_refuses(doc):
    with pytest.raises(TypeError):
        tomli_w.dumps(doc)
    with pytest.raises(TypeError):
        toml_text(doc)


def test_every_golden_plan_s_lock_is_tomli_w_s():
    from envcheck.app.plan import plan as plan_use_case
    from envcheck.cli.flags import plan_request
    from envcheck.cli.plan import add_parser
    from envcheck.lock import lock_document
    from envcheck.machine.model import drop_none_table
    from tests.golden.cases import PLAN_CASES

    import argparse

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    made = 0
    for args in PLAN_CASES.values():
        ns = parser.parse_args(["plan", *args])
        result = plan_use_case(plan_request(ns, hashes=False))
        if result.plan is None:
            continue
        doc = drop_none_table(lock_document(result.plan, generated="2026-12-02T00:00:00+00:00"))
        assert toml_text(doc) == tomli_w.dumps(doc)
        made += 1
    assert made >= 20
