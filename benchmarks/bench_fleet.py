"""``envcheck fleet merge`` over 1,000 generated node reports against reading the same files with
``json.load`` (goal: the whole command < 2 s and < 200 MiB peak memory).

The reports are made from a real report (``verify --facts`` of the recorded case C01, the shape
``verify --report`` writes, with this machine's probe added as a live run has it) with 1,000 node
names, ~3 % of nodes drifting in one fact and ~2 % failing a check, so merge does its full work (failures by cause, drift, hostlists).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NODES = 1000

BASELINE = "import json,os,sys\nd=sys.argv[1]\nfor n in sorted(os.listdir(d)):\n    json.load(open(os.path.join(d,n),'rb'))"


def make_reports(d: Path) -> int:
    """Write the reports; return the size of one in bytes."""
    base_file = d.parent / "base.json"
    subprocess.run([sys.executable, "-m", "envcheck", "verify", "--facts",
                    str(ROOT / "tests" / "fixtures" / "verify" / "cases" / "C01.json"), "--report", str(base_file)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = json.loads(base_file.read_text())
    # a live report also carries this machine's probe (top level and in the facts): ~10 KiB in all
    probe = subprocess.run([sys.executable, "-m", "envcheck", "probe", "--json"], capture_output=True, text=True)
    if probe.returncode == 0:
        base["machine"] = base["facts"]["machine"] = json.loads(probe.stdout)
    rnd = random.Random(13)
    d.mkdir()
    for i in range(1, NODES + 1):
        doc = json.loads(json.dumps(base))
        doc["host"] = {"id": f"gpu{i:04d}", "id_from": "SLURMD_NODENAME", "shm_bytes": 64 << 30}
        roll = rnd.random()
        if roll < 0.01:
            doc["facts"]["runs"]["cuda_build"]["data"]["driver"]["version"] = "535.183.01"
        elif roll < 0.02:
            doc["host"]["shm_bytes"] = 64 << 20
        elif roll < 0.03:
            doc["facts"]["platform"]["glibc"] = "2.31"
        if rnd.random() > 0.02:
            doc["checks"] = [dict(c, status="pass") for c in doc["checks"]]
        (d / f"gpu{i:04d}.json").write_text(json.dumps(doc, indent=1))
    return len((d / "gpu0001.json").read_bytes())


def usage(argv: List[str]) -> Dict[str, float]:
    """Peak resident memory (MiB) and CPU seconds (user + system) of running ``argv``, measured by
    a fresh parent — CPU time stays meaningful on a loaded machine where wall time does not."""
    probe = ("import resource,subprocess,sys;subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,"
             "stderr=subprocess.DEVNULL);u=resource.getrusage(resource.RUSAGE_CHILDREN);"
             "print(u.ru_maxrss,u.ru_utime+u.ru_stime)")
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True).stdout
    rss, cpu = out.split()
    return {"mib": int(rss) / 1024, "cpu": float(cpu)}  # ru_maxrss is KiB on Linux


def run() -> List[Dict[str, object]]:
    sys.path.insert(0, str(HERE))
    from run import median_seconds, time_command  # noqa: E402  (benchmarks/run.py)

    rows: List[Dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "reports"
        size = make_reports(d)
        merge = [sys.executable, "-m", "envcheck", "fleet", "merge", str(d), "--json"]
        load = [sys.executable, "-c", BASELINE, str(d)]
        base_s = time_command(load, repeat=5)
        rows.append({"name": f"fleet merge {NODES} reports ({size // 1024} KiB each)",
                     "seconds": _time_any(merge),
                     "baseline": "python: json.load each file", "baseline_seconds": base_s, "goal": "< 2 s"})
        um, ul = usage(merge), usage(load)
        rows.append({"name": "  CPU seconds (user+sys) of the merge", "seconds": um["cpu"],
                     "baseline": "json.load each file (CPU s)", "baseline_seconds": ul["cpu"], "goal": "< 2 s"})
        rows.append({"name": "  peak memory, MiB (merge)", "seconds": um["mib"],
                     "baseline": "json.load each file (MiB)", "baseline_seconds": ul["mib"], "goal": "< 200 MiB"})

        # in-process: merge() against the json.load loop alone (interpreter start-up left out)
        sys.path.insert(0, str(ROOT))
        import json as _json
        import os

        from envcheck.fleet.merge import merge as merge_fn

        def loads() -> None:
            for n in sorted(os.listdir(d)):
                with open(d / n, "rb") as fh:
                    _json.load(fh)
        rows.append({"name": "  merge() in-process", "seconds": median_seconds(lambda: merge_fn([str(d)]), repeat=5),
                     "baseline": "json.load loop in-process", "baseline_seconds": median_seconds(loads, repeat=5),
                     "goal": "(ratio only)"})
    return rows


def _time_any(argv: List[str]) -> float:
    """Median wall time of ``argv`` whatever its exit code (merge exits 1: the fleet has drift)."""
    import statistics
    import time

    times = []
    for i in range(6):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if i:  # the first run warms the caches
            times.append(time.perf_counter() - t)
    return statistics.median(times)
