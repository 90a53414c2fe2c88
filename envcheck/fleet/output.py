"""What ``verify --report/--junit/--distributed`` does around the checks: name the node, check the
targets before anything runs, and write the node report and its JUnit XML afterwards."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union


def prepare_node(*, report: Optional[Union[str, Path]], junit: Optional[Path], host: Optional[str], facts: Optional[Path],
                 distributed: bool, force: bool) -> Dict[str, Any]:
    """Who this node is and where its files go, checked before anything runs (a target that cannot
    be written is exit 2 before minutes of checks).

    Raises:
        UsageError: --distributed without a launcher (RANK/WORLD_SIZE) or with --facts; a target
            that exists (without --force) or cannot be written.
    """
    from envcheck.errors import UsageError
    from envcheck.fleet.dist import missing_launcher
    from envcheck.fleet.report import host_identity, now_iso, report_path, saved_host
    from envcheck.render.write import check_output_file

    if distributed:
        if facts:
            raise UsageError("--distributed runs collectives now; it cannot judge saved --facts")
        why = missing_launcher()
        if why:
            raise UsageError(why)
    if facts and not host:
        ident = saved_host(facts) or {"id": Path(facts).stem, "id_from": "the --facts file name"}
    else:
        ident = host_identity(given=host, distributed=distributed)
    node: Dict[str, Any] = {"host": ident, "started": now_iso(), "t0": time.monotonic()}
    if report:
        node["report"] = check_output_file(report_path(report, ident), force, "--report")
    if junit:
        node["junit"] = check_output_file(junit, force, "--junit")
    return node


def node_outputs(node: Dict[str, Any], checks: List[Dict[str, Any]], facts: Dict[str, Any], *,
                 tier: str, lock_path: Optional[Path]) -> List[Tuple[str, str, str]]:
    """Build the node report: the files to write, ``(path, text, flag)``, for ``--report`` and its
    JUnit XML (``--junit``), written with the command's other outputs by :func:`fsutil.write_files`."""
    from envcheck.fleet.report import build_report, junit_suites, lock_digest
    from envcheck.junit import junit_text

    doc = build_report(checks, facts, node["host"], tier=tier, started=node["started"],
                       seconds=time.monotonic() - node["t0"], lock=lock_digest(lock_path),
                       distributed=node.get("distributed"))
    out: List[Tuple[str, str, str]] = []
    if node.get("report"):
        out.append((str(node["report"]), json.dumps(doc, indent=1) + "\n", "--report"))
    if node.get("junit"):
        out.append((str(node["junit"]), junit_text(junit_suites(doc)), "--junit"))
    return out
