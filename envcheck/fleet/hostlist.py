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


def expand(text: str) -> List[str]:
    """The inverse of :func:`compress` for one level of brackets: ``gpu[001-003,020],login``.

    Raises:
        ValueError: unbalanced brackets or a range that runs backwards.
    """
    out: List[str] = []
    for part in re.findall(r"[^,\[]*(?:\[[^\]]*\])?[^,\[]*", text):
        if not part:
            continue
        m = re.match(r"^(.*)\[([^\]]*)\](.*)$", part)
        if not m:
            if "[" in part or "]" in part:
                raise ValueError(f"unbalanced brackets in {part!r}")
            out.append(part)
            continue
        prefix, body, suffix = m.groups()
        for item in body.split(","):
            lo, _, hi = item.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                raise ValueError(f"not a number range: {item!r} in {part!r}")
            a, b = int(lo), int(hi or lo)
            if b < a:
                raise ValueError(f"range runs backwards: {item!r}")
            out.extend(f"{prefix}{n:0{len(lo)}d}{suffix}" for n in range(a, b + 1))
    return out
