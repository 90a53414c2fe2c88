"""`envcheck plan --gpu … -o DIR` and `envcheck --help` against `python -c pass`, run in turn in the
same run (issue #9 goals: plan ≤ 0.1 s median wall and ≤ 5x; --help ≤ 3x). `-o DIR --force` re-plans into
the same folder; `-o NEWDIR` writes a new folder each run (removed, untimed, before it), as a first
plan does. ENVCHECK_BENCH_REPEAT sets the number of pairs (default 15).

Time a normal install — `pip install .` into a fresh venv (byte-compiled, not editable: an editable
install adds its import finder) — and run this file with that venv's python:

    python -m venv /tmp/bench && /tmp/bench/bin/pip install . && /tmp/bench/bin/python benchmarks/run.py plan

Each command gets two rows: wall time (what a person waits) and CPU time (user + system: what the
process itself does, steadier than wall time on a shared, loaded machine). The ratios are medians
of pairwise ratios against `python -c pass` run just before each. The matrix cache is warm (a
first run fills it), as it is for anyone's second run.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from run import time_pair

REPEAT = int(os.environ.get("ENVCHECK_BENCH_REPEAT", "15"))


def run():
    out = tempfile.mkdtemp(prefix="envcheck-bench-")
    py = sys.executable
    bare = [py, "-c", "pass"]
    # the `envcheck` command itself (the console script pip puts beside this python), as a user runs
    # it and as issue #9 states the goal; `python -m envcheck` adds runpy's imports (~5 ms) on top
    script = os.path.join(os.path.dirname(py), "envcheck")
    program = [script] if os.path.isfile(script) else [py, "-m", "envcheck"]
    try:
        rows = []
        cases = [
            ("plan --gpu 'RTX 4090' -o DIR --force", ["plan", "--gpu", "RTX 4090", "-o", out, "--force"], 5.0, 0.1),
            # a new folder each run (removed before it): what a first `plan -o` writes, all files new
            ("plan --gpu 'RTX 4090' -o NEWDIR", ["plan", "--gpu", "RTX 4090", "-o", f"{out}/new"], 5.0, 0.1),
            ("plan --gpu 7900xtx --wsl -o DIR --force", ["plan", "--gpu", "7900xtx", "--wsl", "-o", out, "--force"],
             5.0, 0.1),
            ("plan --gpu V100 --json", ["plan", "--gpu", "V100", "--json"], 5.0, 0.1),
            ("--help", ["--help"], 3.0, None),
        ]
        for label, args, max_ratio, max_s in cases:
            fresh = (lambda: shutil.rmtree(f"{out}/new", ignore_errors=True)) if "NEWDIR" in label else (lambda: None)
            t = time_pair([*program, *args], bare, repeat=REPEAT, before_a=fresh)
            goal = f"≤ {max_ratio:g}x" + (f" and ≤ {max_s:g} s" if max_s else "")
            rows.append({"name": f"{label} (wall)", "seconds": t["a_wall"], "baseline": "python -c pass",
                         "baseline_seconds": t["a_wall"] / t["wall_ratio"], "goal": goal,
                         "max_ratio": max_ratio, "max_seconds": max_s})
            rows.append({"name": f"{label} (CPU)", "seconds": t["a_cpu"], "baseline": "python -c pass (CPU)",
                         "baseline_seconds": t["a_cpu"] / t["cpu_ratio"], "goal": f"≤ {max_ratio:g}x",
                         "max_ratio": max_ratio})
        return rows
    finally:
        shutil.rmtree(out, ignore_errors=True)
