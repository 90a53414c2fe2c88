"""``verify --distributed``: run the collective check (:mod:`envcheck.fleet.dist_worker`) in the
target interpreter under the launcher's environment, and judge it as one more check."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

#: The check's name in the report.
CHECK = "collectives"
#: The bandwidth buffer and iterations: NCCL on GPUs, gloo on CPUs (smaller: TCP is slow).
SIZES = {"nccl": (256, 20), "gloo": (16, 5)}


def missing_launcher(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Why this process is not a rank of a launched job (``None`` when RANK/WORLD_SIZE are set)."""
    env = os.environ if env is None else env
    if not env.get("RANK") or not env.get("WORLD_SIZE"):
        return ("--distributed needs a launcher: RANK and WORLD_SIZE are not set. Start it with torchrun, e.g.\n"
                "  torchrun --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint HOST:PORT "
                "--no-python envcheck verify --distributed --report reports/")
    return None


def run_collectives(python: str, timeout: float, cuda_hint: bool = False, run: Any = None) -> Dict[str, Any]:
    """Run the worker in ``python`` (inheriting this environment: the launcher's variables) and
    return what it printed, or ``{"error": …}`` when it crashed or hung (``timeout`` seconds for
    joining the group, the same again for the collectives)."""
    from envcheck import runner

    mib, iters = SIZES["nccl" if cuda_hint else "gloo"]
    worker = Path(__file__).with_name("dist_worker.py")
    res = (run or runner.run)([python, str(worker), str(timeout), str(mib), str(iters)],
                              timeout=2 * timeout + 30, env=dict(os.environ))
    for line in reversed(res.stdout.splitlines()):
        if line.startswith("{"):
            try:
                doc = json.loads(line)
            except ValueError:
                break
            if isinstance(doc, dict):
                return doc
    tail = " ".join(res.stderr.strip().splitlines()[-3:])[-400:]
    return {"error": f"{res.error or 'the worker printed no result'}{': ' + tail if tail else ''}"}


def judge(doc: Mapping[str, Any]) -> Tuple[str, str, str]:
    """``(status, detail, fix)`` of the collectives check from the worker's result."""
    err = doc.get("error")
    backend = doc.get("backend") or "?"
    world = doc.get("world_size")
    if err:
        fix = ("every rank must reach MASTER_ADDR:MASTER_PORT (firewall, the interface NCCL_SOCKET_IFNAME/"
               "GLOO_SOCKET_IFNAME picks) and start within the timeout; the other ranks' reports say which "
               "rank is missing")
        if "import torch" in str(err):
            fix = "make torch importable in this interpreter (see the import_torch check)"
        return "fail", f"{backend} across {world or '?'} ranks: {err}", fix
    bad = [k for k in ("all_reduce", "all_gather") if not (doc.get(k) or {}).get("ok")]
    hosts = doc.get("hosts") or []
    bw = doc.get("bandwidth") or {}
    where = f"{backend} all_reduce/all_gather across {world} ranks on {len(set(hosts))} host(s)"
    if bad:
        return ("fail", f"{where}: wrong data from {', '.join(bad)} "
                        f"(max error {(doc.get('all_reduce') or {}).get('max_abs_error')})",
                "a rank computes or transfers wrong data: run the job without this node "
                "(fleet merge names the ranks) and check its GPU/NIC with DCGM diagnostics")
    return ("pass", f"{where}: data right; bus bandwidth {bw.get('busbw_gbps', 0):.3g} GB/s "
                    f"({bw.get('mib')} MiB × {bw.get('iterations')})", "")
