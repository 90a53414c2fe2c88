"""``envcheck docker build``: a plan → a build context → an image, through the docker SDK.

The Dockerfile is the one ``envcheck plan`` renders (``dockerfiles/*.Dockerfile.in``); with a
wheelhouse its install step is ``COPY wheelhouse`` + ``pip install --no-index --find-links``. The
image is tagged with what it holds: the template's labels (torch, variant, Python) plus
``io.envcheck.lock`` — the lock document of exactly what was installed, which ``envcheck docker
verify`` reads when no ``--lock`` is given — and the base image and wheel origin.

A failed build leaves nothing behind: intermediate containers are removed (``forcerm``), and the
intermediate images the build made (the ``---> id`` of each finished step that did not exist
before) are removed too, unless ``keep``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Set

from envcheck.docker.engine import DockerError, engine_errors, short_error
from envcheck.docker.source import LOCK_LABEL
from envcheck.errors import UsageError

#: Seconds a build may run (pip unpacks a CUDA build's ~3 GB of wheels inside it).
BUILD_TIMEOUT = 3600
CONTEXT_WHEELHOUSE = "wheelhouse"  # the folder inside the build context

Say = Callable[[str], None]


def base_row(plan: Any, matrix: Any, image: Optional[str]) -> Any:
    """The ``[[base_image]]`` row to build on: the plan's, or for ``--base-image IMAGE`` the row
    whose ``image`` is IMAGE (matrices/docker.toml knows its glibc and Python), else the plan's row
    with IMAGE in its FROM line (its glibc then assumed to be the row's).

    Raises:
        UsageError: the plan's backend has no base image on record.
    """
    row = plan.base_image
    if row is None:
        raise UsageError(getattr(plan, "base_image_why", "")
                         or f"no Docker base image on record for the {plan.build.backend} backend (matrices/docker.toml)")
    if not image:
        return row
    from envcheck.edge import check_image
    from envcheck.resolve.plan import image_python, python_unserved

    check_image(image, "--base-image")  # it lands in the FROM line: the OCI grammar, one line
    known = [r for r in matrix.base_images if r.image == image and r.template == row.template]
    why = python_unserved(matrix, known[0], plan.python) if known else ""
    if why:  # the plan's wheels would not install there
        raise UsageError(f"--base-image {image}: {why}: the plan's wheels are for Python {plan.python} "
                         f"(plan with --python {image_python(matrix, known[0]) or 'X.Y'})")
    return known[0] if known else dataclasses.replace(row, image=image)


def image_plan(plan: Any, pins: Dict[str, str], row: Any, requires: Optional[Dict[str, str]] = None) -> Any:
    """The plan as the image holds it: only ``pins`` (and the ranges ``requires``, default the
    plan's: ``{"numpy": "<2"}``), on ``row``."""
    return dataclasses.replace(plan, pins=dict(pins), base_image=row,
                               requires=dict(plan.requires if requires is None else requires))


def default_tag(pins: Dict[str, str]) -> str:
    """``envcheck/torch:2.13.0-cpu`` (the tag the rendered Dockerfile suggests)."""
    return re.sub(r"[^a-zA-Z0-9_.:/-]", "-", f"envcheck/torch:{pins['torch'].replace('+', '-')}")


def from_image(dockerfile: str) -> str:
    """The image of the Dockerfile's ``FROM`` line."""
    m = re.search(r"^FROM\s+(\S+)", dockerfile, re.M)
    return m.group(1) if m else ""


def image_labels(plan: Any, origin: str, base: str) -> Dict[str, str]:
    """Labels beyond the template's: the installed lock document (JSON), base image, wheel origin."""
    from envcheck.lock import lock_document

    doc = lock_document(plan, generated="image build")
    doc.pop("generated", None)  # a fixed label keeps the layer cache across rebuilds
    from envcheck.machine.model import drop_none

    return {LOCK_LABEL: json.dumps(drop_none(doc), sort_keys=True, separators=(",", ":")),
            "io.envcheck.base-image": base, "io.envcheck.wheels": origin}


def make_context(directory: Path, dockerfile: str, wheels: Optional[Path]) -> Path:
    """Write the build context: ``Dockerfile`` and, with ``wheels``, ``wheelhouse/*.whl``
    (hard links when the file system allows, else copies)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "Dockerfile").write_text(dockerfile, encoding="utf-8")
    if wheels is not None:
        dest = directory / CONTEXT_WHEELHOUSE
        dest.mkdir(exist_ok=True)
        for whl in sorted(Path(wheels).glob("*.whl")):
            try:
                os.link(whl, dest / whl.name)
            except OSError:
                shutil.copy2(whl, dest / whl.name)
    return directory


_STEP_ID = re.compile(r"^\s*---> ([0-9a-f]{12})\s*$")


def _image_ids(client: Any) -> Set[str]:
    return {i.split(":", 1)[-1] for i in client.api.images(all=True, quiet=True)}


def build_image(client: Any, context: Path, tag: str, labels: Dict[str, str], say: Say = lambda s: None,
                keep: bool = False, timeout: int = BUILD_TIMEOUT) -> str:
    """Build ``context`` into ``tag``; stream each output line to ``say``; return the image id.

    Raises:
        DockerError: the build failed (the engine's message and the last output lines), or the
            engine went away; what the build made is removed first unless ``keep``.
    """
    with engine_errors(f"building {tag}"):
        before = _image_ids(client)
    made: List[str] = []
    tail: List[str] = []
    image_id = None
    error = None
    try:
        stream = client.api.build(path=str(context), tag=tag, labels=labels, rm=not keep, forcerm=not keep,
                                  decode=True, pull=False, timeout=timeout)
        for chunk in stream:
            if "error" in chunk:
                error = str(chunk.get("error") or chunk.get("errorDetail", {}).get("message", "")).strip()
                continue
            aux = chunk.get("aux")
            if isinstance(aux, dict) and aux.get("ID"):
                image_id = aux["ID"]
            text = chunk.get("stream") or chunk.get("status") or ""
            for line in text.splitlines():
                m = _STEP_ID.match(line)
                if m:
                    made.append(m.group(1))
                if line.strip():
                    tail = (tail + [line.rstrip()])[-8:]
                    say(line.rstrip())
    except KeyboardInterrupt:  # the engine cancels a build whose client went away; our layers go too
        if not keep:
            _remove_new(client, made, before)
        raise
    except Exception as exc:  # the SDK, requests, or the context upload
        import docker
        import requests

        if not isinstance(exc, (docker.errors.DockerException, requests.exceptions.RequestException, OSError)):
            raise
        error = short_error(exc)
    if error is None and not image_id:
        with engine_errors(f"looking up {tag}"):
            image_id = client.images.get(tag).id
    if error is not None:
        removed = [] if keep else _remove_new(client, made, before)
        last = "\n    ".join(tail[-5:])
        note = (f"\n  removed {len(removed)} intermediate image(s) of the failed build" if removed else "") + \
            ("\n  --keep: intermediate containers and images were kept" if keep else "")
        if re.search(r"pull access denied|no such host|failed to resolve|dial tcp|TLS handshake|"
                     r"server misbehaving|manifest unknown|not found: manifest", error, re.I):
            note += ("\n  the base image could not be pulled (no registry reachable?): build a local one "
                     "with `envcheck docker base` and pass --base-image envcheck-base:bookworm, with "
                     "--wheelhouse DIR for the wheels")
        raise DockerError(f"building {tag} failed: {error}" + (f"\n  last output:\n    {last}" if last else "") + note)
    return str(image_id)


def _remove_new(client: Any, short_ids: List[str], before: Set[str]) -> List[str]:
    """Remove the images of ``short_ids`` the build created (not in ``before``), newest first."""
    import docker

    gone = []
    for sid in reversed(short_ids):
        if any(full.startswith(sid) for full in before):
            continue  # a cached layer that existed already
        try:
            client.api.remove_image(sid, noprune=False)
            gone.append(sid)
        except docker.errors.APIError:
            pass  # used by another image now: not ours to remove
    return gone


def remove_image(client: Any, ref: str) -> bool:
    """Remove ``ref`` (tag or id) if it exists; True if it did."""
    import docker

    try:
        client.images.remove(ref, force=True)
        return True
    except docker.errors.ImageNotFound:
        return False


def build_from_plan(client: Any, plan: Any, matrix: Any, tag: Optional[str] = None, base_image: Optional[str] = None,
                    wheelhouse: Any = None, packages: Optional[List[str]] = None, keep: bool = False,
                    say: Say = lambda s: None) -> Dict[str, Any]:
    """Render the plan's Dockerfile, gather the wheels (``wheelhouse``: a folder, or a prepared
    :class:`~envcheck.docker.wheelhouse.Wheelhouse` whose pins are used), build, tag.

    Returns:
        ``{"tag", "id", "base_image", "pins", "wheels", "notes", "seconds", "dockerfile"}``.

    Raises:
        UsageError: bad ``packages``, or no base image for the backend (exit 2).
        WheelhouseError: the wheels could not be had (exit 3).
        DockerError: the build failed (exit 3; nothing left behind unless ``keep``).
    """
    import tempfile
    import time

    from envcheck.docker.wheelhouse import Wheelhouse, prepare, select_pins
    from envcheck.render.files import dockerfile_plan, render_dockerfile

    t0 = time.monotonic()
    if tag:
        from envcheck.edge import check_image

        check_image(tag, "--tag")
    host, plan = plan, dockerfile_plan(plan)  # an image is a Linux container: a Windows / macOS plan's container plan
    row = base_row(plan, matrix, base_image)
    pins = select_pins(plan.pins, packages)
    requires = dict(plan.requires) if not packages else {}  # --packages: only what it names
    notes: List[str] = []
    origin = f"pip install from {plan.index_option or 'PyPI'} during the build"
    wheels = None
    if wheelhouse is not None:
        wh = wheelhouse if isinstance(wheelhouse, Wheelhouse) else prepare(plan, Path(wheelhouse), pins,
                                                                            row.glibc or "2.17", say, requires=requires)
        pins, origin, wheels, requires = wh.pins, wh.origin, wh.path, dict(wh.requires)
        notes += wh.notes
    iplan = image_plan(plan, pins, row, requires)
    dockerfile = render_dockerfile(iplan, wheelhouse=CONTEXT_WHEELHOUSE if wheels else None,
                                   host=host if host is not plan else None)
    tag = tag or default_tag(pins)
    with tempfile.TemporaryDirectory(prefix="envcheck-build-") as tmp:
        make_context(Path(tmp), dockerfile, wheels)
        image_id = build_image(client, Path(tmp), tag, image_labels(iplan, origin, from_image(dockerfile)), say, keep)
    return {"tag": tag, "id": image_id, "base_image": from_image(dockerfile), "pins": pins, "wheels": origin, "notes": notes,
            "seconds": round(time.monotonic() - t0, 1), "dockerfile": dockerfile}
