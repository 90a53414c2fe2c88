"""Run every benchmark (``bench_*.py`` here) and print ratios against baselines measured in the same run.

    python benchmarks/run.py            all benchmarks
    python benchmarks/run.py plan       only bench_plan.py

Each ``bench_*.py`` defines ``run() -> list[dict]`` returning rows
``{"name", "seconds", "baseline", "baseline_seconds", "goal"}``: the ratio printed is
seconds / baseline_seconds (or seconds alone when there is no baseline), each the median of
several runs. Speed is measured here, never asserted in tests.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, List, Sequence

HERE = Path(__file__).resolve().parent


def median_seconds(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` in seconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_env() -> dict:
    """The environment commands are timed in: as a user's, so with byte-code caching on
    (this workplace sets PYTHONDONTWRITEBYTECODE, which would make every run recompile)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def time_command(argv: Sequence[str], repeat: int = 5, warmup: int = 1, **kw) -> float:
    """Median wall time of running ``argv`` to completion (output discarded)."""
    kw.setdefault("env", bench_env())

    def once() -> None:
        subprocess.run(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, **kw)
    return median_seconds(once, repeat, warmup)


def main(argv: List[str]) -> int:
    wanted = set(argv)
    rows = []
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem[len("bench_"):]
        if wanted and name not in wanted:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        try:
            rows.extend(mod.run())
        except Exception as exc:  # a benchmark that cannot run here says why
            rows.append({"name": name, "error": f"{type(exc).__name__}: {exc}"})
    print(f"{'benchmark':<44} {'seconds':>9} {'baseline':>30} {'ratio':>7}  goal")
    for r in rows:
        if "error" in r:
            print(f"{r['name']:<44} skipped: {r['error']}")
            continue
        base = r.get("baseline_seconds")
        ratio = f"{r['seconds'] / base:>6.2f}x" if base else "      -"
        bdesc = f"{r.get('baseline', '')} {base:.3f}s" if base else ""
        print(f"{r['name']:<44} {r['seconds']:>9.3f} {bdesc:>30} {ratio}  {r.get('goal', '')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
