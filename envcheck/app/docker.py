"""``docker build|verify|base|ci``: build the image a plan describes, run verify's checks inside an
image, the local base image, and one ``[[ci_target]]`` of matrices/docker.toml end to end. No
argparse, no printing: progress goes to the ``say`` (build lines) and ``progress`` (checks)
callbacks the caller passes."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from envcheck.app.verify import Progress, VerifyRequest, VerifyResult, collect_live, in_report_order, judge
from envcheck.jsontypes import JSON, JSONObject

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.app.plan import PlanRequest
    from envcheck.lock import Lock
    from envcheck.matrix import Matrix
    from envcheck.resolve.plan import Plan

#: a progress line (a build step, a wheel being gathered)
Say = Callable[[str], None]


def _quiet(line: str) -> None:
    """The default ``say``: progress goes nowhere."""


def build_plan(lock: Optional[Path], request: Optional[PlanRequest], matrices: Optional[Path] = None
               ) -> Tuple[Matrix, Plan]:
    """``(matrix, plan)``: the plan ``lock`` records, else the one ``request`` resolves to.

    Raises:
        UsageError: bad flags or lock; NoCompatibleBuild: no build fits (exit 1).
    """
    from envcheck.errors import NoCompatibleBuild

    if lock is not None:
        from envcheck.docker.source import plan_from_lock_file
        from envcheck.matrix import load_matrix

        matrix = load_matrix(matrices)
        return matrix, plan_from_lock_file(lock, matrix)
    from envcheck.app.plan import PlanRequest
    from envcheck.app.plan import plan as plan_use_case

    result = plan_use_case(request if request is not None else PlanRequest(matrices=matrices))
    if result.plan is None:
        raise NoCompatibleBuild("no build fits these flags: `envcheck plan --explain` with the same flags lists "
                                "every candidate and why it was rejected")
    return result.matrix, result.plan


@dataclass(frozen=True)
class BuildRequest:
    """An image to build: from ``lock`` or from ``plan`` (one of them; neither: plan for this machine)."""

    lock: Optional[Path] = None
    plan: Optional[PlanRequest] = None
    matrices: Optional[Path] = None
    tag: Optional[str] = None
    base_image: Optional[str] = None
    wheelhouse: Optional[Path] = None
    packages: Optional[Sequence[str]] = None
    keep: bool = False


@dataclass(frozen=True)
class BuildResult:
    """A built image: its tag and id, the base it came ``FROM``, the pins installed, where the wheels
    came from, notes, the build's seconds and the Dockerfile."""

    tag: str
    id: str
    base_image: str
    pins: Mapping[str, str]
    wheels: str
    notes: Tuple[str, ...]
    seconds: float
    dockerfile: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BuildResult:
        return cls(tag=d["tag"], id=d["id"], base_image=d["base_image"], pins=dict(d["pins"]), wheels=d["wheels"],
                   notes=tuple(d["notes"]), seconds=d["seconds"], dockerfile=d["dockerfile"])

    def to_json(self) -> JSONObject:
        """``docker build --json``: ``{tag, id, base_image, pins, wheels, notes, seconds, dockerfile}``."""
        return {"tag": self.tag, "id": self.id, "base_image": self.base_image, "pins": dict(self.pins),
                "wheels": self.wheels, "notes": list(self.notes), "seconds": self.seconds,
                "dockerfile": self.dockerfile}


def docker_build(request: BuildRequest, say: Say = _quiet) -> BuildResult:
    """Build the image ``request`` describes through the engine (nothing left behind on failure
    unless ``keep``).

    Raises:
        UsageError, NoCompatibleBuild, WheelhouseError, DockerError (see :func:`build_from_plan`).
    """
    from envcheck.docker.build import build_from_plan
    from envcheck.docker.engine import connect

    from envcheck.edge import check_image

    # bad input is exit 2 whether or not an engine is there: every flag is checked before connecting
    for value, what in ((request.tag, "--tag"), (request.base_image, "--base-image")):
        if value:
            check_image(value, what)
    matrix, plan = build_plan(request.lock, request.plan, request.matrices)
    client = connect()
    out = build_from_plan(client, plan, matrix, tag=request.tag, base_image=request.base_image,
                          wheelhouse=request.wheelhouse, packages=list(request.packages) if request.packages else None,
                          keep=request.keep, say=say)
    return BuildResult.from_dict(out)


