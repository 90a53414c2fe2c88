"""``fleet merge``: read node reports one at a time (thousands; memory bounded by the few facts
kept per node, never by the reports) and tell the fleet's story: how many nodes pass, the failing
checks grouped by cause with compressed node lists, and the drift — every fact that is not the
same on all nodes, its majority value, the outliers, and which values the lock rules out.

A report that cannot be read (truncated, not JSON, not a node report, too large) is named and
skipped; the rest is merged. Exit codes: 0 every node passes and nothing drifts · 1 a node fails,
a fact drifts, a value the lock rules out, a rank missing or slow · 2 bad input (a skipped report,
or nothing to read).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple

from envcheck.errors import UsageError
from envcheck.schema import Scalar, Table, check, list_of, req

#: What merge reads of a report (schema language: envcheck.schema; schemas/node-report.schema.json
#: describes all a node report holds): a named host and a list of check tables. The rest is read
#: leniently — a report from a newer envcheck still merges.
_CHECKS = list_of(Table({"name": "str", "status": "str"}, unknown="allow"))
NODE_REPORT = Table({
    "host": req(Table({"id": req(Scalar("a node name", lambda v: isinstance(v, str) and v != "",
                                                json={"type": "string", "minLength": 1})),
                       "rank": "int", "world_size": "int"}, unknown="allow", what="{id: node name}")),
    "checks": req(_CHECKS), "facts": {},
}, unknown="allow")
#: A plain ``verify --json`` report (no host: the node is named after the file).
VERIFY_REPORT = Table({"checks": req(_CHECKS), "facts": req({})}, unknown="allow")

#: ``fleet merge --json`` (and ``--save``): ``"schema"`` names its JSON Schema,
#: ``schemas/<FLEET_SCHEMA>.json``, like every --json document. ``"kind"`` stays: envchecks before
#: it recognise a saved fleet beside the node reports by it (and skip it), and fleets saved by them
#: (``"schema": 1``) are read by ``kind`` too.
FLEET_KIND = "envcheck-fleet"
FLEET_SCHEMA = "envcheck.fleet-merge.v1"
#: A report larger than this is not read (a node report is tens of KiB).
MAX_REPORT_BYTES = 32 * 1024 * 1024
#: A rank is slow when its bus bandwidth is below this share of the median, or its local compute
#: takes more than 1/this of the median.
SLOW_SHARE = 0.5


@dataclass
class Node:
    """What is kept of one report: enough for the summary, the drift, JUnit and diff."""

    id: str
    status: str
    file: str
    facts: Dict[str, Optional[str]]
    checks: List[Tuple[str, str, float, str, str]]  # name, status, seconds, detail (non-pass), fix
    rank: Optional[int] = None
    world_size: Optional[int] = None
    busbw: Optional[float] = None
    compute: Optional[float] = None
    dist_error: Optional[str] = None
    rules: Dict[str, str] = field(default_factory=dict)  # check → the diagnoses.toml rule that explained it
    host: str = ""  # the node's name without the rank suffix

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"id": self.id, "status": self.status, "file": self.file, "facts": self.facts,
                             "checks": [{"name": n, "status": s, "seconds": t, "detail": det, "fix": fx}
                                        for n, s, t, det, fx in self.checks]}
        if self.rank is not None:
            d.update({"rank": self.rank, "world_size": self.world_size, "busbw_gbps": self.busbw,
                      "compute_seconds": self.compute, "distributed_error": self.dist_error})
        return d


@dataclass
class Fleet:
    """The merged fleet (what ``--json`` prints, plus the exit code)."""

    nodes: List[Node] = field(default_factory=list)
    skipped: List[Dict[str, str]] = field(default_factory=list)
    failures: List[Dict[str, Any]] = field(default_factory=list)
    drift: List[Dict[str, Any]] = field(default_factory=list)
    lock: Optional[Dict[str, Any]] = None
    ranks: Optional[Dict[str, Any]] = None
    duplicates: List[str] = field(default_factory=list)
    expected: Optional[int] = None
    missing: List[str] = field(default_factory=list)  # expected nodes without a readable report

    @property
    def passed(self) -> int:
        return sum(1 for n in self.nodes if n.status == "pass")

    @property
    def exit_code(self) -> int:
        if self.skipped or (not self.nodes and self.expected is None):
            return 2  # (no report and --expect: every expected node is missing, a failing fleet)
        if (self.passed < len(self.nodes) or self.drift or self.duplicates or self.missing
                or (self.lock and self.lock["mismatches"])
                or (self.ranks and (self.ranks["slow"] or self.ranks["missing"] or self.ranks["failed"]))):
            return 1
        return 0

    def to_dict(self, nodes: bool = True) -> Dict[str, Any]:
        from envcheck.fleet.hostlist import compress

        d: Dict[str, Any] = {
            "schema": FLEET_SCHEMA, "kind": FLEET_KIND,
            "nodes_total": len(self.nodes), "hosts_total": len({n.host for n in self.nodes}),
            "ranks_total": sum(1 for n in self.nodes if n.rank is not None), "passed": self.passed, "failed": len(self.nodes) - self.passed,
            "failed_nodes": compress(n.id for n in self.nodes if n.status != "pass"),
            "skipped": self.skipped, "duplicates": self.duplicates,
            "expected": self.expected, "missing": compress(self.missing), "missing_count": len(self.missing),
            "failures": self.failures, "drift": self.drift, "lock": self.lock, "ranks": self.ranks,
            "exit_code": self.exit_code,
        }
        if nodes:
            d["nodes"] = [n.to_dict() for n in self.nodes]
        return d


def _unlistable(exc: OSError) -> None:
    """``os.walk``'s ``onerror``: a folder that cannot be listed is bad input, named (breaker5 F6: it
    was passed over in silence, so `fleet merge` ended exit 2 with no word)."""
    from envcheck.fsutil import shown

    raise UsageError(f"{shown(exc.filename)}: cannot list the folder: {exc.strerror}")


#: why a saved fleet document among the reports is left out (it is named, and is no error)
FLEET_DOCUMENT = "a fleet document (`envcheck fleet merge --save`), not a node report"


def report_files(inputs: Iterable[str]) -> Iterator[Path]:
    """Every ``*.json`` file named or found in the named folders (recursively, sorted), lazily.

    Raises:
        UsageError: an input that does not exist or cannot be reached.
    """
    from envcheck.fsutil import existing_kind, shown

    for text in inputs:
        p = Path(text)
        try:
            kind = existing_kind(p)
        except OSError as exc:
            raise UsageError(f"{shown(text)}: cannot read: {exc.strerror}") from None
        if kind is not None and os.path.isdir(p):
            for root, dirs, files in os.walk(p, onerror=_unlistable):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(".json") and not name.startswith("."):
                        yield Path(root) / name
        elif kind is not None:
            yield p
        else:
            raise UsageError(f"{shown(text)}: no such report or folder")


def read_report(path: Path) -> Tuple[Optional[Dict[str, Any]], str]:
    """``(report, "")`` or ``(None, why it was skipped)``. A ``verify --json`` report (checks and
    facts, no host) is read too: the node is then named after the file."""
    from envcheck.fleet.report import KIND, SCHEMA

    from envcheck.errors import UsageError
    from envcheck.fsutil import read_input

    try:
        # a regular file, size-capped: a FIFO, /dev/zero or a device is skipped, never read forever
        doc = json.loads(read_input(path, cap=MAX_REPORT_BYTES))
    except UsageError as exc:
        return None, str(exc).split(": ", 1)[-1]
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except json.JSONDecodeError as exc:
        text = exc.doc.strip()
        if not text:
            return None, "empty: the node wrote nothing"
        if not text.startswith("{"):  # a report is a JSON object: "nope", an HTML error page (breaker6 F11)
            return None, f"not a JSON report: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        if exc.pos >= len(exc.doc.rstrip()) - 1 or not text.endswith("}"):
            return None, f"truncated (JSON ends at line {exc.lineno}, column {exc.colno}): the node did not finish writing"
        return None, f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    except (ValueError, RecursionError) as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(doc, dict):
        return None, "not a node report (a JSON object is expected)"
    if doc.get("kind") == FLEET_KIND:
        return None, FLEET_DOCUMENT  # a saved merge beside the reports: not a node, not an error
    if doc.get("kind") == KIND:
        if doc.get("schema") != SCHEMA:
            return None, f"node report schema {doc.get('schema')!r}; this envcheck reads {SCHEMA} (upgrade envcheck)"
        spec = NODE_REPORT
    elif isinstance(doc.get("checks"), list) and isinstance(doc.get("facts"), dict):
        doc = {**doc, "host": {"id": path.stem, "id_from": "file name"}}
        spec = VERIFY_REPORT
    else:
        return None, "not an envcheck node report (no kind/checks): `envcheck verify --report` writes them"
    problem = check(doc, spec)
    if problem:
        return None, f"{problem[0]}: {problem[1]}"
    if not any(c.get("status") in ("pass", "warn", "fail") for c in doc["checks"]):
        # nothing was verified on that node (facts without results): not a pass (verify refuses such
        # facts since breaker F17; a report from before, or written by hand, still says so here)
        return None, "checks: no check was judged (every one skipped): nothing says this node works"
    return doc, ""


def _node(doc: Mapping[str, Any], path: Path, pool: Optional[Dict[str, str]] = None) -> Node:
    """What is kept of one report. Strings go through ``pool`` (one copy of each distinct text), so
    memory grows with the fleet's distinct causes and values, not with its size."""
    from envcheck.fleet.drift import node_facts

    pool = {} if pool is None else pool

    def one(text: Any) -> str:
        t = str(text or "")[:2000]
        return pool.setdefault(t, t)

    host = doc["host"]
    checks = []
    rules: Dict[str, str] = {}
    for c in doc["checks"]:
        status = one(c.get("status"))
        secs = c.get("seconds")
        secs = float(secs) if isinstance(secs, (int, float)) and not isinstance(secs, bool) else 0.0
        keep = status != "pass"
        name = one(c.get("name"))
        checks.append((name, status, secs, one(c.get("detail")) if keep else "", one(c.get("fix")) if keep else ""))
        if keep and isinstance(c.get("rule"), str) and c["rule"]:
            rules[name] = one(c["rule"])
    status = "fail" if any(s == "fail" for _, s, *_ in checks) else "pass"
    facts = {k: (one(v) if v is not None else None) for k, v in node_facts(doc).items()}
    node = Node(str(host["id"]), status, str(path), facts, checks, rules=rules, host=str(host["id"]))
    if isinstance(host.get("rank"), int):
        node.rank = host["rank"]
        node.world_size = host.get("world_size") if isinstance(host.get("world_size"), int) else None
        node.id = f"{node.id}-rank{node.rank}"
        raw = doc.get("distributed")
        dist: Dict[str, Any] = raw if isinstance(raw, dict) else {}
        bw: Dict[str, Any] = dist["bandwidth"] if isinstance(dist.get("bandwidth"), dict) else {}
        if isinstance(bw.get("busbw_gbps"), (int, float)):
            node.busbw = float(bw["busbw_gbps"])
        times = dist.get("compute_seconds")
        if isinstance(times, list) and 0 <= node.rank < len(times) and isinstance(times[node.rank], (int, float)):
            node.compute = float(times[node.rank])
        if dist.get("error"):
            node.dist_error = str(dist["error"])[:500]
    return node


