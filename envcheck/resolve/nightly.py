"""Nightly versions (``--torch 2.7.0.dev20250310``): planned from PyTorch's nightly index with the
facts of the nearest release on record, and said so.

A nightly X.Y.Z.devYYYYMMDD precedes release X.Y.Z: its variants, kernel lists and Pythons are taken
from that release's download.pytorch.org builds (else the newest release of X.Y, else the newest
release), every candidate is ``unverified`` (its caveat names the release whose facts it borrows),
and companions are left unpinned (each night has its own torchvision/torchaudio dev builds).
"""

from __future__ import annotations

from envcheck.record import replace
from typing import List, Optional

from envcheck.machine.model import Machine
from envcheck.matrix import Matrix
from envcheck.matrix.model import Release, vkey
from envcheck.resolve.types import Candidate


def base_release(matrix: Matrix, dev: str) -> Optional[Release]:
    """The release whose facts a nightly borrows."""
    public = dev.split(".dev")[0]
    if public in matrix.release_by_version:
        return matrix.release_by_version[public]
    mm = vkey(public).release[:2]
    same = [r for r in matrix.releases if vkey(r.version).release[:2] == mm]
    return same[0] if same else (matrix.releases[0] if matrix.releases else None)


def nightly_candidates(matrix: Matrix, machine: Machine, dev: str) -> List[Candidate]:
    """One candidate per (download.pytorch.org build of the base release × Python), on the nightly channel."""
    from envcheck.resolve import enumerate_candidates

    base = base_release(matrix, dev)
    if base is None:
        return []
    rel = replace(base, version=dev, torchvision="", torchaudio="", confidence="unverified",
                  note=f"nightly {dev}: facts of torch {base.version}")
    out = []
    for c in enumerate_candidates(matrix, machine):
        b = c.build
        if c.release.version != base.version or b.channel != "pytorch" or b.tegra or b.wsl:
            continue
        label = f"{dev}+{b.variant}" if b.local_label else dev
        build = replace(b, channel="nightly", torch=(dev,), pins={"torch": label}, confidence="unverified",
                        note=f"nightly {dev} from PyTorch's nightly index, planned with the kernel list, toolkit and "
                             f"Pythons of torch {base.version}+{b.variant} (not read from the nightly wheel); "
                             "nightlies are not release-tested and old ones are pruned — keep the wheel file")
        n = Candidate(rel, build, c.python)
        out.append(n)
    return out