@dataclass(frozen=True)
class BaseResult:
    """The local Debian base image: its tag, id, whether it was built now, and its recipe's digest."""

    tag: str
    id: str
    built: bool
    recipe: str

    def to_json(self) -> JSONObject:
        return {"tag": self.tag, "id": self.id, "built": self.built, "recipe": self.recipe}


def docker_base(tag: Optional[str] = None, mirror: Optional[str] = None, force: bool = False,
                say: Say = _quiet) -> BaseResult:
    """Build the local base image (debootstrap + docker import) unless it is there from the same recipe."""
    from envcheck.docker.base import TAG, ensure_base
    from envcheck.docker.engine import connect

    out = ensure_base(connect(), tag or TAG, mirror, say=say, force=force)
    return BaseResult(tag=out["tag"], id=out["id"], built=bool(out["built"]), recipe=out["recipe"])


@dataclass(frozen=True)
class ImageVerifyRequest:
    """Verify's ``checks`` inside containers of ``image``; ``lock`` (default: the image's
    ``io.envcheck.lock`` label), ``python`` inside the image (default: found)."""

    image: str
    checks: Optional[Sequence[str]] = None
    lock: Optional[Path] = None
    python: Optional[str] = None
    timeout: float = 60.0
    matrices: Optional[Path] = None
    keep: bool = False
    tier: str = "full"  # the label the facts record (quick/full/custom): a replay judges the same checks


def docker_verify(request: ImageVerifyRequest, progress: Optional[Progress] = None, client: Any = None
                  ) -> VerifyResult:
    """Run the checks inside ``request.image`` (one container each, with the device flags the lock's
    build needs that this host has); the result's ``extra["docker"]`` says how.

    Raises:
        DockerError: no engine, no such image, no Python in it, a container that cannot start.
        DataFileError: a malformed lock or lock label.
    """
    from envcheck.docker.engine import connect, engine_version
    from envcheck.docker.inside import ImageRunner, find_interpreter, image_info, run_options
    from envcheck.docker.source import lock_from_image, run_flags_for
    from envcheck.matrix import load_matrix
    from envcheck.verify.checks import probes_for

    client = client if client is not None else connect()
    checks = in_report_order(request.checks)
    img = image_info(client, request.image)
    lock: Optional[Lock]
    if request.lock:
        from envcheck.lock import load_lock

        lock, lock_from = load_lock(request.lock), str(request.lock)
    else:
        lock = lock_from_image(img)
        lock_from = "the image's io.envcheck.lock label" if lock else "none (no --lock, no io.envcheck.lock label)"
    matrix = load_matrix(request.matrices)
    flags, flags_from = run_flags_for(lock, matrix)
    options = run_options(flags)
    t0 = time.monotonic()
    with ImageRunner(client, img.id, options, keep=request.keep) as runner_:
        if request.python:
            python, found = request.python, "given with --python"
        else:
            python, has_torch = find_interpreter(runner_)
            found = "has torch" if has_torch else "the first Python found; torch is not on its path"
        facts, matrix, machine = collect_live(python, probes_for(checks), request.timeout, request.matrices,
                                              progress=progress, start=runner_.start)
        containers = len(runner_.streams)
    info: JSONObject = {"image": request.image, "image_id": img.id, "engine": engine_version(client),
                        "interpreter": python, "interpreter_found": found, "lock": lock_from,
                        "run_flags_from": flags_from, **options.to_dict(), "containers": containers,
                        "kept": bool(request.keep)}
    return judge(VerifyRequest(tier=request.tier), facts, matrix, checks, t0, lock=lock, machine=machine,
                 extra={"docker": info})


@dataclass(frozen=True)
class CiRequest:
    """One ``[[ci_target]]`` row by name: render, gather wheels under ``wheelhouse_root/target``,
    build, verify ``checks`` inside, write the JSON ``report`` (an existing file only with ``force``)."""

    target: str
    matrices: Optional[Path] = None
    base_image: Optional[str] = None
    wheelhouse_root: Path = Path(".nox/wheelhouse")
    timeout: float = 120.0
    checks: Optional[Sequence[str]] = None
    keep_image: bool = False
    report: Optional[Path] = None
    force: bool = False