def merge(inputs: Iterable[str], lock: Any = None, on_skip: Any = None,
          expect: Optional[Iterable[str]] = None) -> Fleet:
    """Merge the reports under ``inputs`` (files or folders) into a :class:`Fleet`.

    Args:
        lock: a :class:`~envcheck.lock.Lock`: its ``[expect]`` judges every drifting value.
        on_skip: called with ``(path, why)`` for each report that is skipped, as it happens.
        expect: the nodes that should have reported (the job's node list): those without a readable
            report are ``missing`` — a node that died before writing is otherwise invisible.

    Raises:
        UsageError: an input that does not exist.
    """
    fleet = Fleet()
    seen: Dict[str, str] = {}
    pool: Dict[str, str] = {}
    for path in report_files(inputs):
        doc, why = read_report(path)
        if why == FLEET_DOCUMENT:  # named, never dropped silently (breaker5 F6); not a bad report (exit 2)
            if on_skip:
                on_skip(path, why)
            continue
        if doc is None:
            fleet.skipped.append({"file": str(path), "reason": why})
            if on_skip:
                on_skip(path, why)
            continue
        try:
            node = _node(doc, path, pool)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            # a field of the wrong type (a hand-edited or foreign file): skip it like any bad report
            why = f"malformed node report: {type(exc).__name__}: {exc}"[:300]
            fleet.skipped.append({"file": str(path), "reason": why})
            if on_skip:
                on_skip(path, why)
            continue
        del doc
        if node.id in seen:
            fleet.duplicates.append(f"{node.id}: {seen[node.id]} and {path}")
            continue
        seen[node.id] = str(path)
        fleet.nodes.append(node)
    if expect is not None:
        wanted = list(dict.fromkeys(expect))
        have = {n.host for n in fleet.nodes}
        fleet.expected = len(wanted)
        fleet.missing = [n for n in wanted if n not in have]
    fleet.failures = group_failures(fleet.nodes)
    fleet.drift, fleet.lock = find_drift(fleet.nodes, lock)
    fleet.ranks = rank_health(fleet.nodes)
    return fleet


