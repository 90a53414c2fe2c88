"""``@record`` (envcheck/record.py) behaves as the ``@dataclass`` it replaces at start-up: each case
below is run against a real dataclass of the same fields and must come out the same."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import field
from typing import Dict, List, Optional, Tuple

import pytest

from envcheck.matrix.model import Build, Release
from envcheck.record import record


@dataclasses.dataclass(frozen=True)
class DBase:
    source: Tuple[str, ...] = ()
    confidence: str = "unverified"


@dataclasses.dataclass(frozen=True)
class DRow(DBase):
    name: str = ""
    tags: Tuple[str, ...] = ()
    env: Dict[str, str] = field(default_factory=dict)
    hidden: int = field(default=0, repr=False, compare=False)


@record(frozen=True)
class RBase:
    source: Tuple[str, ...] = ()
    confidence: str = "unverified"


@record(frozen=True)
class RRow(RBase):
    name: str = ""
    tags: Tuple[str, ...] = ()
    env: Dict[str, str] = field(default_factory=dict)
    hidden: int = field(default=0, repr=False, compare=False)


@record
class Mutable:
    need: str
    items: List[int] = field(default_factory=list)
    later: Optional[int] = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.later = len(self.need)


def test_init_repr_eq_like_dataclass():
    d = DRow(("a",), "official", "x", tags=("t",), env={"K": "v"}, hidden=3)
    r = RRow(("a",), "official", "x", tags=("t",), env={"K": "v"}, hidden=3)
    assert repr(r) == repr(d).replace("DRow", "RRow")
    assert dataclasses.asdict(r) == dataclasses.asdict(d)
    assert [f.name for f in dataclasses.fields(r)] == [f.name for f in dataclasses.fields(d)]
    assert list(vars(r)) == list(vars(d))  # attributes set in field order
    assert RRow.__match_args__ == DRow.__match_args__
    assert r == RRow(("a",), "official", "x", tags=("t",), env={"K": "v"}, hidden=99)  # compare=False
    assert r != RRow(("a",), "official", "y")
    assert r != d and (r == 1) is False


def test_defaults_factories_and_errors():
    a, b = RRow(), RRow()
    assert a.env == {} and a.env is not b.env  # a fresh default per instance
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        RRow(nope=1)
    with pytest.raises(TypeError, match="multiple values for argument 'source'"):
        RRow(("a",), source=("b",))
    with pytest.raises(TypeError, match="positional arguments"):
        RRow(*range(7))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'need'"):
        Mutable()


def test_frozen_hash_replace_pickle():
    r = RRow(("a",), name="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.name = "y"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del r.name  # type: ignore[misc]
    assert hash(RBase(("a",), "c")) == hash(DBase(("a",), "c"))
    assert {RBase(("a",)), RBase(("a",))} == {RBase(("a",))}
    assert dataclasses.replace(r, name="y") == RRow(("a",), name="y")
    assert pickle.loads(pickle.dumps(r)) == r


def test_mutable_post_init_unhashable():
    m = Mutable("abc")
    assert m.later == 3 and m.items == []
    m.items.append(1)
    m.need = "z"
    assert repr(m) == "Mutable(need='z', items=[1], later=3)"
    with pytest.raises(TypeError, match="unhashable"):
        hash(m)


def test_matrix_rows_keep_their_methods():
    b = Build(torch=("2.7.0",), variant="cu128", channel="pytorch", cuda="12.8.0")
    assert b.backend == "cuda" and b.version_of("2.7.0") == "2.7.0+cu128"
    assert Release(version="2.7.0") == Release(version="2.7.0")
    assert dataclasses.is_dataclass(b)
