"""``@record``: a data class that costs (almost) nothing to define — and nothing to import.

``dataclasses.dataclass`` writes the source of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__`` and ``__delattr__`` for each class and compiles it with ``exec`` — about a
millisecond a class, paid on every start — and importing :mod:`dataclasses` itself pulls in
``inspect``, ``ast``, ``dis`` and ``tokenize`` (~9 ms). envcheck defines ~50 records on the way to a
plan, so ``@record`` does neither: it reads the class's annotations and ``field(...)`` defaults
itself and gives the class shared, generic methods with the behaviour of the dataclass it stands
for: keyword or positional arguments in field order, defaults and ``default_factory``,
``__post_init__``, ``repr``/``compare``/``hash`` flags of fields, frozen instances.

A record is still a dataclass to :mod:`dataclasses`: its ``__dataclass_fields__`` (and
``__dataclass_params__``) are made on first use, so ``dataclasses.fields``, ``replace``, ``asdict``
and ``is_dataclass`` work on records as before — they import :mod:`dataclasses`, which is why the
start-up path uses this module's :func:`fields`, :func:`replace` and :func:`asdict` instead (the
same answers; any other dataclass is handed to :mod:`dataclasses`). Type checkers see
``dataclasses`` itself (the module's ``TYPE_CHECKING`` branch), which is what a record behaves as.

Use it for classes defined on every start; a class whose instances are made by the thousand in a
hot loop is faster with dataclass's generated ``__init__``.
"""

from __future__ import annotations

import sys
from types import MappingProxyType

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

__all__ = ["record", "field", "fields", "replace", "asdict", "is_record"]


class _Missing:
    """No default (``dataclasses.MISSING`` without importing dataclasses)."""

    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()
_NO_METADATA: Mapping[Any, Any] = MappingProxyType({})  # shared, as dataclasses shares its own


class Field:
    """One field of a record, as ``dataclasses.Field`` describes one (``name``, ``type``,
    ``default``, ``default_factory``, ``init``, ``repr``, ``hash``, ``compare``, ``metadata``);
    ``field(...)`` in a record's class body makes one."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare", "metadata")

    def __init__(self, default: Any, default_factory: Any, init: bool, repr: bool, hash: Optional[bool],
                 compare: bool, metadata: Optional[Mapping[Any, Any]]) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name: str = ""
        self.type: Any = None
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.hash, self.compare = init, repr, hash, compare
        self.metadata = _NO_METADATA if metadata is None else MappingProxyType(metadata)

    def __repr__(self) -> str:
        return (f"Field(name={self.name!r},type={self.type!r},default={self.default!r},"
                f"default_factory={self.default_factory!r},init={self.init!r},repr={self.repr!r},"
                f"hash={self.hash!r},compare={self.compare!r},metadata={self.metadata!r})")


def _field(*, default: Any = _MISSING, default_factory: Any = _MISSING, init: bool = True, repr: bool = True,
           hash: Optional[bool] = None, compare: bool = True, metadata: Optional[Mapping[Any, Any]] = None) -> Any:
    """``field(...)`` as :func:`dataclasses.field` takes it, for a record's class body."""
    return Field(default, default_factory, init, repr, hash, compare, metadata)


def _from_dataclass_field(value: Any) -> Optional[Field]:
    """A ``dataclasses.field(...)`` in a record's body (dataclasses already imported by its module)
    as this module's :class:`Field`; ``None`` for any other value."""
    dc = sys.modules.get("dataclasses")
    if dc is None or not isinstance(value, dc.Field):
        return None
    missing = dc.MISSING

    def own(v: Any) -> Any:
        return _MISSING if v is missing else v

    return Field(own(value.default), own(value.default_factory), value.init, value.repr, value.hash,
                 value.compare, value.metadata)


def _is_classvar(annotation: Any) -> bool:
    """``ClassVar[...]`` (a string under ``from __future__ import annotations``) is no field."""
    if isinstance(annotation, str):
        return "ClassVar" in annotation and annotation.replace(" ", "").startswith(
            ("ClassVar", "typing.ClassVar", "t.ClassVar"))
    typing = sys.modules.get("typing")
    return typing is not None and (annotation is typing.ClassVar
                                   or getattr(annotation, "__origin__", None) is typing.ClassVar)


