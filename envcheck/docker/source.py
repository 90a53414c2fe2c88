"""Where an image's plan comes from: a lock file (the plan it records, resolved again from its
machine and its exact build), or the lock an image carries in its ``io.envcheck.lock`` label."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from envcheck.errors import DataFileError, UsageError

LOCK_LABEL = "io.envcheck.lock"


def plan_for_lock(lock: Any, matrix: Any) -> Any:
    """The Plan a :class:`~envcheck.lock.Lock` records: its machine, its exact torch
    release and variant, and its index (a mirror in the lock is kept).

    Raises:
        UsageError: the lock has no machine, or the matrix no longer gives its build (exit 2).
    """
    from envcheck.resolve import Request, resolve
    from envcheck.resolve.plan import make_plan

    if lock.machine is None:
        raise DataFileError(lock.path, "machine", "missing: the lock names no machine to plan for")
    request = Request(torch=Request.parse_torch(f"=={lock.torch}"), torch_text=lock.torch,
                      backend=Request.parse_backend(lock.variant))
    res = resolve(lock.machine, request, matrix)
    plan = make_plan(res, matrix)
    if plan is None:
        why = "; ".join(r.message for c in res.candidates[:1] for r in c.reasons) or "no candidate"
        raise UsageError(f"{lock.path}: torch {lock.torch} ({lock.variant}) no longer fits the machine the lock "
                         f"records ({why}); plan again with `envcheck plan`")
    if lock.index_url and plan.index_url != lock.index_url:
        plan = make_plan(res, matrix, [(plan.index_url, lock.index_url)])
    return locked_pins(plan, lock, matrix)


def locked_pins(plan: Any, lock: Any, matrix: Any) -> Any:
    """``plan`` with exactly the pins ``lock`` records (``torch==…`` lines): a lock made with
    ``--packages torch`` pins torch alone, and an image built from it must not get companions the
    matrix pairs today (newcomer M3). The recipe is rebuilt for those pins."""
    import dataclasses

    from envcheck.resolve.recipe import build_recipe

    from packaging.requirements import Requirement

    pins = {}
    for line in lock.pins:
        req = line.split(";", 1)[0].split()[0]  # drop a marker / --hash
        name, _, version = req.partition("==")
        pins[name.strip()] = version.strip()
    # its ranges too (numpy<2): exactly what the lock installs, none the matrix adds today
    ranges = {r.name: str(r.specifier) for r in (Requirement(ln.split(";", 1)[0].split()[0])
                                                 for ln in lock.requirements if "==" not in ln)}
    if not pins or (pins == plan.pins and ranges == plan.requires):
        return plan
    out = dataclasses.replace(plan, pins=pins or plan.pins, requires=ranges)
    out.recipe = build_recipe(out, matrix, plan.resolution.request.compile, plan.steps)
    return out


def plan_from_lock_file(path: Path, matrix: Any) -> Any:
    """:func:`plan_for_lock` of ``envcheck.lock.toml`` at ``path``.

    Raises:
        DataFileError: a malformed lock (exit 2); UsageError: see :func:`plan_for_lock`.
    """
    from envcheck.lock import load_lock

    return plan_for_lock(load_lock(Path(path)), matrix)


def lock_from_image(image: Any) -> Optional[Any]:
    """The Lock in an image's ``io.envcheck.lock`` label (images from ``envcheck docker build``),
    or ``None`` when the image has none.

    Raises:
        DataFileError: the label is there but is not a lock document.
    """
    from envcheck.lock import lock_from_dict

    text = (image.labels or {}).get(LOCK_LABEL)
    if not text:
        return None
    where = f"{(image.tags or [image.id])[0]} label {LOCK_LABEL}"
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise DataFileError(where, "", f"not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise DataFileError(where, "", "expected a JSON object")
    return lock_from_dict(doc, where)


def run_flags_for(lock: Optional[Any], matrix: Any) -> tuple[list, str]:
    """The ``docker run`` flags the lock's build needs (its ``[[base_image]]`` row's ``run_flags``)
    and a sentence saying where they came from."""
    if lock is None:
        return [], "no lock (neither --lock nor an io.envcheck.lock label): no device flags"
    try:
        plan = plan_for_lock(lock, matrix)
    except UsageError as exc:
        return [], f"the lock's build could not be planned again, so no device flags: {exc}"
    row = plan.base_image
    if row is None:
        return [], f"no base image on record for the {plan.build.backend} backend: no device flags"
    return list(row.run_flags), f"the {row.backend} base image's run flags (matrices/docker.toml)"
