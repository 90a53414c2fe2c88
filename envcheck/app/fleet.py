"""``fleet merge|diff|slurm|k8s``: merge node reports into the fleet's view (and write its JUnit,
Prometheus and saved forms), compare two nodes or fleets, and make the Slurm / Kubernetes jobs
that run ``verify`` on every node. No argparse, no printing."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from envcheck.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.fleet.merge import Fleet
    from envcheck.fleet.slurm import SlurmOptions

#: ``on_skip(path, why)``: a report that could not be read (it is left out of the merge)
OnSkip = Callable[[Path, str], None]

#: the longest ``slurm --submit --wait`` waits (seconds)
MAX_SLURM_WAIT = 7 * 86400.0


@dataclass(frozen=True)
class MergeRequest:
    """Node reports (files or folders) to merge, the lock whose values they are held to, the nodes
    expected to report (a Slurm hostlist: ``gpu[001-016]``), and the files to write."""

    inputs: Sequence[str]
    lock: Optional[Path] = None
    expect: Optional[str] = None
    junit: Optional[Path] = None
    prometheus: Optional[Path] = None
    save: Optional[Path] = None
    force: bool = False


@dataclass(frozen=True)
class MergeResult:
    """The merged fleet and its JSON document (what ``fleet merge --json`` prints and ``--save`` writes)."""

    fleet: Fleet
    document: Dict[str, Any]

    @property
    def exit_code(self) -> int:
        """0 every node passes and nothing drifts; 1 a failure, drift, a missing node or rank; 2 a report skipped."""
        return self.fleet.exit_code


def expect_nodes(text: Optional[str]) -> Optional[Sequence[str]]:
    """The node names a hostlist (``gpu[001-016]``, or a comma list) stands for; ``None`` → ``None``.

    Raises:
        UsageError: a malformed hostlist, or one naming no node.
    """
    if text is None:
        return None
    from envcheck.fleet.hostlist import expand

    try:
        names = expand(text)
    except ValueError as exc:
        raise UsageError(f"--expect {text}: {exc}") from None
    if not names:
        raise UsageError("--expect: no node named")
    return names


def fleet_merge(request: MergeRequest, on_skip: Optional[OnSkip] = None) -> MergeResult:
    """Merge the reports; write ``save`` (the JSON document), ``junit`` and ``prometheus``.

    Every target is checked before a report is read (none replaced without ``force``).

    Raises:
        UsageError: a bad ``expect``, a target that exists or cannot be written, no node report
            read and no ``expect`` (none there, or every one skipped: nothing is written) (exit 2).
        DataFileError: a malformed lock (exit 2).
    """
    from envcheck.fleet.merge import junit_suites, merge

    targets = (("--junit", request.junit), ("--prometheus", request.prometheus), ("--save", request.save))
    if any(t for _, t in targets):  # the writer pulls in render (the matrix): only when needed
        from envcheck.fsutil import shown
        from envcheck.render.write import check_output_file

        named: Dict[str, str] = {}  # the same file for two outputs: the second would refuse the first's
        for flag, target in targets:
            if target:
                where = os.path.realpath(target)
                if where in named:
                    raise UsageError(f"{named[where]} and {flag} name the same file "
                                     f"{shown(target)}; give each its own file")
                named[where] = flag

        from envcheck.errors import OutputExistsError

        existing: List[str] = []  # every one that exists, at once: not one refusal per try (breaker5 F7)
        for flag, target in targets:
            if target:
                try:
                    check_output_file(target, request.force, flag)
                except OutputExistsError as exc:
                    existing += exc.paths
        if existing:
            raise OutputExistsError(existing)
    lock = None
    if request.lock:
        from envcheck.lock import load_lock

        lock = load_lock(request.lock)
    expect = expect_nodes(request.expect)
    fleet = merge(request.inputs, lock, on_skip=on_skip, expect=expect)
    if not fleet.nodes and not expect:  # bad input, one line; no "0 nodes" fleet printed or saved (breaker6 F11)
        from envcheck.fsutil import shown  # (with --expect, the fleet says which nodes are missing: exit 1)

        where = ", ".join(shown(i) for i in request.inputs)
        if fleet.skipped:
            raise UsageError(f"no readable node report in {where}: " + "; ".join(
                f"{shown(s['file'])}: {s['reason']}" for s in fleet.skipped[:3])
                + (f" (and {len(fleet.skipped) - 3} more)" if len(fleet.skipped) > 3 else ""))
        raise UsageError(f"no node report in {where} (`envcheck verify --report` writes them; "
                         "a saved fleet document is not one)")
    doc = fleet.to_dict()
    outputs: List[Tuple[str, str, str]] = []  # written all or nothing: an interrupted merge keeps none
    if request.save:
        outputs.append((str(request.save), json.dumps(doc, indent=1) + "\n", "--save"))
    if request.junit:
        from envcheck.junit import junit_text

        outputs.append((str(request.junit), junit_text(junit_suites(fleet)), "--junit"))
    if request.prometheus:
        from envcheck.fleet.prometheus import prometheus_text

        outputs.append((str(request.prometheus), prometheus_text(fleet), "--prometheus"))
    if outputs:
        from envcheck.fsutil import write_files

        write_files(outputs, request.force)
    return MergeResult(fleet=fleet, document=doc)


@dataclass(frozen=True)
class DiffResult:
    """What differs between two sides (``kind``: ``nodes`` or ``fleets``), and the reports skipped reading them."""

    document: Dict[str, Any]
    skipped: Tuple[Mapping[str, str], ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.document["changed"])

    @property
    def exit_code(self) -> int:
        return 1 if self.changed else 0


def fleet_diff(a: str, b: str) -> DiffResult:
    """Compare two node reports, two folders of reports, or two saved fleets.

    Raises:
        UsageError / DataFileError: a side that cannot be read at all.
    """
    from envcheck.fleet.diff import diff, load_side

    left, right = load_side(a), load_side(b)
    return DiffResult(document=diff(left, right), skipped=tuple(left.skipped) + tuple(right.skipped))


def slurm_job(options: SlurmOptions, prolog: bool = False) -> str:
    """The sbatch script that runs ``verify --report`` on every node and merges (``prolog``: a
    quick-tier prolog snippet instead). Every value is checked (one printable line, ``--time`` in
    Slurm's grammar) and shell-quoted where it is written.

    Raises:
        UsageError: fewer than one node, a malformed nodelist, a value with a line break or control
            character.
    """
    from envcheck.fleet.slurm import batch_script, check_options, prolog_snippet

    check_options(options)
    if options.nodes is not None and options.nodes < 1:
        raise UsageError(f"--nodes {options.nodes}: expected at least 1")
    if options.nodelist:
        from envcheck.fleet.hostlist import expand

        try:
            expand(options.nodelist)
        except ValueError as exc:
            raise UsageError(f"--nodelist {options.nodelist}: {exc}") from None
    return prolog_snippet(prolog_paths(options)) if prolog else batch_script(options)


def prolog_paths(options: SlurmOptions) -> SlurmOptions:
    """``options`` with an absolute envcheck and report folder: Slurm runs a prolog as root with
    slurmd's working directory and a minimal PATH, where a bare ``envcheck`` is not found (exit 127:
    the node was never drained) and a relative folder lands wherever slurmd runs (newcomer M13).
    envcheck is resolved on this machine's PATH now; ``--envcheck /path`` names it on the nodes.

    Raises:
        UsageError: ``--envcheck`` is a bare name not on PATH here.
    """
    import dataclasses
    import os
    import shutil

    exe = options.envcheck
    if os.sep not in exe:
        found = shutil.which(exe)
        if not found:
            raise UsageError(f"--envcheck {exe}: not on PATH here; a prolog runs with slurmd's PATH, so give the "
                             "absolute path of envcheck on the nodes (--envcheck /opt/envcheck/bin/envcheck)")
        exe = found
    if options.python is None:
        _envcheck_python_has_torch(exe)
    return dataclasses.replace(options, envcheck=os.path.abspath(exe), reports=os.path.abspath(options.reports))


def _envcheck_python_has_torch(exe: str) -> None:
    """Without ``--python`` the prolog verifies the interpreter envcheck runs in. Installed in a venv of
    its own (as the README's first command does), that one has no torch: every node would fail
    ``import_torch`` and be drained (newcomer3 #3). The interpreter is read from envcheck's launcher
    (its ``#!`` line) and asked, with a deadline, whether it can import torch.

    Raises:
        UsageError: that interpreter has no torch.
    """
    import subprocess

    try:
        with open(exe, "rb") as fh:
            first = fh.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return  # not readable here: the nodes may differ anyway
    if not first.startswith("#!") or not first[2:].strip():
        return
    interp = first[2:].strip().split()[0]
    try:
        r = subprocess.run([interp, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"],
                           capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return
    if r.returncode == 1:
        raise UsageError(f"--prolog without --python verifies the interpreter envcheck runs in ({interp}), which has "
                         "no torch: every node would fail import_torch and be drained; give the training "
                         "environment's interpreter on the nodes (--python /shared/venv/bin/python)")


@dataclass(frozen=True)
class SubmitResult:
    """What ``sbatch`` said (and, when waited for, how the job ended) and the exit code it means."""

    exit_code: int
    output: str
    job_code: Optional[int] = None  # with --wait: the job's own exit code (127: a command not found on a node…)
    job_id: Optional[str] = None  # what sbatch --parsable printed


def slurm_submit(script: str, wait: bool = False, timeout: float = 3600.0) -> SubmitResult:
    """Submit ``script`` with sbatch; with ``wait``, wait for the job (at most ``timeout`` seconds).

    Raises:
        UsageError: a timeout that is not a finite number of seconds > 0 and ≤ one week.
    """
    from envcheck.fleet.slurm import job_id, submit

    if not (math.isfinite(timeout) and 0 < timeout <= MAX_SLURM_WAIT):
        raise UsageError(f"--timeout {timeout:g}: expected a number of seconds > 0 and ≤ one week")
    code, out = submit(script, wait, timeout)
    # envcheck's exit codes stay 0 / 1 / 2: a job that failed in any way is 1 (its own code is said)
    return SubmitResult(exit_code=0 if int(code) == 0 else 1, output=str(out), job_code=int(code) if wait else None,
                        job_id=job_id(str(out)))


@dataclass(frozen=True)
class K8sRequest:
    """The Indexed Job to render: ``nodes`` pods, ``image`` (default with ``lock``: the plan's image
    tag), the GPU ``vendor`` (default: from ``lock``, else nvidia), where reports go."""

    nodes: int
    image: Optional[str] = None
    lock: Optional[Path] = None
    vendor: Optional[str] = None
    gpus_per_node: int = 1
    tier: str = "full"
    name: str = "envcheck-fleet"
    namespace: Optional[str] = None
    pvc: Optional[str] = None
    shm: str = "16Gi"
    node_selector: Optional[Mapping[str, str]] = None


def k8s_job(request: K8sRequest) -> str:
    """The Job (and, with a lock, its ConfigMap) as YAML.

    Raises:
        UsageError: fewer than one node, a negative GPU count, no image to name, a name, image,
            quantity or label outside its Kubernetes/OCI grammar.
        DataFileError: a malformed lock.
    """
    from envcheck.fleet.k8s import K8sOptions, check_options, image_and_vendor, manifest

    if request.nodes < 1:
        raise UsageError(f"--nodes {request.nodes}: expected at least 1")
    if request.gpus_per_node < 0:
        raise UsageError(f"--gpus-per-node {request.gpus_per_node}: expected 0 or more")
    lock = None
    if request.lock:
        from envcheck.lock import load_lock

        lock = load_lock(request.lock)
    image, vendor = image_and_vendor(request.image, request.vendor, lock)
    lock_text = None
    if lock is not None and request.lock is not None:
        from envcheck.fsutil import read_input_text

        lock_text = read_input_text(request.lock, "--lock")
    selector: Optional[Dict[str, str]] = dict(request.node_selector) if request.node_selector else None
    opts = K8sOptions(image=image, nodes=request.nodes, name=request.name, namespace=request.namespace,
                      vendor=vendor, gpus_per_node=request.gpus_per_node, tier=request.tier, pvc=request.pvc,
                      shm=request.shm, lock_text=lock_text, node_selector=selector)
    return manifest(check_options(opts))