def group_failures(nodes: List[Node]) -> List[Dict[str, Any]]:
    """Failing checks grouped by cause — the check and the diagnosis rule that explained it, else
    its fix, else its detail — biggest group first."""
    from envcheck.fleet.hostlist import compress

    groups: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for n in nodes:
        for name, status, _secs, detail, fix in n.checks:
            if status != "fail":
                continue
            rule = n.rules.get(name, "")
            key = (name, f"rule:{rule}" if rule else (fix or detail))
            g = groups.setdefault(key, {"check": name, "rule": rule, "detail": detail, "fix": fix, "nodes": []})
            g["nodes"].append(n.id)
    out = []
    for g in groups.values():
        out.append({**g, "count": len(g["nodes"]), "nodes": compress(g["nodes"])})
    out.sort(key=lambda g: (-g["count"], g["check"]))
    return out


def find_drift(nodes: List[Node], lock: Any = None) -> Tuple[List[Dict[str, Any]], Optional[Dict[str, Any]]]:
    """Every fact with more than one known value across ``nodes`` (and, with a lock, every fact
    some node has a value of that the lock rules out), with the majority value and the outliers."""
    from envcheck.fleet.drift import FACTS, lock_expectations, lock_rule, lock_says_wrong
    from envcheck.fleet.hostlist import compress

    expect = lock_expectations(lock.expect.to_dict()) if lock is not None else {}
    drift: List[Dict[str, Any]] = []
    lock_rows: List[Dict[str, Any]] = []
    off_lock: set = set()  # nodes with any value the lock rules out
    for fact in FACTS:
        by: Dict[str, List[str]] = {}
        unknown = 0
        for n in nodes:
            v = n.facts.get(fact)
            if v is None:
                unknown += 1
            else:
                by.setdefault(v, []).append(n.id)
        if not by:
            continue
        ranked = sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        wrong = {v for v in by if fact in expect and lock_says_wrong(fact, v, expect[fact])}
        values = [{"value": v, "count": len(ids), "nodes": compress(ids), "lock_wrong": v in wrong}
                  for v, ids in ranked]
        if len(by) > 1:
            drift.append({"fact": fact, "majority": ranked[0][0], "majority_count": len(ranked[0][1]),
                          "outliers": values[1:], "values": values, "unknown": unknown,
                          "lock": lock_rule(fact, expect[fact]) if fact in expect else None})
        if wrong:
            off_lock.update(i for v in wrong for i in by[v])
            lock_rows.append({"fact": fact, "lock": lock_rule(fact, expect[fact]),
                              "wrong": [v for v in values if v["lock_wrong"]]})
    lock_doc = None
    if lock is not None:
        lock_doc = {"path": str(getattr(lock, "path", "")), "torch": getattr(lock, "torch", None),
                    "variant": getattr(lock, "variant", None), "mismatches": lock_rows,
                    "nodes_off_lock": len(off_lock), "off_lock_nodes": compress(off_lock)}
    return drift, lock_doc


