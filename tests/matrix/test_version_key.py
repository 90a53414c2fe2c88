"""vkey orders, equates and splits versions exactly as packaging.version.Version does (packaging is the
oracle here: envcheck.matrix.version parses plain dotted numbers itself and hands the rest to it)."""

from __future__ import annotations

import itertools
import random
import re
import tomllib

import pytest
from packaging.version import InvalidVersion, Version

from envcheck.matrix import default_matrix_dir
from envcheck.matrix.version import parse

GENERATED = [
    "0", "1", "1.0", "1.0.0", "1.0.0.0", "01.2", "1.02", "2.7.1", "2.7.10", "2.10", "12.8", "12.8.0", "12.8.1",
    "580.95.05", "580.65.06", "570.124.06", "2.17", "2.28", "2.6.0a0", "2.6.0a1", "2.6.0b0", "2.6.0rc1",
    "2.6.0RC1", "2.6.0c1", "2.6.0.dev20250101", "2.6.0.dev1", "2.6.0", "2.6.0.post1", "2.6.0.post1.dev2",
    "2.6.0a1.dev3", "2.6.0a1.post2", "2.6.0-1", "1!0.1", "1!2.0", "0!2.0", "2.7.1+cu128", "2.7.1+cpu",
    "2.7.1+rocm6.3", "2.7.1+cu128.1", "2.7.1+1", "2.7.1+1.a", "2.7.1+a.1", "2.7.1+cu_128", " 2.0 ", "v2.0",
    "V2.0", "2.0.0.0.0.1", "1.11.0a0+17540c5", "2.9.1+rocm7.13.0", "0.0.0.dev0", "3.14", "3.9",
]
INVALID = ["570.x", "", ".", "1..2", "1.", ".1", "a", "1.0-", "1.0+", "x.y", "²", "1.²", "1.0 beta"]


def _matrix_versions():
    found = set()
    pattern = re.compile(r"^\s*v?\d[0-9A-Za-z.!+_-]*$")
    for f in sorted(default_matrix_dir().glob("*.toml")):
        def walk(x):
            if isinstance(x, dict):
                for v in x.values():
                    yield from walk(v)
            elif isinstance(x, list):
                for v in x:
                    yield from walk(v)
            elif isinstance(x, str) and pattern.match(x):
                yield x
        found.update(walk(tomllib.loads(f.read_text(encoding="utf-8"))))
    out = []
    for s in sorted(found):
        try:
            Version(s)
        except InvalidVersion:
            continue
        out.append(s)
    return out


def test_the_order_equality_and_release_are_packagings():
    corpus = sorted(set(_matrix_versions()) | set(GENERATED))
    assert len(corpus) > 300  # the matrix's own versions are the bulk
    ours = {s: parse(s) for s in corpus}
    theirs = {s: Version(s) for s in corpus}
    for s in corpus:
        assert ours[s].release == theirs[s].release, s
    rng = random.Random(3)
    pairs = list(itertools.combinations(GENERATED, 2)) + [tuple(rng.sample(corpus, 2)) for _ in range(20000)]
    for a, b in pairs:
        assert (ours[a] < ours[b]) == (theirs[a] < theirs[b]), (a, b)
        assert (ours[a] == ours[b]) == (theirs[a] == theirs[b]), (a, b)
        assert (ours[a] >= ours[b]) == (theirs[a] >= theirs[b]), (a, b)
    assert sorted(corpus, key=parse) == sorted(corpus, key=Version)
    assert len({ours[s] for s in corpus}) == len({theirs[s] for s in corpus})  # hashes follow equality


@pytest.mark.parametrize("text", INVALID)
def test_what_packaging_refuses_is_refused(text):
    with pytest.raises(InvalidVersion):
        Version(text)
    with pytest.raises(ValueError, match="not a version"):
        parse(text)


def test_a_version_is_not_equal_to_other_things():
    assert parse("1.0") != "1.0" and parse("1.0") != (1, 0)
    with pytest.raises(TypeError):
        parse("1.0") < "2.0"  # noqa: B015
