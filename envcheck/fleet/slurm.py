"""``fleet slurm``: an sbatch script that verifies every node of an allocation and merges the
reports, and a prolog snippet for the quick tier. envcheck schedules nothing: Slurm does.

The batch script runs ``srun --ntasks-per-node=1 envcheck verify --report DIR/`` (one report per
node into a shared folder), then ``envcheck fleet merge`` over it (text to the job's output, the
fleet as JSON beside the reports; JUnit too where the ``junit`` extra is installed); the job's exit
code is the merge's.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, fields
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


#: Slurm's time-limit grammar (sbatch --time): minutes, minutes:seconds, hours:minutes:seconds,
#: days-hours, days-hours:minutes, days-hours:minutes:seconds, or UNLIMITED / INFINITE.
_TIME = re.compile(r"\d+(?::\d+){0,2}|\d+-\d+(?::\d+){0,2}|UNLIMITED|INFINITE|unlimited|infinite", re.ASCII)

#: The free-text options, by the flag they come from (the command line, ENVCHECK_*, a config file).
TEXT_FLAGS = {"partition": "--partition", "nodelist": "--nodelist", "reports": "--reports",
              "envcheck": "--envcheck", "python": "--python", "lock": "--lock", "time": "--time",
              "job_name": "--job-name", "account": "--account"}


def check_options(o: SlurmOptions) -> SlurmOptions:
    """Every free-text value of ``o`` checked at the edge: printable text on one line (a line break
    would end a ``#SBATCH`` line or a command of the script), and ``--time`` in Slurm's grammar.
    What passes is still shell-quoted wherever it is written (:func:`batch_script`).

    Raises:
        UsageError: a value that is not (one line naming the flag).
    """
    from envcheck.edge import check_name
    from envcheck.errors import UsageError

    for f in fields(o):
        value = getattr(o, f.name)
        if f.name in TEXT_FLAGS and value is not None:
            check_name(value, TEXT_FLAGS[f.name], max_len=4096)
            if not value.strip():
                raise UsageError(f"{TEXT_FLAGS[f.name]}: an empty value")
    if o.time is not None and not _TIME.fullmatch(o.time):
        raise UsageError(f"--time {o.time!r}: expected a Slurm time limit (MINUTES, HH:MM:SS, D-HH:MM:SS, "
                         "UNLIMITED)")
    return o


def _q(text: str) -> str:
    return shlex.quote(str(text))


def _sbatch(option: str, value: object) -> str:
    """One ``#SBATCH --option=value`` line, the value one quoted word (sbatch reads ``#SBATCH`` lines
    with shell-like quoting: quotes and backslashes group, an unquoted ``#`` starts a comment)."""
    text = str(value)
    plain = re.fullmatch(r"[\w@%+=:,./\[\]-]+", text, re.ASCII)  # a hostlist's brackets are not special
    return f"#SBATCH --{option}={text if plain else _q(text)}"


def _verify_args(o: SlurmOptions) -> List[str]:
    args = ["verify", "--tier", o.tier]
    if o.python:
        args += ["--python", o.python]
    if o.lock:
        args += ["--lock", o.lock]
    return args


#: what the batch script's JUnit step needs (said in the script, and by ``fleet slurm`` when this
#: install lacks it): every other command a generated script runs needs envcheck's core only
JUNIT_NEEDS = "fleet.xml (JUnit) needs envcheck's 'junit' extra on the node that merges"


def batch_script(o: SlurmOptions) -> str:
    """The sbatch script (text) for ``o``. The verdict (the job's exit code) and ``fleet.json``
    come from a merge that needs no optional extra; the JUnit XML from a second merge, written
    when that envcheck has the ``junit`` extra and otherwise reported with its reason (newcomer6 #1:
    ``--junit`` on the one merge made a plain ``pip install .`` exit 2 with no fleet.json)."""
    lock = f" --lock {_q(o.lock)}" if o.lock else ""
    lines = ["#!/bin/bash", _sbatch("job-name", o.job_name)]
    if o.partition:
        lines.append(_sbatch("partition", o.partition))
    if o.account:
        lines.append(_sbatch("account", o.account))
    if o.nodelist:
        lines.append(_sbatch("nodelist", o.nodelist))
    if o.nodes:
        lines.append(_sbatch("nodes", int(o.nodes)))
    if o.gpus_per_node:
        lines.append(_sbatch("gpus-per-node", int(o.gpus_per_node)))
    lines += [
        "#SBATCH --ntasks-per-node=1",
        _sbatch("time", o.time or TIME.get(o.tier, TIME['full'])),
        _sbatch("output", f"{o.job_name}-%j.out"),
        "# Written by `envcheck fleet slurm`: verify every node of this allocation, then merge the reports.",
        "# Submit with `sbatch` (or `envcheck fleet slurm … --submit`); REPORTS must be on a filesystem every",
        "# node shares. The job's exit code is fleet merge's: 0 all pass and no drift, 1 otherwise, 2 bad input.",
        "set -u",
        f"ENVCHECK=${{ENVCHECK:-{_q(o.envcheck)}}}",
        f"REPORTS=${{ENVCHECK_REPORTS:-{_q(o.reports)}}}",
        'REPORTS="$REPORTS/$SLURM_JOB_ID"',
        '# a folder named like an option (-x) is made ./-x: mkdir, head and envcheck read it as a path',
        'case "$REPORTS" in -*) REPORTS="./$REPORTS" ;; esac',
        'mkdir -p "$REPORTS"',
        "# one task per node; a failing node must not stop the others (--kill-on-bad-exit=0)",
        f'srun --ntasks-per-node=1 --kill-on-bad-exit=0 "$ENVCHECK" {" ".join(_q(a) for a in _verify_args(o))} \\',
        '    --report "$REPORTS/" > "$REPORTS/verify.log" 2>&1',
        'echo "srun exit $?: per-node output in $REPORTS/verify.log"',
        "# every node of the allocation must have reported (Slurm expands its own node list)",
        'NODES=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd, -)',
        f'"$ENVCHECK" fleet merge "$REPORTS" --expect "$NODES" --save "$REPORTS/fleet.json"{lock}',
        "rc=$?",
        'echo "fleet: $REPORTS/fleet.json (fleet merge --json)"',
        f"# {JUNIT_NEEDS}: the verdict and fleet.json above need no extra, so a node",
        "# without it still gets them; the JUnit XML is written when it can be, else the reason is said",
        f'if "$ENVCHECK" fleet merge "$REPORTS" --expect "$NODES" --junit "$REPORTS/fleet.xml"{lock} \\',
        '    > /dev/null 2> "$REPORTS/fleet-junit.err" || [ -s "$REPORTS/fleet.xml" ]; then',
        '  echo "fleet: $REPORTS/fleet.xml (JUnit)"',
        "else",
        '  echo "fleet: no JUnit XML: $(head -c 1000 "$REPORTS/fleet-junit.err")"',
        "fi",
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
        "# Bad input (exit 2) or a timeout is not the node's fault: it never drains a node. A missing or",
        "# unrunnable envcheck is: the prolog fails loudly (a silent pass would hide every broken node).",
        "# Paths are absolute (slurmd runs prologs as root, in its own folder, with a minimal PATH);",
        "# `envcheck fleet slurm --prolog --envcheck PATH --reports DIR` writes them for the nodes.",
        f"ENVCHECK={_q(o.envcheck)}",
        f"DIR={_q(o.reports)}/prolog",
        'NODE="${SLURMD_NODENAME:-$(hostname -s)}"',
        'if [ ! -x "$ENVCHECK" ]; then',
        '  echo "envcheck prolog: $ENVCHECK is missing or not executable on $NODE: failing the prolog" >&2',
        "  exit 1",
        "fi",
        'mkdir -p "$DIR" 2>/dev/null',
        f'timeout 120 "$ENVCHECK" {args} --force --report "$DIR/$NODE.json" >/dev/null 2>&1',
        "rc=$?",
        'if [ "$rc" -eq 1 ] || [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then  # a check failed / cannot run',
        '  echo "envcheck: quick verify failed on $NODE (exit $rc): $DIR" >&2',
        "  exit 1",
        "fi",
        "exit 0",
    ]) + "\n"


