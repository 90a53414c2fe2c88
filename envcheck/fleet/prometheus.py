"""``fleet merge --prometheus FILE``: the fleet as node_exporter textfile-collector metrics
(write FILE into the collector's folder; the write is atomic, so a scrape never sees half)."""

from __future__ import annotations

from typing import Any, List


def _label(value: Any) -> str:
    """A label value in the exposition format: backslash, double quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus_text(fleet: Any) -> str:
    """The metrics of a merged :class:`~envcheck.fleet.merge.Fleet`."""
    out: List[str] = []

    def metric(name: str, help_: str, rows: List[tuple]) -> None:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} gauge")
        for labels, value in rows:
            text = ",".join(f'{k}="{_label(v)}"' for k, v in labels)
            out.append(f"{name}{{{text}}} {value}" if text else f"{name} {value}")

    metric("envcheck_fleet_nodes", "Nodes whose envcheck report was read, by status.",
           [((("status", "pass"),), fleet.passed), ((("status", "fail"),), len(fleet.nodes) - fleet.passed)])
    metric("envcheck_fleet_reports_skipped", "Reports that could not be read (truncated, not a report).",
           [((), len(fleet.skipped))])
    if fleet.expected is not None:
        metric("envcheck_fleet_missing_nodes", "Expected nodes (--expect) that sent no readable report.",
               [((), len(fleet.missing))])
    metric("envcheck_node_pass", "1 when every envcheck check passed on the node.",
           [((("node", n.id),), 1 if n.status == "pass" else 0) for n in fleet.nodes])
    metric("envcheck_node_check_failed", "1 for each check that failed on a node.",
           [((("node", n.id), ("check", name)), 1) for n in fleet.nodes for name, status, *_ in n.checks
            if status == "fail"])
    metric("envcheck_fleet_drift_values", "How many different values a fact has across the fleet.",
           [((("fact", d["fact"]),), len(d["values"])) for d in fleet.drift])
    outliers = []
    for d in fleet.drift:
        for o in d["outliers"]:
            outliers.append(((("fact", d["fact"]), ("value", o["value"]), ("nodes", o["nodes"])), o["count"]))
    metric("envcheck_fleet_drift_outliers", "Nodes holding a value of a fact other than the majority's.", outliers)
    if fleet.ranks:
        metric("envcheck_rank_busbw_gbps", "all_reduce bus bandwidth each rank measured (GB/s).",
               [((("node", r["node"]), ("rank", r["rank"])), r["busbw_gbps"]) for r in fleet.ranks["table"]
                if r["busbw_gbps"] is not None])
    return "\n".join(out) + "\n"
