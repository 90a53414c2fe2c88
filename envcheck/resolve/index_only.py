"""Builds the wheel index has but the sourced facts do not cover yet (``envcheck matrix update``).

They are listed as candidates and rejected with code ``unverified`` — envcheck does not guess a
kernel list, cuDNN or Python support it has no source for. Costs nothing when no generated index
data exists (``matrices/generated-index-*.toml``).
"""

from __future__ import annotations


from envcheck.machine.model import Machine
from envcheck.matrix import Matrix
from envcheck.matrix.model import Build, Release
from envcheck.resolve.types import Candidate

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import List

_CODES = ("release", "no-build")


def index_only_candidates(matrix: Matrix, machine: Machine) -> List[Candidate]:
    """One rejected candidate per (release, variant) the index serves on the machine's platform
    with no ``[[release]]``/``[[build]]`` row."""
    if not matrix.index_wheels:
        return []
    from envcheck.matrix.index.status import gaps

    out: List[Candidate] = []
    for channel in sorted({w.channel for w in matrix.index_wheels}):
        for g in gaps(matrix, channel):
            if g.code not in _CODES or g.platform != machine.platform:
                continue
            rel = matrix.release_by_version.get(g.torch) or Release(
                version=g.torch, python={g.platform: g.pythons}, source=("derived:generated index",),
                confidence="unverified")
            build = Build(torch=(g.torch,), variant=g.variant or "", channel=channel,
                          platforms=(g.platform,), wheel_tag={g.platform: ""}, python=g.pythons or None,
                          source=("derived:generated index",), confidence="unverified")
            c = Candidate(rel, build, machine.python)
            c.add("unverified", f"torch {g.torch}{'+' + g.variant if g.variant else ''} is on the index "
                                f"({channel}) but has no sourced facts yet ({g.message}); envcheck does not "
                                "guess — `envcheck matrix status` lists such gaps")
            out.append(c)
    return out
