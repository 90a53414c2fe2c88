"""Does a lock still resolve against the current matrix? (``envcheck lock check``, the
``envcheck-lock-check`` pre-commit hook.)

The lock's machine and request are resolved again (the resolver, one answer everywhere) and the
locked build — torch, variant, Python — is looked up among the candidates:

* ``ok``: it is still the build the resolver chooses;
* ``outdated``: it still fits, but the resolver now chooses another (a newer release, a better
  build): a warning (``--strict`` fails on it);
* ``broken``: the matrix no longer accepts it (the reasons are given) or no longer has it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List

from envcheck.errors import DataFileError

__all__ = ["LockStatus", "check_lock"]


@dataclass
class LockStatus:
    path: str
    status: str  # ok | outdated | broken
    locked: str
    chosen: str = ""
    reasons: List[str] = field(default_factory=list)

    @property
    def message(self) -> str:
        if self.status == "ok":
            return f"{self.path}: {self.locked} still resolves (the resolver's choice)"
        if self.status == "outdated":
            return (f"{self.path}: {self.locked} still fits, but the matrix now chooses {self.chosen}: "
                    "re-run `envcheck plan` to update the lock")
        why = "; ".join(self.reasons) or "no such build on record"
        return f"{self.path}: {self.locked} no longer resolves: {why}"


def check_lock(path: Path, matrix: Any) -> LockStatus:
    """Resolve ``path``'s machine and request again and place the locked build.

    Raises:
        DataFileError: not a lock file, or one without a ``[machine]`` to resolve for (exit 2).
    """
    from dataclasses import replace

    from envcheck.resolve import Request, resolve
    from envcheck.lock import load_lock

    lock = load_lock(path)
    if lock.machine is None:
        raise DataFileError(path, "machine", "no [machine] table: the lock cannot be resolved again")
    req = lock.request
    torch_text = str(req.get("torch", "") or "")
    torch_text = "" if torch_text == "*" else torch_text
    request = Request(torch=Request.parse_torch(torch_text) if torch_text else None, torch_text=torch_text,
                      backend=Request.parse_backend(str(req.get("backend", "auto"))),
                      compile=bool(req.get("compile", False)))
    python = str(getattr(lock.expect, "python", "") or "")
    machine = replace(lock.machine, python=python) if python and not lock.machine.python else lock.machine
    res = resolve(machine, request, matrix)
    locked = f"torch {lock.torch}+{lock.variant}" + (f" (Python {python})" if python else "")
    mine = [c for c in res.candidates if c.release.version == lock.torch and c.build.variant == lock.variant
            and (not python or c.python == python)]
    if not mine:
        return LockStatus(str(path), "broken", locked, reasons=[f"torch {lock.torch} {lock.variant} is not in the "
                                                                f"matrix for {machine.platform}"])
    ok = [c for c in mine if c.accepted]
    if not ok:
        return LockStatus(str(path), "broken", locked,
                          reasons=sorted({r.message for c in mine for r in c.reasons}))
    ch = res.chosen
    if ch is None:  # unreachable: an accepted candidate exists
        return LockStatus(str(path), "ok", locked)
    chosen = f"torch {ch.release.version}+{ch.build.variant}" + (f" (Python {ch.python})" if ch.python else "")
    if ch.release.version == lock.torch and ch.build.variant == lock.variant:
        return LockStatus(str(path), "ok", locked, chosen)
    return LockStatus(str(path), "outdated", locked, chosen)
