"""``@record``: a data class that costs (almost) nothing to define.

``dataclasses.dataclass`` writes the source of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__`` and ``__delattr__`` for each class and compiles it with ``exec`` — about a
millisecond a class, paid on every start. envcheck defines ~50 of them on the way to a plan (the
matrix rows alone are ~30), which was the largest single cost of starting ``envcheck plan``.

``@record`` lets :mod:`dataclasses` do the field bookkeeping (so :func:`dataclasses.fields`,
:func:`~dataclasses.replace`, :func:`~dataclasses.asdict` and ``is_dataclass`` work as before) but
asks it for no generated methods, and gives the class shared, generic ones with the same behaviour:
keyword or positional arguments in field order, defaults and ``default_factory``, ``__post_init__``,
``repr``/``compare``/``hash`` flags of fields, frozen instances. Type checkers see a plain
``@dataclass`` (the module's ``TYPE_CHECKING`` branch), which is what it behaves as.

Use it for classes defined on every start; a class whose instances are made by the thousand in a
hot loop is faster with dataclass's generated ``__init__``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Dict, Tuple

__all__ = ["record"]

_MISSING: Any = dataclasses.MISSING


def _record(frozen: bool) -> Callable[[type], type]:
    def wrap(cls: type) -> type:
        # the fields, their defaults and flags, and __dataclass_fields__ — no generated code
        dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
        every = dataclasses.fields(cls)  # type: ignore[arg-type]
        names = tuple(f.name for f in every if f.init)
        known = frozenset(names)
        fill: Tuple[Tuple[str, Any, Any, bool], ...] = tuple(
            (f.name, f.default, f.default_factory, f.init) for f in every)
        shown = tuple(f.name for f in every if f.repr)
        compared = tuple(f.name for f in every if f.compare)
        hashed = tuple(f.name for f in every if (f.compare if f.hash is None else f.hash))
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
        # __dataclass_params__ stays dataclass's (init/repr/eq/frozen False): a record's subclasses are
        # records too (a @dataclass(frozen=True) subclass would refuse a base it sees as not frozen)
        return cls

    return wrap


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


if TYPE_CHECKING:  # type checkers: exactly a dataclass
    from dataclasses import dataclass as record
else:
    def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
        """``@record`` / ``@record(frozen=True)``: see the module docstring."""
        wrap = _record(frozen)
        return wrap if cls is None else wrap(cls)

