"""``verify``: run the checks in an interpreter (or judge saved facts) and say what to fix — plus
what ``verify --report/--junit/--save-facts/--distributed`` writes around it. No argparse, no
printing: the command line turns flags into a :class:`VerifyRequest` and the
:class:`VerifyResult` into the report."""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from envcheck.jsontypes import JSON, JSONObject

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.lock import Lock
    from envcheck.machine.model import Machine
    from envcheck.matrix import Matrix
    from envcheck.verify.diagnose import Check
    from envcheck.verify.facts import Facts

#: ``progress(name, None)`` when a check starts, ``progress(name, run)`` when it ends
Progress = Callable[[str, Optional[dict]], None]
#: the runner seam: ``start(argv, env=…)`` → a stream (default :func:`envcheck.runner.start`)
Start = Callable[..., Any]


@dataclass(frozen=True)
class VerifyRequest:
    """What ``verify`` runs and writes.

    ``python`` as people type it (a path, an environment folder, a name on PATH, a version; ``None``:
    this interpreter); ``checks`` in report order (``None``: every check — see :func:`select_checks`);
    ``facts``: judge this saved file instead of running anything. ``report``/``junit``/``host``/
    ``distributed``/``tier`` are the fleet outputs (``tier`` is the label the node report carries).
    ``as_recorded``: replaying ``facts``, judge only the checks (among ``checks``) that the run which
    collected them judged, under its tier label — the same facts give the same verdict (the command
    line sets it when neither ``--checks`` nor ``--tier`` is given).
    """

    python: Optional[str] = None
    checks: Optional[Sequence[str]] = None
    lock: Optional[Path] = None
    facts: Optional[Path] = None
    save_facts: Optional[Path] = None
    force: bool = False
    timeout: float = 60.0
    matrices: Optional[Path] = None
    report: Optional[str] = None
    junit: Optional[Path] = None
    host: Optional[str] = None
    distributed: bool = False
    tier: str = "full"
    as_recorded: bool = False

    @property
    def node_outputs(self) -> bool:
        return bool(self.report or self.junit or self.distributed)


@dataclass(frozen=True)
class VerifyResult:
    """The checks' results (report order), the facts they judged, and what they were judged with.

    ``extra`` holds the keys ``verify --json`` adds to its object (``variant``; ``docker`` for an image).
    """

    checks: Tuple[Check, ...]
    facts: Facts
    matrix: Matrix
    machine: Optional[Machine] = None
    lock: Optional[Lock] = None
    elapsed: float = 0.0
    extra: Mapping[str, JSON] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(c.status == "fail" for c in self.checks)

    @property
    def exit_code(self) -> int:
        """1 when a check failed, else 0 (warnings allowed)."""
        return 1 if self.failed else 0

    @property
    def title(self) -> str:
        """The interpreter the facts came from, or ``saved facts``."""
        return str(self.facts.section("python").get("executable") or "saved facts")

    def to_json(self) -> JSONObject:
        """``verify --json``: ``{checks: [...], facts: {...}, **extra}``."""
        return {"checks": [c.to_dict() for c in self.checks], "facts": self.facts.to_dict(), **self.extra}


