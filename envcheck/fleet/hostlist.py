"""Node lists the way Slurm writes them: ``gpu001 … gpu017, gpu020`` → ``gpu[001-017,020]``."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Tuple

_NUM = re.compile(r"^(.*?)(\d+)$")


@lru_cache(maxsize=65536)
def _split(name: str) -> Optional[Tuple[str, int, int]]:
    """``gpu017`` → ``("gpu", 3, 17)`` (prefix, digits, number); ``None`` without trailing digits."""
    m = _NUM.match(name)
    if not m or "[" in name:
        return None
    return m.group(1), len(m.group(2)), int(m.group(2))


def compress(names: Iterable[str]) -> str:
    """Compress host names into Slurm hostlist syntax.

    Names that end in digits are grouped by their prefix and the number of digits (so padding is
    kept: ``gpu009,gpu010`` → ``gpu[009-010]``); runs of consecutive numbers become ranges. Other
    names are listed as they are. Groups appear in sorted order.

    >>> compress(["gpu001", "gpu002", "gpu003", "gpu020", "login"])
    'gpu[001-003,020],login'
    """
    groups: Dict[Tuple[str, int], List[int]] = {}
    plain: List[str] = []
    for name in set(names):
        parts_ = _split(name)
        if parts_:
            groups.setdefault(parts_[:2], []).append(parts_[2])
        else:
            plain.append(name)
    parts: List[Tuple[str, str]] = [(p, p) for p in plain]
    for (prefix, width), nums in groups.items():
        nums.sort()
        if len(nums) == 1:
            parts.append((prefix + f"{nums[0]:0{width}d}", f"{prefix}{nums[0]:0{width}d}"))
            continue
        ranges: List[str] = []
        start = prev = nums[0]
        for n in nums[1:] + [None]:  # type: ignore[list-item]
            if n is not None and n == prev + 1:
                prev = n
                continue
            ranges.append(f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}")
            if n is not None:
                start = prev = n
        parts.append((prefix + f"{nums[0]:0{width}d}", f"{prefix}[{','.join(ranges)}]"))
    return ",".join(text for _, text in sorted(parts))


#: The most names a hostlist may stand for (a typo like ``gpu[0-99999999]`` would otherwise take
#: the login node's memory): ten times the largest Slurm clusters' node counts.
MAX_HOSTS = 100_000


def _parts(text: str) -> List[str]:
    """Split a hostlist at its top-level commas (a comma inside brackets is part of a range list).

    Raises:
        ValueError: unbalanced or nested brackets.
    """
    parts, cur, depth = [], "", 0
    for ch in text:
        if ch == "[":
            if depth:
                raise ValueError(f"nested brackets in {text!r}")
            depth = 1
        elif ch == "]":
            if not depth:
                raise ValueError(f"a ']' without its '[' in {text!r}")
            depth = 0
        elif ch == "," and not depth:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    if depth:
        raise ValueError(f"an unclosed '[' in {text!r}")
    return parts + [cur]


def _ranges(body: str, part: str) -> List[Tuple[int, int, int]]:
    """``"001-003,020"`` → ``[(1, 3, 3), (20, 20, 3)]`` (low, high, digits).

    Raises:
        ValueError: an item that is not a number or a range, or a range that runs backwards.
    """
    out = []
    for item in body.split(","):
        lo, _, hi = item.partition("-")
        if not lo.isdigit() or not lo.isascii() or (hi and not (hi.isdigit() and hi.isascii())) or item.count("-") > 1:
            raise ValueError(f"not a number range: {item!r} in {part!r}")
        a, b = int(lo), int(hi or lo)
        if b < a:
            raise ValueError(f"range runs backwards: {item!r}")
        out.append((a, b, len(lo)))
    return out


def expand(text: str, limit: int = MAX_HOSTS) -> List[str]:
    """Slurm's hostlist expansion (``scontrol show hostnames``): ``gpu[001-003,020],login``; a
    name with several bracket groups stands for their product (``rack[1-2]-node[01-02]`` → 4
    names). Repeated names are kept once, in first-seen order.

    Raises:
        ValueError: unbalanced or nested brackets, an item that is not a number range, a range that
            runs backwards, or more than ``limit`` names (counted before any is made).
    """
    import itertools

    plans: List[List[List[str]]] = []  # per part: the choices of each piece (a literal: one), in order
    total = 0
    for part in _parts(text):
        if not part:
            continue
        pieces = re.split(r"\[([^\]]*)\]", part)  # literal, body, literal, body, …, literal
        groups = [(i % 2 == 1, piece) for i, piece in enumerate(pieces) if piece or i % 2]
        ranges = {i: _ranges(piece, part) for i, (is_range, piece) in enumerate(groups) if is_range}
        size = 1
        for rs in ranges.values():
            size *= sum(b - a + 1 for a, b, _ in rs)
        total += size
        if total > limit:  # counted before a single name is made
            raise ValueError(f"stands for more than {limit} names (a range too wide?)")
        plans.append([[f"{n:0{w}d}" for a, b, w in ranges[i] for n in range(a, b + 1)] if i in ranges else [piece]
                      for i, (_, piece) in enumerate(groups)])
    out: Dict[str, None] = {}
    for choices in plans:
        for combo in itertools.product(*choices):
            out["".join(combo)] = None
    return list(out)
