"""edge.check_image answers as the OCI reference pattern does: its string-method fast path
(edge._plain_reference, so a plan's Dockerfile does not compile the pattern, #9) only ever accepts
what the pattern accepts, and takes every image the matrices name."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from envcheck import edge
from envcheck.errors import UsageError
from envcheck.matrix import load_matrix

#: the characters that decide: lower/upper letters, digits, the separators, ':', '/', '@', a non-ASCII \\w
REFERENCES = st.text(st.sampled_from("ab9Z_.-:/@é"), max_size=24) | st.builds(
    lambda parts, tag: "/".join(parts) + tag,
    st.lists(st.text(st.sampled_from("ab9.-_"), min_size=1, max_size=8), min_size=1, max_size=3),
    st.sampled_from(["", ":", ":1", ":.x", ":-x", ":_x", ":X.y-Z", ":" + "t" * 128, ":" + "t" * 129]))


def pattern_matches(value: str) -> bool:
    return re.fullmatch(edge._REFERENCE, value, re.ASCII) is not None


@settings(max_examples=3000, deadline=None)
@given(value=REFERENCES)
def test_the_fast_path_accepts_only_what_the_pattern_accepts(value):
    if edge._plain_reference(value):
        assert pattern_matches(value), value


@pytest.mark.parametrize("value, plain", [
    ("python:3.12-slim", True), ("nvidia/cuda:12.8.0-cudnn-runtime-ubuntu24.04", True),
    ("ghcr.io/astral-sh/uv:0.5", True), ("a__b", True), ("a---b", True),
    ("a___b", False), ("a._b", False), ("a..b", False), ("-a", False), ("a-", False), ("A", False),
    ("a:", False), ("a:.x", False), ("a:é", False), ("localhost:5000/a", False), ("a@sha256:" + "0" * 64, False),
])
def test_forms(value, plain):
    assert edge._plain_reference(value) is plain
    if plain:
        assert edge.check_image(value) == value


@pytest.mark.parametrize("value", ["localhost:5000/a:b", "a@sha256:" + "0" * 64, "Registry.Example/a"])
def test_the_rest_is_the_pattern_s(value):
    assert edge.check_image(value) == value


@pytest.mark.parametrize("value", ["a___b", "UPPER", "a:", "a b", "a:" + "t" * 129])
def test_refused(value):
    with pytest.raises(UsageError):
        edge.check_image(value)


def test_every_shipped_image_takes_the_fast_path():
    m = load_matrix()
    images = [b.image.replace("{python}", "3.12").replace("{rocm}", "6.3") for b in m.base_images]
    images += [b.uv_image for b in m.base_images if b.uv_image]
    assert images
    assert [i for i in images if not edge._plain_reference(i)] == []