def rank_health(nodes: List[Node]) -> Optional[Dict[str, Any]]:
    """For reports of ``verify --distributed``: ranks missing from the world, ranks whose collective
    failed, and slow ranks (bus bandwidth or local compute far from the median)."""
    ranked = [n for n in nodes if n.rank is not None]
    if not ranked:
        return None
    import statistics  # (slow to import: only for distributed runs)

    world = max((n.world_size or 0) for n in ranked) or (max(n.rank or 0 for n in ranked) + 1)
    present = {n.rank for n in ranked}
    missing = [r for r in range(world) if r not in present]
    failed = [{"rank": n.rank, "node": n.id, "error": n.dist_error} for n in ranked if n.dist_error]
    slow: List[Dict[str, Any]] = []
    bws = [n.busbw for n in ranked if n.busbw is not None]
    comps = [n.compute for n in ranked if n.compute is not None]
    med_bw = statistics.median(bws) if bws else None
    med_c = statistics.median(comps) if comps else None
    for n in ranked:
        why = []
        if med_bw and n.busbw is not None and n.busbw < SLOW_SHARE * med_bw:
            why.append(f"bus bandwidth {n.busbw:.3g} GB/s vs median {med_bw:.3g}")
        if med_c and n.compute is not None and n.compute > med_c / SLOW_SHARE:
            why.append(f"local compute {n.compute:.3g} s vs median {med_c:.3g}")
        if why:
            slow.append({"rank": n.rank, "node": n.id, "why": "; ".join(why)})
    return {"world_size": world, "ranks": len(ranked), "missing": missing, "failed": failed, "slow": slow,
            "busbw_gbps_median": med_bw,
            "table": sorted(({"rank": n.rank, "node": n.id, "busbw_gbps": n.busbw, "compute_seconds": n.compute}
                             for n in ranked), key=lambda r: r["rank"])}


