"""`envcheck plan --gpu … -o DIR` and `envcheck --help` wall time against `python -c pass` measured in
the same run (issue #9 goals: plan ≤ 0.1 s median and ≤ 5x; --help ≤ 3x). Time a normal install
(`pip install .`, byte-compiled) for the numbers the goals are about; an editable one adds its finder."""

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
                         "baseline_seconds": base, "goal": "≤ 0.1 s and ≤ 5x"})
        t = time_command([sys.executable, "-m", "envcheck", "--help"], repeat=7)
        rows.append({"name": "--help", "seconds": t, "baseline": "python -c pass", "baseline_seconds": base,
                     "goal": "≤ 3x"})
        return rows
    finally:
        shutil.rmtree(out, ignore_errors=True)
