"""Versions for comparison: :func:`vkey`, PEP 440's order as :mod:`packaging` defines it — without
importing packaging for the plain dotted numbers (``"12.8.0"``, ``"570.124.06"``, ``"2.28"``) that
make up almost every version in the matrix and in a plan's comparisons.

packaging is the parser of record: any text that is not ASCII digits and dots (``"2.6.0a0"``,
``"1!2.0"``, ``"2.7.1+cu128"``, ``" v1.0 "``) is parsed by :class:`packaging.version.Version`, and the
key is made from its public fields (epoch, release, pre, post, dev, local) in packaging's own order
(its ``_cmpkey``, with its ±infinity written as flags so that the key is plain tuples). For plain
digits and dots the release tuple is all there is. Importing packaging.version (and typing, which it
imports) is ~7 ms of a plan's ~70 (#9). ``tests/matrix/test_version_key.py`` holds the order, the
equality and ``.release`` to packaging's over every version in the matrix and generated forms.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional, Tuple, Union

    Key = Tuple[object, ...]


class VersionKey:
    """A parsed version, ordered and compared as :class:`packaging.version.Version` orders them;
    ``release`` is packaging's (``(12, 8, 0)`` for ``"12.8.0"``)."""

    __slots__ = ("text", "release", "_key")

    def __init__(self, text: str, release: Tuple[int, ...], key: Key) -> None:
        self.text, self.release, self._key = text, release, key

    def __repr__(self) -> str:
        return f"<Version({self.text!r})>"

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return self._key == other._key if isinstance(other, VersionKey) else NotImplemented

    def __ne__(self, other: object) -> bool:
        return self._key != other._key if isinstance(other, VersionKey) else NotImplemented

    def __lt__(self, other: VersionKey) -> bool:
        return self._key < other._key if isinstance(other, VersionKey) else NotImplemented

    def __le__(self, other: VersionKey) -> bool:
        return self._key <= other._key if isinstance(other, VersionKey) else NotImplemented

    def __gt__(self, other: VersionKey) -> bool:
        return self._key > other._key if isinstance(other, VersionKey) else NotImplemented

    def __ge__(self, other: VersionKey) -> bool:
        return self._key >= other._key if isinstance(other, VersionKey) else NotImplemented


def _order(epoch: int, release: Tuple[int, ...], pre: Optional[Tuple[str, int]], post: Optional[int],
           dev: Optional[int], local: Tuple[Union[int, str], ...]) -> Key:
    """packaging.version._cmpkey: trailing zeros of the release dropped; no pre-release sorts after
    any (but a bare .devN before them); no post-release before any; no dev-release after any; no
    local label before any, and in a label, text parts before numbers."""
    rel = list(release)
    while rel and rel[-1] == 0:
        rel.pop()
    if pre is None:
        pre_k: Key = (-1,) if post is None and dev is not None else (1,)
    else:
        pre_k = (0, pre[0], pre[1])
    post_k: Key = (-1,) if post is None else (0, post)
    dev_k: Key = (1,) if dev is None else (0, dev)
    local_k = tuple((1, p, "") if isinstance(p, int) else (0, 0, p) for p in local)
    return (epoch, tuple(rel), pre_k, post_k, dev_k, local_k)


def parse(text: str) -> VersionKey:
    """``text`` as a :class:`VersionKey`.

    Raises:
        ValueError: the text is not a PEP 440 version (e.g. ``"570.x"``).
    """
    parts = text.split(".")
    if all(p.isascii() and p.isdigit() for p in parts):  # plain digits and dots ("" fails isdigit)
        release = tuple(int(p) for p in parts)
        return VersionKey(text, release, _order(0, release, None, None, None, ()))
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(text)
    except InvalidVersion as exc:
        raise ValueError(f"not a version: {text!r}") from exc
    local = tuple(int(p) if p.isdigit() else p for p in v.local.split(".")) if v.local is not None else ()
    return VersionKey(text, v.release, _order(v.epoch, v.release, v.pre, v.post, v.dev, local))
