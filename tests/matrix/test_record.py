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


# -- no dataclasses at start-up; envcheck.record's fields/replace/asdict give dataclasses' answers --

@pytest.mark.subprocess
def test_defining_and_using_records_imports_no_dataclasses():
    """The bookkeeping is @record's own: defining records, making, comparing, hashing, replacing
    and converting them loads neither dataclasses nor inspect (~9 ms a start, issue #9)."""
    import subprocess
    import sys

    code = ("import sys\nfrom envcheck.record import asdict, field, fields, record, replace\n"
            "@record(frozen=True)\nclass A:\n    x: int = 0\n    tags: tuple = ()\n"
            "@record\nclass B:\n    a: A\n    items: list = field(default_factory=list)\n"
            "b = B(A(1), [A(2)])\nassert replace(b.a, x=3) == A(3) and hash(A(1)) == hash(A(1))\n"
            "assert asdict(b) == {'a': {'x': 1, 'tags': ()}, 'items': [{'x': 2, 'tags': ()}]}\n"
            "assert [f.name for f in fields(B)] == ['a', 'items']\n"
            "print(sorted({'dataclasses', 'inspect', 'typing'} & set(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_record_helpers_answer_as_dataclasses_do():
    from envcheck import record as rec

    r = RRow(("a",), "official", "x", tags=("t",), env={"K": "v"}, hidden=3)
    d = DRow(("a",), "official", "x", tags=("t",), env={"K": "v"}, hidden=3)
    mine = [(f.name, f.type, f.init, f.repr, f.compare, f.hash) for f in rec.fields(r)]
    theirs = [(f.name, f.type, f.init, f.repr, f.compare, f.hash) for f in dataclasses.fields(d)]
    assert mine == theirs
    assert [f.name for f in rec.fields(d)] == [t[0] for t in theirs]  # a real dataclass: handed over
    assert rec.asdict(r) == dataclasses.asdict(d) == {"source": ("a",), "confidence": "official", "name": "x",
                                                       "tags": ("t",), "env": {"K": "v"}, "hidden": 3}
    assert rec.asdict(r)["env"] is not r.env  # copied, as dataclasses.asdict does
    assert rec.replace(r, name="y") == RRow(("a",), "official", "y", ("t",), {"K": "v"})
    m = Mutable("abc")
    with pytest.raises(ValueError, match="init=False"):
        rec.replace(m, later=1)
    assert rec.replace(m, need="z").later == 1  # __post_init__ runs again
    assert rec.is_record(r) and rec.is_record(RRow) and not rec.is_record(d)


def test_dataclasses_sees_records_as_dataclasses():
    """``dataclasses.fields/replace/asdict/is_dataclass`` on a record: its dataclass fields are
    made on first use; a @dataclass may subclass a record."""
    assert dataclasses.is_dataclass(RRow) and dataclasses.is_dataclass(Mutable("a"))
    assert [f.name for f in dataclasses.fields(Mutable)] == ["need", "items", "later"]
    assert [f.init for f in dataclasses.fields(Mutable)] == [True, True, False]
    assert dataclasses.replace(Mutable("ab"), items=[1]).items == [1]

    @dataclasses.dataclass
    class Sub(Mutable):
        extra: int = 0

    assert [f.name for f in dataclasses.fields(Sub)] == ["need", "items", "later", "extra"]
    assert Sub("abcd", extra=2).later == 4


def test_class_body_rules_as_dataclass():
    from typing import ClassVar

    from envcheck.record import field as rfield

    @record
    class WithClassVar:
        KIND: ClassVar[str] = "k"
        x: int = 1

    assert WithClassVar.__match_args__ == ("x",) and WithClassVar().KIND == "k"
    assert WithClassVar.x == 1  # a plain default stays a class attribute, as dataclass leaves it
    with pytest.raises(ValueError, match="mutable default"):
        @record
        class BadDefault:
            items: List[int] = []  # noqa: RUF012
    with pytest.raises(TypeError, match="non-default argument 'y' follows default argument"):
        @record
        class BadOrder:
            x: int = 0
            y: int  # type: ignore[misc]
    with pytest.raises(TypeError, match="has no type annotation"):
        @record
        class NoAnnotation:
            x = rfield(default=1)
    with pytest.raises(ValueError, match="both default and default_factory"):
        rfield(default=1, default_factory=list)

    @record
    class Factory:
        items: List[int] = rfield(default_factory=list)

    assert not hasattr(Factory, "items") and Factory().items == []  # a factory field leaves no class attribute


# -- breaker4 F10: frozen and non-frozen classes never inherit each other, as with dataclass ----------

def _declare(decorate, base):
    """The error decorating ``class Sub(base): y: int = 0`` raises, or ``None``."""
    try:
        decorate(type("Sub", (base,), {"__annotations__": {"y": "int"}, "y": 0, "__module__": __name__}))
    except TypeError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("base_frozen, sub_frozen", [(True, False), (False, True), (True, True), (False, False)])
def test_record_subclassing_follows_dataclass_frozen_rule(base_frozen, sub_frozen):
    @record(frozen=base_frozen)
    class RecBase:
        x: int

    @dataclasses.dataclass(frozen=base_frozen)
    class DcBase:
        x: int

    # the oracle is dataclass itself, on a dataclass base of the same frozenness
    expected = _declare(dataclasses.dataclass(frozen=sub_frozen), DcBase)
    assert _declare(record(frozen=sub_frozen), RecBase) == expected
    # and a dataclass subclassing a record is held to the same rule (it used to define fine, then fail in __init__)
    assert _declare(dataclasses.dataclass(frozen=sub_frozen), RecBase) == expected
    if expected is None:
        sub = type("Sub", (RecBase,), {"__annotations__": {"y": "int"}, "y": 0, "__module__": __name__})
        made = dataclasses.dataclass(frozen=sub_frozen)(sub)(1, 2)
        assert (made.x, made.y) == (1, 2)
