"""``fleet slurm``: an sbatch script that verifies every node of an allocation and merges the
reports, and a prolog snippet for the quick tier. envcheck schedules nothing: Slurm does.

The batch script runs ``srun --ntasks-per-node=1 envcheck verify --report DIR/`` (one report per
node into a shared folder), then ``envcheck fleet merge`` over it (text to the job's output, the
fleet as JSON and JUnit beside the reports); the job's exit code is the merge's.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import List, Optional

#: Default ``--time`` per tier (the full tier compiles once with torch.compile).
TIME = {"quick": "00:10:00", "full": "01:00:00"}


@dataclass(frozen=True)
class SlurmOptions:
    partition: Optional[str] = None
    nodes: Optional[int] = None
    nodelist: Optional[str] = None
    tier: str = "full"
    reports: str = "envcheck-reports"
    envcheck: str = "envcheck"
    python: Optional[str] = None
    lock: Optional[str] = None
    time: Optional[str] = None
    job_name: str = "envcheck-fleet"
    account: Optional[str] = None
    gpus_per_node: Optional[int] = None


def _q(text: str) -> str:
    return shlex.quote(str(text))


def _verify_args(o: SlurmOptions) -> List[str]:
    args = ["verify", "--tier", o.tier]
    if o.python:
        args += ["--python", o.python]
    if o.lock:
        args += ["--lock", o.lock]
    return args


def batch_script(o: SlurmOptions) -> str:
    """The sbatch script (text) for ``o``."""
    lines = ["#!/bin/bash", f"#SBATCH --job-name={o.job_name}"]
    if o.partition:
        lines.append(f"#SBATCH --partition={o.partition}")
    if o.account:
        lines.append(f"#SBATCH --account={o.account}")
    if o.nodelist:
        lines.append(f"#SBATCH --nodelist={o.nodelist}")
    if o.nodes:
        lines.append(f"#SBATCH --nodes={o.nodes}")
    if o.gpus_per_node:
        lines.append(f"#SBATCH --gpus-per-node={o.gpus_per_node}")
    lines += [
        "#SBATCH --ntasks-per-node=1",
        f"#SBATCH --time={o.time or TIME.get(o.tier, TIME['full'])}",
        f"#SBATCH --output={o.job_name}-%j.out",
        "# Written by `envcheck fleet slurm`: verify every node of this allocation, then merge the reports.",
        "# Submit with `sbatch` (or `envcheck fleet slurm … --submit`); REPORTS must be on a filesystem every",
        "# node shares. The job's exit code is fleet merge's: 0 all pass and no drift, 1 otherwise, 2 bad input.",
        "set -u",
        f"ENVCHECK=${{ENVCHECK:-{_q(o.envcheck)}}}",
        f"REPORTS=\"${{ENVCHECK_REPORTS:-{o.reports}}}/$SLURM_JOB_ID\"",
        'mkdir -p "$REPORTS"',
        "# one task per node; a failing node must not stop the others (--kill-on-bad-exit=0)",
        f'srun --ntasks-per-node=1 --kill-on-bad-exit=0 "$ENVCHECK" {" ".join(_q(a) for a in _verify_args(o))} \\',
        '    --report "$REPORTS/" > "$REPORTS/verify.log" 2>&1',
        'echo "srun exit $?: per-node output in $REPORTS/verify.log"',
        "# every node of the allocation must have reported (Slurm expands its own node list)",
        'NODES=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd, -)',
        '"$ENVCHECK" fleet merge "$REPORTS" --expect "$NODES" --save "$REPORTS/fleet.json" --junit "$REPORTS/fleet.xml"'
        + (f" --lock {_q(o.lock)}" if o.lock else ""),
        "rc=$?",
        'echo "fleet: $REPORTS/fleet.json (fleet merge --json), $REPORTS/fleet.xml (JUnit)"',
        "exit $rc",
    ]
    return "\n".join(lines) + "\n"


def prolog_snippet(o: SlurmOptions) -> str:
    """A Slurm prolog (quick tier): a node whose environment is broken fails the prolog, so Slurm
    drains it and requeues the job; envcheck itself changes nothing on the node."""
    args = " ".join(_q(a) for a in _verify_args(SlurmOptions(**{**o.__dict__, "tier": "quick"})))
    return "\n".join([
        "#!/bin/bash",
        "# envcheck quick-tier prolog (`envcheck fleet slurm --prolog`). Install on every node, e.g. as",
        "# /etc/slurm/prolog.d/50-envcheck.sh with `Prolog=/etc/slurm/prolog.d/*` in slurm.conf.",
        "# Exit 1 (a check failed) fails the prolog: Slurm drains the node and requeues the job.",
        "# Bad input (exit 2) or a timeout is not the node's fault: it never drains a node.",
        f"ENVCHECK={_q(o.envcheck)}",
        f"DIR={_q(o.reports)}/prolog",
        'mkdir -p "$DIR" 2>/dev/null',
        f'timeout 120 "$ENVCHECK" {args} --force --report "$DIR/${{SLURMD_NODENAME:-$(hostname -s)}}.json" >/dev/null 2>&1',
        "rc=$?",
        'if [ "$rc" -eq 1 ]; then',
        '  echo "envcheck: quick verify failed on ${SLURMD_NODENAME:-$(hostname -s)}: $DIR" >&2',
        "  exit 1",
        "fi",
        "exit 0",
    ]) + "\n"


def submit(script: str, wait: bool, timeout: float, run: object = None) -> tuple:
    """Submit ``script`` with ``sbatch`` (``--wait``: until the job ends, at most ``timeout`` s).

    Returns:
        ``(exit code, sbatch's output)``: with ``--wait``, sbatch's exit code is the job's.

    Raises:
        UsageError: sbatch is not installed, or it refused the script (its message).
    """
    from envcheck import runner
    from envcheck.errors import UsageError

    if runner.which("sbatch") is None:
        raise UsageError("--submit: sbatch not found (run this on a Slurm login node, or print the script and "
                         "copy it there)")
    argv = ["sbatch", "--parsable"] + (["--wait"] if wait else [])
    res = (run or runner.run)(argv, timeout=timeout, input=script)  # type: ignore[operator]
    if res.returncode is None:
        raise UsageError(f"--submit: {res.error}")
    if not wait and res.returncode != 0:
        raise UsageError(f"--submit: sbatch refused the script: {(res.stderr or res.stdout).strip()[:500]}")
    return res.returncode, (res.stdout + res.stderr).strip()