def parse_checks(text: Optional[str], flag: str) -> List[str]:
    """``"matmul, lock"`` → ``["matmul", "lock"]``; ``None`` (not given) → ``[]``.

    Raises:
        UsageError: an unknown check name (the known ones are listed), or an empty list.
    """
    import difflib

    from envcheck.errors import UsageError
    from envcheck.verify.checks import CHECKS

    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    if text is not None and not names:
        raise UsageError(f"{flag} {text!r}: no check named; give a comma-separated list of: {', '.join(CHECKS)}")
    for n in names:
        if n not in CHECKS:
            close = difflib.get_close_matches(n, CHECKS, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UsageError(f"{flag}: unknown check {n!r}{hint}\n  checks: {', '.join(CHECKS)}")
    return names


def select_checks(only: Optional[str] = None, skip: Optional[str] = None, tier: Optional[str] = None) -> List[str]:
    """The checks ``only`` (``--checks``, else the ``tier``'s) leave after ``skip``, in report order.

    Raises:
        UsageError: an unknown check, an empty list, or none left.
    """
    from envcheck.errors import UsageError
    from envcheck.fleet.report import tier_checks
    from envcheck.verify.checks import CHECKS

    wanted = parse_checks(only, "--checks") or tier_checks(tier, CHECKS)
    left = set(parse_checks(skip, "--skip"))
    checks = [c for c in CHECKS if c in wanted and c not in left]
    if not checks:
        raise UsageError("--checks/--skip leave no check to run")
    return checks


def in_report_order(checks: Optional[Sequence[str]]) -> List[str]:
    """``checks`` (``None``: all) in the order the report lists them.

    Raises:
        UsageError: a name that is not a check.
    """
    from envcheck.verify.checks import CHECKS

    if checks is None:
        return list(CHECKS)
    if checks:
        parse_checks(",".join(checks), "checks")
    return [c for c in CHECKS if c in set(checks)]


def verify(request: VerifyRequest, progress: Optional[Progress] = None) -> VerifyResult:
    """Run the checks (or judge ``request.facts``), write ``--save-facts`` and the node outputs.

    Every target is checked before anything runs; ``progress`` hears each check start and end.

    Raises:
        UsageError: an interpreter that is not a usable Python, a target that exists (without
            ``force``) or cannot be written, ``distributed`` without a launcher (exit 2).
        DataFileError: a malformed lock or facts file (exit 2).
    """
    from envcheck.verify.checks import probes_for

    checks = in_report_order(request.checks)
    if request.save_facts:
        from envcheck.render.write import check_output_file

        check_output_file(request.save_facts, request.force, "--save-facts")
    node = _prepare_node(request)
    lock = None
    if request.lock:
        from envcheck.lock import load_lock

        lock = load_lock(request.lock)
    t0 = time.monotonic()
    if request.facts:
        from envcheck.matrix import load_matrix
        from envcheck.verify.facts import load_facts

        saved = request.facts
        facts = load_facts(saved)
        if request.as_recorded:
            checks, request = as_recorded(facts, checks, request)
        nothing_to_judge(facts, checks, saved)
        return judge(request, facts, load_matrix(request.matrices), checks, t0, lock=lock, node=node)
    from envcheck.pyfind import find_python

    python = find_python(request.python)
    if node is not None and request.distributed:
        from envcheck.fleet.dist import run_collectives

        node["distributed"] = run_collectives(python, request.timeout, cuda_hint=_has_nvidia())
    facts, matrix, machine = collect_live(python, probes_for(checks), request.timeout, request.matrices,
                                          progress=progress)
    unusable(facts, request.python)
    from envcheck.variants import installed_variant

    variant = installed_variant(python, timeout=min(30.0, float(request.timeout or 30.0)))
    return judge(request, facts, matrix, checks, t0, lock=lock, machine=machine, node=node,
                 extra={"variant": variant})


def as_recorded(facts: Facts, checks: Sequence[str], request: VerifyRequest) -> Tuple[List[str], VerifyRequest]:
    """The checks of ``checks`` that the run which collected ``facts`` judged (all of ``checks`` when
    the facts do not say), and ``request`` under that run's tier label.

    Raises:
        UsageError: ``--skip`` leaves none of the recorded checks.
    """
    from envcheck.errors import UsageError

    recorded = set(facts.judged or checks)
    left = [c for c in checks if c in recorded]
    if not left:
        raise UsageError(f"--skip leaves none of the checks these facts were judged with ({', '.join(sorted(recorded))})")
    if facts.tier and request.tier == "full":
        from dataclasses import replace

        request = replace(request, tier=facts.tier)
    return left, request


def judge(request: VerifyRequest, facts: Facts, matrix: Matrix, checks: Sequence[str], t0: float, *,
          lock: Optional[Lock] = None, machine: Optional[Machine] = None, node: Optional[Dict[str, Any]] = None,
          extra: Optional[Mapping[str, JSON]] = None) -> VerifyResult:
    """Diagnose ``facts`` (the distributed check added from ``node``), write the node report/JUnit
    (``node``) and ``--save-facts``; ``t0`` is when the work began (for ``elapsed``)."""
    from envcheck.verify.diagnose import Check, diagnose

    facts.record_judged(list(checks), request.tier)  # a replay judges the same checks (newcomer3 #7)
    results = diagnose(facts, lock, machine, matrix, list(checks))
    if node is not None and "distributed" in node:
        from envcheck.fleet.dist import CHECK
        from envcheck.fleet.dist import judge as judge_collectives

        status, detail, fix = judge_collectives(node["distributed"])
        results.append(Check(CHECK, status, float(node["distributed"].get("seconds") or 0.0), detail, fix))
    elapsed = time.monotonic() - t0
    outputs: List[Tuple[str, str, str]] = []  # written all or nothing: an interrupted verify keeps none
    if node is not None:
        from envcheck.fleet.output import node_outputs

        outputs += node_outputs(node, [c.to_dict() for c in results], facts.to_dict(), tier=request.tier,
                                lock_path=request.lock)
    if request.save_facts:
        outputs.append((str(request.save_facts), json.dumps(facts.to_dict(), indent=1) + "\n", "--save-facts"))
    if outputs:
        from envcheck.fsutil import write_files

        write_files(outputs, request.force)
    return VerifyResult(checks=tuple(results), facts=facts, matrix=matrix, machine=machine, lock=lock,
                        elapsed=elapsed, extra=dict(extra or {}))


def _has_nvidia() -> bool:
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/proc/driver/nvidia")


def _prepare_node(request: VerifyRequest) -> Optional[Dict[str, Any]]:
    """With report/junit/distributed: the node and its output files, checked before anything runs."""
    if not request.node_outputs:
        return None
    from envcheck.fleet.output import prepare_node

    return prepare_node(report=request.report, junit=request.junit,
                        host=request.host, facts=request.facts, distributed=request.distributed,
                        force=request.force)


def nothing_to_judge(facts: Facts, checks: Sequence[str], path: Path) -> None:
    """Bad input, not a pass: saved facts that hold no result of any probe the checks read
    (:func:`~envcheck.verify.checks.probes_for`: an empty ``runs``, or results of other checks only)
    — every check would skip and nothing would have been verified.

    Raises:
        DataFileError: naming ``runs`` and the probes the checks need (exit 2).
    """
    from envcheck.errors import DataFileError
    from envcheck.verify.checks import BY_NAME, probes_for

    # what the asked checks read themselves: import_torch, which every live run collects first
    # (probes_for), counts only when a check asked reads it (newcomer4 F3: quick facts replayed with
    # --checks torch_compile skipped everything, exit 0)
    own = [p for c in checks if c in BY_NAME for p in BY_NAME[c].needs] or probes_for(list(checks))
    if any(facts.run(p) is not None for p in own):
        return
    # …but an import_torch that failed is why the torch probes have no result: each asked check that
    # reads them has a verdict to give from it ("unknown: the build was not read (torch does not import)")
    imported = facts.run("import_torch")
    if (imported is not None and imported.get("outcome") != "ok"
            and set(own) & set(probes_for(list(checks))) - {"import_torch"}):
        return
    recorded = sorted(facts.section("runs"))
    what = (f"no result of the checks asked ({', '.join(checks)}); these facts hold {', '.join(recorded)}"
            if recorded else "no check result (runs is empty)")
    raise DataFileError(path, "runs", f"nothing to judge: {what} — save facts with `envcheck verify --save-facts FILE`")


def unusable(facts: Facts, given: Optional[str]) -> None:
    """Bad input, not a failed check: the interpreter never ran envcheck's collector (``/bin/true``,
    Python 2, a program that is not Python).

    Raises:
        UsageError: saying what it did instead (exit 2).
    """
    from envcheck.errors import UsageError
    from envcheck.verify.diagnose import SHORT_TIMEOUT

    col = facts.section("collector")
    err = col.get("error")
    if err and not facts.section("runs") and not facts.section("python"):
        flag = f"--python {given}" if given else "this interpreter"
        timeout = col.get("timeout")
        if col.get("stalled") and isinstance(timeout, (int, float)) and timeout < SHORT_TIMEOUT:
            raise UsageError(f"--timeout {timeout:g}: too small — {err}\n  starting Python alone takes a moment; "
                             "use the default (60 s per check)")
        raise UsageError(f"{flag}: not a usable Python (≥ 3.7) for verify — {err}\n  give a venv's bin/python, "
                         "a conda env's python, or the environment folder itself")


def collect_live(python: str, probes: List[str], timeout: float, matrices: Optional[Path], *,
                 progress: Optional[Progress] = None, start: Optional[Start] = None
                 ) -> Tuple[Facts, Matrix, Machine]:
    """Start the worker first, then load the matrix and probe the machine while torch imports.

    ``start`` is the runner seam for the worker (default :func:`envcheck.runner.start`; ``docker
    verify`` passes one that runs it in a container). The machine is stored in the facts."""
    from envcheck import runner
    from envcheck.verify.collect import collect

    out: Dict[str, Any] = {}
    streams: List[Any] = []

    def tracked(argv: Any, env: Any = None, cwd: Any = None) -> Any:
        stream = (start or runner.start)(argv, env=env)
        streams.append(stream)
        return stream

    def work() -> None:
        try:
            out["facts"] = collect(python, probes, timeout, progress=progress, start=tracked)
        except BaseException as exc:  # re-raised in the main thread
            out["error"] = exc

    t = threading.Thread(target=work, daemon=True)
    t.start()
    try:
        from envcheck.matrix import load_matrix
        from envcheck.probe import probe_machine

        matrix = load_matrix(matrices)
        machine = probe_machine(matrix, docker=False)  # the GPUs and driver matter here, not Docker
        while t.is_alive():
            t.join(0.1)
    except BaseException:
        for stream in streams:  # the workers run in their own session: Ctrl-C (or an error here) does not end them
            stream.kill()
        raise
    if "error" in out:
        raise out["error"]
    facts = out["facts"]
    facts.data["machine"] = machine.to_dict()
    return facts, matrix, machine