def submit(script: str, wait: bool, timeout: float, run: object = None) -> tuple:
    """Submit ``script`` with ``sbatch`` (``--wait``: until the job ends, at most ``timeout`` s).

    Returns:
        ``(exit code, sbatch's output)``: with ``--wait``, sbatch's exit code is the job's — once
        ``--parsable`` printed a job id; before that the failure is sbatch's own.

    Raises:
        CouldNotRun: sbatch is not installed, or could not be run (exit 3).
        UsageError: it refused before a job existed — no configuration, no controller, a partition
            it refused (its message, ``--wait`` or not; newcomer3 #9).
    """
    from envcheck import runner
    from envcheck.errors import CouldNotRun, UsageError

    if runner.which("sbatch") is None:
        raise CouldNotRun("--submit: sbatch not found (run this on a Slurm login node, or print the script and "
                         "copy it there)")
    argv = ["sbatch", "--parsable"] + (["--wait"] if wait else [])
    res = (run or runner.run)(argv, timeout=timeout, input=script)  # type: ignore[operator]
    if res.returncode is None:
        raise CouldNotRun(f"--submit: {res.error}")
    if res.returncode != 0 and (not wait or job_id(res.stdout) is None):
        said = " / ".join(ln.strip() for ln in (res.stderr or res.stdout).splitlines() if ln.strip())
        raise UsageError(f"--submit: sbatch failed (exit {res.returncode}), no job was submitted: "
                         f"{said[:500] or 'it said nothing'}")
    return res.returncode, (res.stdout + res.stderr).strip()


def job_id(parsable: str) -> Optional[str]:
    """The job id ``sbatch --parsable`` printed first (``4242`` or ``4242;cluster``), or ``None``."""
    first = parsable.strip().splitlines()[0] if parsable.strip() else ""
    m = re.fullmatch(r"(\d+)(?:;\S+)?", first.strip())
    return m.group(1) if m else None
