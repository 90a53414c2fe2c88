"""plan's text output wraps long lines as textwrap would (cli.plan.wrap_words is textwrap.wrap with
break_long_words=False and break_on_hyphens=False, written out so a plan does not import textwrap)."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings, strategies as st

from envcheck.cli.plan import wrap_words

#: words, runs of spaces and the other whitespace textwrap turns into spaces, hyphens, a no-break space
PIECES = st.lists(st.sampled_from(["torch", "2.14.1+cu130", "a", "download.pytorch.org", "--explain", "-", "x-y",
                                   "—", "≥", " ", "  ", "   ", "\t", "\n", "\r\n", "\x0b", "\xa0", "\u2003",
                                   "a-very-long-hyphenated-word-that-does-not-fit-on-any-line-at-all",
                                   "https://download.pytorch.org/whl/cu130/torch-2.14.1%2Bcu130-cp314.whl"]),
                  max_size=60)


def textwrap_lines(text: str, width: int, indent: str) -> list:
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


@settings(max_examples=400, deadline=None)
@given(pieces=PIECES, width=st.integers(min_value=12, max_value=100), indent=st.integers(min_value=0, max_value=10))
def test_wrapped_lines_are_textwraps(pieces, width, indent):
    text = "".join(pieces)
    assert wrap_words(text, width, " " * indent) == textwrap_lines(text, width, " " * indent)


@pytest.mark.parametrize("text", [
    "    hosts    a firewall must allow download.pytorch.org (https) and, for the system steps, your "
    "distribution's package mirror",
    "   0. first, in the shell you paste the steps into — the environment's folder ($VENV) and its python first",
    "  12. [system] python-venv-apt — Python 3.14 with its venv module (Debian/Ubuntu ship python3 without "
    "pip or ensurepip, and their system pip refuses installs: PEP 668)  [Linux as root]",
])
def test_plan_lines_wrap_as_before(text):
    for width in (60, 79, 99):
        assert wrap_words(text, width, " " * 13) == textwrap_lines(text, width, " " * 13)
        assert all(len(ln) <= width for ln in wrap_words(text, width, " " * 13))