@dataclass(frozen=True)
class CiResult:
    """The target's report document (``status``: no-plan, rendered, verified or failed), the
    verification when it ran, and the exit code."""

    document: JSONObject
    exit_code: int
    verified: Optional[VerifyResult] = None
    report: Optional[Path] = None

    @property
    def status(self) -> str:
        return str(self.document.get("status"))


def docker_ci(request: CiRequest, say: Say = _quiet, progress: Optional[Progress] = None) -> CiResult:
    """One CI target end to end. A target whose wheels cannot be had here is rendered only (exit 0,
    the report says why); no build fitting its flags is exit 1.

    Raises:
        UsageError: an unknown target, a report target that exists (without ``force``).
    """
    from envcheck.app.plan import plan as plan_use_case
    from envcheck.app.plan import request_from_flags
    from envcheck.docker.build import base_row, build_from_plan, remove_image
    from envcheck.docker.engine import connect
    from envcheck.docker.wheelhouse import WheelhouseError, prepare
    from envcheck.errors import UsageError
    from envcheck.matrix import load_matrix
    from envcheck.render.files import render_dockerfile

    if request.report:  # before any work: never replace what is there without force, never a non-file
        from envcheck.fsutil import check_target

        check_target(request.report, request.force, "--report")
    rows = {t.name: t for t in load_matrix(request.matrices).ci_targets}
    target = rows.get(request.target)
    if target is None:
        raise UsageError(f"no ci_target {request.target!r} in matrices/docker.toml; known: {', '.join(rows)}")
    doc: Dict[str, JSON] = {"target": target.name, "description": target.description, "args": list(target.args)}
    result = plan_use_case(request_from_flags(list(target.args), f"ci_target {target.name}", request.matrices))
    matrix, plan = result.matrix, result.plan
    if plan is None:
        doc.update(status="no-plan", reason="no build fits the target's flags")
        return _ci_done(request, doc, 1)
    doc["dockerfile"] = render_dockerfile(plan)
    row = base_row(plan, matrix, request.base_image)
    notes: List[str] = []
    wheels = None
    for pins in [plan.pins] + ([{"torch": plan.pins["torch"]}] if len(plan.pins) > 1 else []):
        where = request.wheelhouse_root / target.name / "+".join(pins)  # one folder per attempt
        try:
            wheels = prepare(plan, where, pins, row.glibc or "2.17", say)
            break
        except WheelhouseError as exc:
            notes.append(f"{', '.join(f'{k}=={v}' for k, v in pins.items())}: {exc}")
            say(f"wheels for {', '.join(pins)} cannot be had here")
    doc["wheel_notes"] = list(notes)
    if wheels is None:
        doc.update(status="rendered", reason="rendered only: the wheels cannot be had here ("
                   + " | ".join(notes)[:1500] + ")")
        return _ci_done(request, doc, 0)
    client = connect()
    tag = f"envcheck-ci/{target.name}:latest"
    built = build_from_plan(client, plan, matrix, tag=tag, base_image=request.base_image, wheelhouse=wheels, say=say)
    doc["build"] = {k: v for k, v in built.items() if k != "dockerfile"}
    doc["dockerfile"] = built["dockerfile"]
    try:
        got = docker_verify(ImageVerifyRequest(image=tag, checks=request.checks, timeout=request.timeout,
                                               matrices=request.matrices), progress=progress, client=client)
    finally:
        if not request.keep_image:
            remove_image(client, tag)
    doc.update(status="failed" if got.failed else "verified", checks=[c.to_dict() for c in got.checks],
               facts=got.facts.to_dict(), docker=got.extra["docker"],
               skipped_checks=[c.name for c in got.checks if c.status == "skip"])
    return _ci_done(request, doc, got.exit_code, got)


def _ci_done(request: CiRequest, doc: Dict[str, JSON], code: int, verified: Optional[VerifyResult] = None
             ) -> CiResult:
    if request.report:
        from envcheck.fsutil import write_file

        write_file(request.report, json.dumps(doc, indent=1) + "\n", request.force, "--report")
    return CiResult(document=doc, exit_code=code, verified=verified, report=request.report)