def _collect(cls: type) -> Dict[str, Field]:
    """The fields of ``cls`` in dataclass order: the bases' (a record's or a dataclass's), then its
    own annotations (a name given again keeps its place, takes the new default). Sets the class
    attributes as dataclass does: a default stays, a ``field(...)`` becomes its default or goes."""
    out: Dict[str, Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        inherited = base.__dict__.get("__record_fields__")
        if inherited is None and isinstance(base.__dict__.get("__dataclass_fields__"), dict):
            import dataclasses  # a real dataclass as a base: dataclasses is loaded already

            inherited = {f.name: _as_field(f) for f in dataclasses.fields(base)}  # type: ignore[arg-type]
        out.update(inherited or {})
    own = cls.__dict__.get("__annotations__", {})
    for name, value in cls.__dict__.items():
        if isinstance(value, Field) and name not in own:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    dataclasses_loaded = "dataclasses" in sys.modules  # else no value can be a dataclasses.field(...)
    for name, annotation in own.items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else _from_dataclass_field(value) if dataclasses_loaded else None
        if f is None:
            f = Field(value, _MISSING, True, True, None, True, None)
        elif f.default is _MISSING:
            delattr(cls, name)
        else:
            setattr(cls, name, f.default)
        if f.default is not _MISSING and type(f.default).__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: "
                             "use default_factory")
        f.name, f.type = name, annotation
        out[name] = f
    seen_default = None
    for f in out.values():
        if not f.init:
            continue
        if f.default is not _MISSING or f.default_factory is not _MISSING:
            seen_default = f.name
        elif seen_default is not None:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    return out


def _as_field(f: Any) -> Field:
    own = _from_dataclass_field(f)
    assert own is not None
    own.name, own.type = f.name, f.type
    return own


def _frozen_bases(cls: type) -> List[bool]:
    """Whether each record or dataclass base of ``cls`` is frozen (``[]``: none is either)."""
    out = []
    for base in cls.__mro__[1:]:
        if "__record_fields__" in base.__dict__:
            out.append(bool(base.__dict__.get("__record_frozen__")))
        elif isinstance(base.__dict__.get("__dataclass_fields__"), dict):
            out.append(bool(base.__dict__["__dataclass_params__"].frozen))
    return out


def _record(frozen: bool) -> Callable[[type], type]:
    def wrap(cls: type) -> type:
        bases = _frozen_bases(cls)  # dataclass's rule: frozen and non-frozen classes never inherit each other
        if bases and any(bases) and not frozen:
            raise TypeError("cannot inherit non-frozen dataclass from a frozen one")
        if bases and not any(bases) and frozen:
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
        every = _collect(cls)
        names = tuple(n for n, f in every.items() if f.init)
        known = frozenset(names)
        fill: Tuple[Tuple[str, Any, Any, bool], ...] = tuple(
            (f.name, f.default, f.default_factory, f.init) for f in every.values())
        shown = tuple(n for n, f in every.items() if f.repr)
        compared = tuple(n for n, f in every.items() if f.compare)
        hashed = tuple(n for n, f in every.items() if (f.compare if f.hash is None else f.hash))
        post_init = getattr(cls, "__post_init__", None)
        qualname = cls.__qualname__

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if len(args) > len(names):
                raise TypeError(f"{qualname}.__init__() takes {len(names) + 1} positional arguments "
                                f"but {len(args) + 1} were given")
            given: Dict[str, Any] = dict(zip(names, args))
            for key, value in kwargs.items():
                if key not in known:
                    raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {key!r}")
                if key in given:
                    raise TypeError(f"{qualname}.__init__() got multiple values for argument {key!r}")
                given[key] = value
            values = {}  # in field order, as dataclass's own __init__ sets them
            for name, default, factory, init in fill:
                if name in given:
                    values[name] = given[name]
                elif default is not _MISSING:
                    values[name] = default
                elif factory is not _MISSING:
                    values[name] = factory()
                elif init:
                    raise TypeError(f"{qualname}.__init__() missing 1 required positional argument: {name!r}")
            self.__dict__.update(values)
            if post_init is not None:
                post_init(self)

        def __repr__(self: Any) -> str:
            return f"{type(self).__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"

        def __eq__(self: Any, other: object) -> Any:
            if other.__class__ is self.__class__:
                return tuple(getattr(self, n) for n in compared) == tuple(getattr(other, n) for n in compared)
            return NotImplemented

        def __hash__(self: Any) -> int:
            return hash(tuple(getattr(self, n) for n in hashed))

        own = cls.__dict__
        own_hash = own.get("__hash__", _MISSING)
        explicit_hash = not (own_hash is _MISSING or (own_hash is None and "__eq__" in own))
        methods: Dict[str, Any] = {"__init__": __init__, "__repr__": __repr__, "__eq__": __eq__}
        if frozen:
            methods.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
        if not explicit_hash:  # eq with frozen: hashable by its fields; without: unhashable (as dataclass)
            methods["__hash__"] = __hash__ if frozen else None
        for name, fn in methods.items():
            if name in own and name != "__hash__":
                continue  # the class's own method wins, as with dataclass
            if fn is not None:
                fn.__qualname__ = f"{qualname}.{name}"
            setattr(cls, name, fn)
        setattr(cls, "__match_args__", names)  # noqa: B010 (a class attribute mypy would refuse)
        setattr(cls, "__record_fields__", every)  # noqa: B010
        setattr(cls, "__record_frozen__", frozen)  # noqa: B010
        # dataclasses' view of the class, made when something asks (dataclasses.fields, replace…)
        for name, make in (("__dataclass_fields__", _dataclass_fields), ("__dataclass_params__", _dataclass_params)):
            setattr(cls, name, _Lazy(cls, name, make))
        return cls

    return wrap