def junit_suites(fleet: Fleet) -> List[Any]:
    """JUnit for the fleet: a suite per node (a testcase per check, classname = node) and a
    ``fleet-drift`` suite with a testcase per compared fact (a failure when it drifts)."""
    from envcheck.fleet.drift import FACTS
    from envcheck.junit import Case, Suite

    suites = [Suite(n.id, [Case(n.id, name, status, secs, detail, fix)
                           for name, status, secs, detail, fix in n.checks]) for n in fleet.nodes]
    drifting = {d["fact"]: d for d in fleet.drift}
    cases = []
    for fact in FACTS:
        d = drifting.get(fact)
        if d is None:
            cases.append(Case("fleet-drift", fact, "pass", 0.0, "the same on every node that reports it"))
        else:
            outl = "; ".join(f"{o['value']} on {o['nodes']}" for o in d["outliers"])
            cases.append(Case("fleet-drift", fact, "fail", 0.0,
                              f"majority {d['majority']} ({d['majority_count']} nodes); outliers: {outl}"))
    suites.append(Suite("fleet-drift", cases))
    inputs = [Case("fleet-inputs", s["file"], "error", 0.0, s["reason"]) for s in fleet.skipped]
    inputs += [Case("fleet-inputs", node, "fail", 0.0, "expected (--expect) but sent no readable report")
               for node in fleet.missing]
    if inputs:
        suites.append(Suite("fleet-inputs", inputs))
    return suites
