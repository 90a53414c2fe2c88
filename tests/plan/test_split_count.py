"""machine.describe.split_count answers as its three count patterns do: its guard (what each pattern
needs: a leading digit, a ':', or a space before x/X/×) only skips compiling them for plain names (#9)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from envcheck.errors import UsageError
from envcheck.machine.describe import COUNT_FORMS, split_count


def by_the_patterns(raw: str):
    text = raw.strip()
    for rx, name_group in COUNT_FORMS:
        mt = re.fullmatch(rx, text, re.I)
        if mt:
            count = int(mt.group(3 - name_group))
            return ("error", count) if count < 1 else (mt.group(name_group).strip(), count)
    return text, 1


def answer(raw: str):
    try:
        return split_count(raw)
    except UsageError as exc:
        return "error", int(str(exc).split("a count of ")[1].split(";")[0])


@settings(max_examples=3000, deadline=None)
@given(raw=st.text(st.sampled_from("0129 xX×:\t\u2003A-kK\n"), max_size=12))
def test_the_same_answer_as_the_patterns(raw):
    assert answer(raw) == by_the_patterns(raw)


@pytest.mark.parametrize("raw, want", [("RTX 4090", ("RTX 4090", 1)), ("2x A100", ("A100", 2)),
                                       ("A100 x2", ("A100", 2)), ("A100 X 2", ("A100", 2)), ("A100:2", ("A100", 2)),
                                       ("H100 ×8", ("H100", 8)), ("rtx4090", ("rtx4090", 1))])
def test_forms(raw, want):
    assert split_count(raw) == want == by_the_patterns(raw)
