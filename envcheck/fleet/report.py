"""The node report: one versioned JSON document per node (and rank), written by ``verify --report``.

Shape (published as ``schemas/node-report.schema.json``; ``schema`` changes only when a field
changes meaning or goes away — new fields may appear)::

    {"kind": "envcheck-node-report", "schema": 1,
     "envcheck": "0.1.0", "created": "2026-12-01T15:00:00+00:00",
     "host": {"id": "gpu007", "hostname": "gpu007.cluster", "id_from": "SLURMD_NODENAME",
              "shm_bytes": 67108864, "rank": 3, "world_size": 16, "slurm_job_id": "4242"},
     "tier": "quick" | "full" | "custom",
     "status": "pass" | "fail",
     "summary": {"pass": 5, "warn": 0, "skip": 1, "fail": 0},
     "timings": {"started": "...", "seconds": 4.2, "checks": {"matmul": 0.3, ...}},
     "lock": {"path": "envcheck.lock.toml", "sha256": "…"} | null,
     "checks": [{"name", "status", "seconds", "detail", "fix"}, ...],
     "machine": {...},            # the probe's Machine (null when judging saved facts without one)
     "facts": {...},              # the collector's Facts, replayable with `verify --facts`
     "distributed": {...}}        # only with --distributed: the cross-node collective's numbers
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import socket
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

KIND = "envcheck-node-report"
SCHEMA = 1

#: ``--tier quick``: seconds, fit for a Slurm prolog or an init container — torch imports, the
#: build, the arch list and the driver fit the GPUs, the environment (wheels of two CUDA majors, a
#: shadowing library, a small /dev/shm), memory can be had, one matmul is right — and the installed
#: torchvision/torchaudio import and run one op: the lock check reads their probes, so the quick tier
#: collected them anyway, and a node where ``import torchvision`` fails must fail the prolog
#: (newcomer5 #2); in report order.
QUICK_CHECKS = ("import_torch", "cuda_build", "environment", "arch_compat", "driver", "lock", "allocation", "matmul",
                "torchvision_compat", "torchaudio_compat")

#: Environment variables that name the node, most specific first (Slurm, a Kubernetes pod given
#: ``spec.nodeName`` through the downward API, then the usual shell ones).
HOST_VARS = ("ENVCHECK_NODE", "SLURMD_NODENAME", "NODE_NAME", "KUBERNETES_NODE_NAME")

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def tier_checks(tier: Optional[str], all_checks: Sequence[str]) -> List[str]:
    """The checks of a tier, in report order (``None``/``full``: all of them)."""
    if tier == "quick":
        return [c for c in all_checks if c in QUICK_CHECKS]
    return list(all_checks)


def host_identity(env: Optional[Mapping[str, str]] = None, given: Optional[str] = None,
                  distributed: bool = False) -> Dict[str, Any]:
    """Who this node is: ``id`` (what fleet merge lists), where the name came from, the
    scheduler's ids when present, and — with ``distributed`` — the torchrun rank."""
    env = os.environ if env is None else env
    hostname = socket.gethostname()
    if given:
        node, source = given, "--host"
    else:
        node, source = "", "hostname"
        for var in HOST_VARS:
            if env.get(var):
                node, source = env[var], var
                break
        node = node or hostname.split(".")[0] or "localhost"
    host: Dict[str, Any] = {"id": node, "id_from": source, "hostname": hostname}
    for key, var in (("slurm_job_id", "SLURM_JOB_ID"), ("slurm_procid", "SLURM_PROCID"),
                     ("k8s_completion_index", "JOB_COMPLETION_INDEX"), ("k8s_pod", "POD_NAME")):
        if env.get(var):
            host[key] = env[var]
    if distributed:
        for key, var in (("rank", "RANK"), ("local_rank", "LOCAL_RANK"), ("world_size", "WORLD_SIZE"),
                         ("group_rank", "GROUP_RANK")):
            if str(env.get(var, "")).isdigit():
                host[key] = int(env[var])
    shm = shm_bytes()
    if shm is not None:
        host["shm_bytes"] = shm
    return host


