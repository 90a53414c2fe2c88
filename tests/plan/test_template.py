"""render.common.Template substitutes as string.Template does (the Dockerfile and environment.yml
templates go through it; a plan does not import string, #9). string.Template is the oracle."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings, strategies as st

from envcheck.render.common import Template

VALUES = {"a": "A", "ab": 1, "_x9": "${b}", "B": "$$", "é": "not an identifier"}
#: text around placeholders, escapes and every way a `$` starts none
PIECES = st.lists(st.sampled_from(["$", "$$", "{", "}", "$a", "$ab", "${a}", "${ab}", "$_x9", "${_x9}", "$B", "${B",
                                   "$1", "${1}", "${}", "$é", "${é}", "$missing", "${missing}", "a", "b", "9", "_",
                                   " ", "\n", "\r\n", "text", "${a}b", "$a-b"]), max_size=12)


def outcome(make, text):
    try:
        return make(text).substitute(**VALUES)
    except (KeyError, ValueError) as exc:
        return type(exc), str(exc)


@settings(max_examples=2000, deadline=None)
@given(pieces=PIECES)
def test_the_same_text_or_error_as_string_template(pieces):
    text = "".join(pieces)
    assert outcome(Template, text) == outcome(string.Template, text)


@pytest.mark.parametrize("text", ["", "$", "x\n$", "x\ny $1", "FROM $base\nRUN echo $$HOME ${a}", "$$$$a"])
def test_edges(text):
    assert outcome(Template, text) == outcome(string.Template, text)


def test_the_shipped_templates_read_the_same():
    import os

    from envcheck.matrix import resource_path

    for folder in ("dockerfiles", "conda"):
        for name in os.listdir(resource_path(folder)):
            path = os.path.join(resource_path(folder), name)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            names = {m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(text)} - {None}
            values = {n: f"<{n}>" for n in names}
            assert Template(text).substitute(**values) == string.Template(text).substitute(**values), name
