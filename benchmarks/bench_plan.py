"""`envcheck plan --gpu … -o DIR` wall time against `python -c pass` (goal: ≤ 0.25 s)."""

from __future__ import annotations

import shutil
import sys
import tempfile

from run import time_command


def run():
    out = tempfile.mkdtemp(prefix="envcheck-bench-")
    try:
        base = time_command([sys.executable, "-c", "pass"], repeat=10)
        rows = []
        for label, args in (
            ("plan --gpu 'RTX 4090' -o DIR", ["--gpu", "RTX 4090", "-o", out, "--force"]),
            ("plan --gpu 7900xtx --wsl -o DIR", ["--gpu", "7900xtx", "--wsl", "-o", out, "--force"]),
            ("plan --gpu V100 --json", ["--gpu", "V100", "--json"]),
        ):
            t = time_command([sys.executable, "-m", "envcheck", "plan", *args], repeat=7)
            rows.append({"name": label, "seconds": t, "baseline": "python -c pass",
                         "baseline_seconds": base, "goal": "≤ 0.25 s"})
        return rows
    finally:
        shutil.rmtree(out, ignore_errors=True)
