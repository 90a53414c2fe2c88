"""``envcheck plan … --download DIR``: every wheel of the plan (torch, companions and their
dependencies) in ``DIR/wheels``, and the recipe beside it (install.sh, requirements.txt,
Dockerfile, envcheck.lock.toml) installing from that folder with ``--no-index`` — carry ``DIR`` to
an air-gapped machine and run ``bash install.sh`` there.

The wheels are fetched with ``pip download`` for the *target's* Python and platform
(:mod:`envcheck.docker.wheelhouse`), from the plan's index (after ``--mirror``) and pip's own
configuration for the rest.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable, List, Optional

from envcheck.errors import UsageError

WHEELS = "wheels"
#: manylinux floor assumed for dependencies when the target's glibc is not given: the newest tag
#: torch's own Linux wheels use (manylinux_2_28), so every file downloaded installs there.
DEFAULT_GLIBC = "2.28"


def download_plan(plan: Any, matrix: Any, directory: Path, force: bool = False,
                  say: Callable[[str], None] = lambda s: None, timeout: Optional[float] = None) -> List[str]:
    """Fill ``directory/wheels`` and write the offline recipe files; returns the files written.

    Raises:
        UsageError: a non-Linux target (pip's cross-platform download is done for Linux tags
            only here), or ``directory`` holds files and ``force`` is false.
        WheelhouseError: pip could not fetch the wheels. Then, as after any failure or
            interruption, the folders and wheels this call made are removed again (a ``directory``
            that did not exist is gone); what was there before stays.
    """
    from envcheck.fsutil import existing_kind, shown, undo_on_failure

    m = plan.machine
    if m.os != "linux":
        raise UsageError(f"--download: only Linux targets for now (this plan is for {m.platform}); "
                         "pip download --platform with the wheel tags of that OS does the same by hand")
    directory = Path(directory)
    names = ["install.sh", "requirements.txt", "envcheck.lock.toml"] + (["Dockerfile"] if plan.base_image else [])
    from envcheck.errors import OutputExistsError

    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--download {shown(directory)}: exists and is not a directory")
    existing = [str(directory / n) for n in names if (directory / n).exists()]
    if existing and not force:
        raise OutputExistsError(existing)  # checked before downloading gigabytes
    odd = [f"{shown(directory / n)}: {k}" for n in names for k in [existing_kind(directory / n)] if k not in (None, "file")]
    if odd:  # write_outputs would refuse it after the download: refuse it before
        raise UsageError("--download: refusing to replace what is not a regular file (even with --force): "
                         + "; ".join(odd))
    glibc = m.glibc or DEFAULT_GLIBC
    wheels = directory / WHEELS
    if wheels.is_dir() and any(wheels.glob("*.whl")) and not force:
        say(f"{shown(wheels)} already holds wheels: checking them")
    with undo_on_failure(wheels):  # a failed or interrupted download leaves no folder or wheel it made
        return _download(plan, matrix, directory, wheels, glibc, force, say, timeout)


def _download(plan: Any, matrix: Any, directory: Path, wheels: Path, glibc: str, force: bool,
              say: Callable[[str], None], timeout: Optional[float]) -> List[str]:
    from envcheck.docker.wheelhouse import prepare
    from envcheck.render import render
    from envcheck.render.write import write_outputs
    from envcheck.resolve.recipe import build_recipe

    house = prepare(plan, wheels, dict(plan.pins), glibc, say, timeout=timeout, flag="--download")
    offline = dataclasses.replace(plan, pins=dict(house.pins), requires=dict(house.requires), offline=WHEELS, hashes={},
                                  notes=list(plan.notes) + list(house.notes)
                                  + [f"offline: every wheel is in {WHEELS}/ ({house.origin}); install with "
                                     f"--no-index --find-links {WHEELS}"])
    offline.recipe = build_recipe(offline, matrix, plan.resolution.request.compile, plan.steps)
    formats = ["script", "pip", "lock"] + (["docker"] if plan.base_image is not None else [])
    files = render(offline, formats)
    return write_outputs(directory, files, force) + [str(wheels)]
