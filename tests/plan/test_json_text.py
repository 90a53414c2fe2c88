"""jsontypes.json_text writes ``json.dumps(doc, indent=2)``'s bytes (plan --json prints through it:
json's indented encoder is pure Python generators, #9). json.dumps is the oracle; the 30 golden
machines (tests/golden/test_plan_json.py) compare the printed plans with it too."""

from __future__ import annotations

import json
from collections import OrderedDict

import pytest
from hypothesis import given, settings, strategies as st

from envcheck.jsontypes import json_text

#: every JSON value json.dumps writes: all of Unicode (lone surrogates too), every float, big ints
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-2**200, max_value=2**200)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(st.characters(), max_size=30))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
                      | st.dictionaries(st.text(st.characters(), max_size=8), inner, max_size=5), max_leaves=40)


@settings(max_examples=600, deadline=None)
@given(doc=VALUES)
def test_the_bytes_of_json_dumps_indent_2(doc):
    assert json_text(doc) == json.dumps(doc, indent=2)


@pytest.mark.parametrize("doc", [
    {}, [], "", {"a": {}, "b": [], "c": [[], [{}]]}, {"\u2014": "≥ \x00 \ud800 \"q\" \\ \t"},
    {"n": 1.5e300, "i": -0.0, "nan": float("nan"), "inf": [float("inf"), float("-inf")]},
    OrderedDict([("z", 1), ("a", True)]),  # a dict subclass: json keeps its order
])
def test_edges(doc):
    assert json_text(doc) == json.dumps(doc, indent=2)


@pytest.mark.parametrize("doc", [
    {1: "an int key", None: "null", 2.5: "x", False: "b"},  # keys json turns into strings
    {"a": {1, 2}},  # no JSON type: json's own TypeError
])
def test_what_json_answers_differently_is_answered_by_json(doc):
    try:
        want = json.dumps(doc, indent=2)
    except TypeError as exc:
        with pytest.raises(TypeError, match=str(exc)[:20]):
            json_text(doc)
    else:
        assert json_text(doc) == want


def test_a_circular_document_is_json_s_error():
    doc: list = []
    doc.append(doc)
    with pytest.raises(ValueError, match="Circular reference"):
        json_text(doc)


def test_a_whole_plan_is_json_s_bytes():
    from tests.conftest import run_cli

    res = run_cli(["plan", "--gpu", "V100", "--json"])
    doc = json.loads(res.out)
    assert len(doc["candidates"]) > 1000
    assert res.out == json.dumps(doc, indent=2) + "\n"
