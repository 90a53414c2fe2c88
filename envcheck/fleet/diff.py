"""``fleet diff A B``: two nodes, or two fleets (before/after an upgrade).

Each side is a node report, a folder of reports, or a saved ``fleet merge --json``. Two single
nodes are compared fact by fact and check by check; two fleets node by node (matched by name),
with each change grouped as ``fact: old → new`` over a compressed node list, plus the nodes that
came and went and how each fact's majority moved.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from envcheck.fsutil import shown
from envcheck.errors import DataFileError, UsageError
from envcheck.fleet.merge import FLEET_KIND, Fleet, Node, merge


@dataclass
class Side:
    """One side of a diff: its nodes, and what was skipped reading it."""

    label: str
    nodes: List[Node]
    skipped: List[Dict[str, str]] = field(default_factory=list)


def load_side(text: str) -> Side:
    """Read one side (see the module docstring).

    Raises:
        UsageError: it does not exist, or holds no readable report.
    """
    p = Path(text)
    if os.path.isfile(p):  # (False for a folder it cannot enter: merge names the problem)
        try:
            from envcheck.fsutil import read_input

            doc = json.loads(read_input(p))
        except (OSError, ValueError, RecursionError, UsageError):
            doc = None
        if isinstance(doc, dict) and doc.get("kind") == FLEET_KIND:
            if not isinstance(doc.get("nodes"), list):
                raise DataFileError(p, "nodes", "a saved fleet without its nodes (save it with `fleet merge --json`)")
            nodes = []
            for i, n in enumerate(doc["nodes"]):
                if not isinstance(n, dict) or not isinstance(n.get("id"), str) or not isinstance(n.get("facts"), dict):
                    raise DataFileError(p, f"nodes[{i}]", "expected {id, status, facts, checks}")
                checks = [(str(c.get("name")), str(c.get("status")), 0.0, str(c.get("detail") or ""),
                           str(c.get("fix") or "")) for c in n.get("checks") or [] if isinstance(c, dict)]
                nodes.append(Node(n["id"], str(n.get("status")), str(n.get("file") or p), dict(n["facts"]), checks))
            return Side(text, nodes)
    fleet: Fleet = merge([text])
    if not fleet.nodes:
        why = "; ".join(f"{s['file']}: {s['reason']}" for s in fleet.skipped[:3]) or "no *.json report in it"
        raise UsageError(f"{shown(text)}: no readable node report ({why})")
    return Side(text, fleet.nodes, fleet.skipped)


def diff(a: Side, b: Side) -> Dict[str, Any]:
    """The differences between two sides; ``changed`` is false when there are none."""
    if len(a.nodes) == 1 and len(b.nodes) == 1:
        return _node_diff(a.nodes[0], b.nodes[0])
    return _fleet_diff(a, b)


def _checks(n: Node) -> Dict[str, str]:
    return {name: status for name, status, *_ in n.checks}


def _node_diff(x: Node, y: Node) -> Dict[str, Any]:
    from envcheck.fleet.drift import FACTS

    facts = [{"fact": f, "a": x.facts.get(f), "b": y.facts.get(f)} for f in FACTS if x.facts.get(f) != y.facts.get(f)]
    cx, cy = _checks(x), _checks(y)
    checks = [{"check": c, "a": cx.get(c), "b": cy.get(c)} for c in list(dict.fromkeys([*cx, *cy]))
              if cx.get(c) != cy.get(c)]
    return {"kind": "nodes", "a": x.id, "b": y.id, "facts": facts, "checks": checks,
            "status": {"a": x.status, "b": y.status}, "changed": bool(facts or checks or x.status != y.status)}


def _fleet_diff(a: Side, b: Side) -> Dict[str, Any]:
    from envcheck.fleet.drift import FACTS
    from envcheck.fleet.hostlist import compress

    na = {n.id: n for n in a.nodes}
    nb = {n.id: n for n in b.nodes}
    changes: Dict[Tuple[str, Optional[str], Optional[str]], List[str]] = {}
    status: Dict[Tuple[str, str], List[str]] = {}
    for node_id in sorted(set(na) & set(nb)):
        x, y = na[node_id], nb[node_id]
        for f in FACTS:
            if x.facts.get(f) != y.facts.get(f):
                changes.setdefault((f, x.facts.get(f), y.facts.get(f)), []).append(node_id)
        if x.status != y.status:
            status.setdefault((x.status, y.status), []).append(node_id)
    majority = []
    for f in FACTS:
        ma, mb = _majority(a.nodes, f), _majority(b.nodes, f)
        if ma != mb:
            majority.append({"fact": f, "a": ma, "b": mb})
    only_a, only_b = sorted(set(na) - set(nb)), sorted(set(nb) - set(na))
    rows = [{"fact": f, "a": va, "b": vb, "count": len(ids), "nodes": compress(ids)}
            for (f, va, vb), ids in sorted(changes.items(), key=lambda kv: (-len(kv[1]), kv[0][0]))]
    st = [{"a": sa, "b": sb, "count": len(ids), "nodes": compress(ids)} for (sa, sb), ids in sorted(status.items())]
    passed = {"a": sum(n.status == "pass" for n in a.nodes), "b": sum(n.status == "pass" for n in b.nodes)}
    return {"kind": "fleets", "a": a.label, "b": b.label, "nodes": {"a": len(a.nodes), "b": len(b.nodes)},
            "passed": passed, "only_a": compress(only_a), "only_b": compress(only_b), "facts": rows,
            "status": st, "majority": majority,
            "changed": bool(rows or st or only_a or only_b or majority)}


def _majority(nodes: List[Node], fact: str) -> Optional[str]:
    counts: Dict[str, int] = {}
    for n in nodes:
        v = n.facts.get(fact)
        if v is not None:
            counts[v] = counts.get(v, 0) + 1
    return min(counts, key=lambda v: (-counts[v], v)) if counts else None