def shm_bytes(path: str = "/dev/shm") -> Optional[int]:
    """The size of ``/dev/shm`` (what PyTorch's DataLoader workers and NCCL share memory through),
    or ``None`` where there is none (Windows, macOS)."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return int(st.f_frsize * st.f_blocks)


def lock_digest(path: Optional[Path]) -> Optional[Dict[str, str]]:
    """``{"path", "sha256"}`` of the lock file the checks were judged against (``None`` without one)."""
    if not path:
        return None
    try:
        from envcheck.errors import UsageError
        from envcheck.fsutil import read_input

        digest = hashlib.sha256(read_input(path)).hexdigest()
    except (OSError, UsageError):
        return {"path": str(path), "sha256": ""}
    return {"path": str(path), "sha256": digest}


def node_file_name(host: Mapping[str, Any]) -> str:
    """``gpu007.json``, or ``gpu007-rank3.json`` for a rank of a distributed run."""
    name = _SAFE.sub("_", str(host.get("id") or "node")).strip("._") or "node"
    if "rank" in host:
        name += f"-rank{host['rank']}"
    return name + ".json"


def is_dir_target(target: str | Path) -> bool:
    """``--report DIR/`` or ``DIR/.`` (give it as text, a Path drops it; ``r4/.`` wrote a file ``r4``,
    breaker5 F9) or an existing directory: one file per host and rank."""
    text = str(target)
    return text.endswith(("/", os.sep, "/.", os.sep + ".")) or os.path.isdir(target)  # (no raise for a folder it cannot enter)


def report_path(target: str | Path, host: Mapping[str, Any]) -> Path:
    """Where the report goes: ``target`` itself, or ``target/<node>[-rank<R>].json`` for a folder."""
    return Path(target) / node_file_name(host) if is_dir_target(target) else Path(target)


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def build_report(checks: List[Dict[str, Any]], facts: Dict[str, Any], host: Dict[str, Any], *,
                 tier: str, started: str, seconds: float, lock: Optional[Dict[str, str]] = None,
                 machine: Optional[Dict[str, Any]] = None,
                 distributed: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The node report document (see the module docstring); ``checks`` are ``Check.to_dict()``s."""
    from envcheck import __version__

    summary = {s: sum(1 for c in checks if c.get("status") == s) for s in ("pass", "warn", "skip", "fail")}
    doc: Dict[str, Any] = {
        "kind": KIND,
        "schema": SCHEMA,
        "envcheck": __version__,
        "created": now_iso(),
        "host": host,
        "tier": tier,
        "status": "fail" if summary["fail"] else "pass",
        "summary": summary,
        "timings": {"started": started, "seconds": round(seconds, 3),
                    "checks": {c["name"]: c.get("seconds", 0.0) for c in checks}},
        "lock": lock,
        "checks": checks,
        "machine": machine if machine is not None else (facts.get("machine") if isinstance(facts, dict) else None),
        "facts": facts,
    }
    if distributed is not None:
        doc["distributed"] = distributed
    return doc


def junit_suites(report: Mapping[str, Any]) -> List[Any]:
    """One JUnit suite for a node report: a testcase per check, classname = the node."""
    from envcheck.junit import Case, Suite

    host = report.get("host") or {}
    node = str(host.get("id") or "node")
    if "rank" in host:
        node += f"-rank{host['rank']}"
    cases = [Case(node, str(c.get("name")), str(c.get("status")), float(c.get("seconds") or 0.0),
                  str(c.get("detail") or ""), str(c.get("fix") or "")) for c in report.get("checks") or []]
    props = {"envcheck": report.get("envcheck"), "tier": report.get("tier")}
    if report.get("lock"):
        props["lock_sha256"] = report["lock"].get("sha256")
    return [Suite(node, cases, props, hostname=str(host.get("hostname") or node))]


def saved_host(path: Path) -> Optional[Dict[str, Any]]:
    """The ``host`` of a saved node report (``verify --facts node.json`` keeps the node's identity
    and /dev/shm size); ``None`` for a plain facts file."""
    import json

    try:
        from envcheck.errors import UsageError
        from envcheck.fsutil import read_input

        doc = json.loads(read_input(path))
    except (OSError, ValueError, RecursionError, UsageError):
        return None
    host = doc.get("host") if isinstance(doc, dict) and doc.get("kind") == KIND else None
    return dict(host) if isinstance(host, dict) and isinstance(host.get("id"), str) else None