class _Lazy:
    """A class attribute computed (importing dataclasses) on first access, then stored in its place."""

    def __init__(self, owner: type, name: str, make: Callable[[type], Any]) -> None:
        self.owner, self.name, self.make = owner, name, make

    def __get__(self, instance: Any, cls: Any = None) -> Any:
        value = self.make(self.owner)
        setattr(self.owner, self.name, value)
        return value


def _dataclass_fields(cls: type) -> Dict[str, Any]:
    """``cls.__dataclass_fields__``: the record's fields as ``dataclasses.Field`` objects."""
    import dataclasses

    make: Any = dataclasses.field  # called with MISSING for what a field has not (typed as literals)
    missing = dataclasses.MISSING
    out = {}
    for f in cls.__dict__["__record_fields__"].values():
        df: Any = make(default=missing if f.default is _MISSING else f.default,
                       default_factory=missing if f.default_factory is _MISSING else f.default_factory,
                       init=f.init, repr=f.repr, hash=f.hash, compare=f.compare, metadata=f.metadata)
        df.name, df.type = f.name, f.type
        if hasattr(df, "kw_only"):  # Python ≥ 3.10: what @dataclass sets for a positional field
            df.kw_only = False
        df._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what dataclasses.fields() keeps
        out[f.name] = df
    return out


def _dataclass_params(cls: type) -> Any:
    """``cls.__dataclass_params__``: those of ``@dataclass(init=False, repr=False, eq=False, frozen=…)`` (the
    methods are the record's own; frozen as the record is, so a dataclass subclassing a record is held to
    dataclass's frozen rule: a frozen record takes a frozen dataclass, a plain one a plain one)."""
    import dataclasses

    frozen = bool(cls.__dict__.get("__record_frozen__"))
    probe: Any = dataclasses.dataclass(init=False, repr=False, eq=False, frozen=frozen)(type("_", (), {}))
    return probe.__dataclass_params__


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    from dataclasses import FrozenInstanceError  # only when it is raised

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot delete field {name!r}")


def is_record(obj: Any) -> bool:
    """Whether ``obj`` is a record class or instance."""
    return hasattr(obj if isinstance(obj, type) else type(obj), "__record_fields__")


def _fields(obj: Any) -> Tuple[Any, ...]:
    """:func:`dataclasses.fields` (a record's without importing dataclasses)."""
    own = getattr(obj if isinstance(obj, type) else type(obj), "__record_fields__", None)
    if own is None:
        import dataclasses

        return dataclasses.fields(obj)
    return tuple(own.values())


def _replace(obj: Any, /, **changes: Any) -> Any:
    """:func:`dataclasses.replace` (a record's without importing dataclasses)."""
    own = getattr(type(obj), "__record_fields__", None)
    if own is None or isinstance(obj, type):
        import dataclasses

        return dataclasses.replace(obj, **changes)
    for f in own.values():
        if not f.init:
            if f.name in changes:
                raise ValueError(f"field {f.name} is declared with init=False, it cannot be specified with replace()")
            continue
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


_ATOMS = (str, int, float, bool, type(None), bytes, complex)


def _asdict(obj: Any, *, dict_factory: Callable[[Any], Any] = dict) -> Any:
    """:func:`dataclasses.asdict` (records without importing dataclasses; values copied as there)."""
    if getattr(type(obj), "__record_fields__", None) is None or isinstance(obj, type):
        import dataclasses

        return dataclasses.asdict(obj, dict_factory=dict_factory)
    return _asdict_inner(obj, dict_factory)


def _asdict_inner(obj: Any, dict_factory: Callable[[Any], Any]) -> Any:
    if type(obj) in _ATOMS:
        return obj
    own = getattr(type(obj), "__record_fields__", None)
    if own is not None:
        return dict_factory([(n, _asdict_inner(getattr(obj, n), dict_factory)) for n in own])
    if hasattr(type(obj), "__dataclass_fields__"):
        import dataclasses

        return dataclasses.asdict(obj, dict_factory=dict_factory)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
        return type(obj)(*[_asdict_inner(v, dict_factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_asdict_inner(v, dict_factory) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((_asdict_inner(k, dict_factory), _asdict_inner(v, dict_factory)) for k, v in obj.items())
    import copy

    return copy.deepcopy(obj)


if TYPE_CHECKING:  # type checkers: exactly dataclasses
    from dataclasses import asdict, field, fields, replace
    from dataclasses import dataclass as record
else:
    field, fields, replace, asdict = _field, _fields, _replace, _asdict

    def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
        """``@record`` / ``@record(frozen=True)``: see the module docstring."""
        wrap = _record(frozen)
        return wrap if cls is None else wrap(cls)
