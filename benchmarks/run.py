"""Run every benchmark (``bench_*.py`` here) and print ratios against baselines measured in the same run.

    python benchmarks/run.py            all benchmarks
    python benchmarks/run.py plan       only bench_plan.py

Each ``bench_*.py`` defines ``run() -> list[dict]`` returning rows
``{"name", "seconds", "baseline", "baseline_seconds", "goal"}``: the ratio printed is
seconds / baseline_seconds (or seconds alone when there is no baseline), each the median of
several runs. A row may also give ``max_ratio`` and/or ``max_seconds``: then it says whether the
goal is met (``met`` / ``NOT met``). Speed is measured here, never asserted in tests.

The machine's load is printed first: on a shared machine wall times stretch with it, and the CPU
time of a process (``time_pair``'s ``cpu`` figures) is the steadier measure of its own work.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

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


def time_pair(a: Sequence[str], b: Sequence[str], repeat: int = 15, warmup: int = 2,
              before_a: Callable[[], object] = lambda: None) -> Dict[str, float]:
    """Run ``a`` and ``b`` in turn (A B A B …, so both see the same moments of a shared machine) and
    return the medians of each one's wall and CPU (user + system) seconds and of the pairwise ratios:
    ``{"a_wall", "a_cpu", "b_wall", "b_cpu", "wall_ratio", "cpu_ratio"}``. ``before_a`` runs, untimed,
    before each run of ``a`` (e.g. removing the folder ``a`` writes, so each run writes a new one).

    Both run in an empty temporary folder: ``python -m envcheck`` from the repository root would
    import the source tree instead of the installed package, and find the repository's pyproject.toml."""
    env = bench_env()
    import tempfile

    cwd = tempfile.mkdtemp(prefix="envcheck-bench-cwd-")

    def once(argv: Sequence[str]) -> Tuple[float, float]:
        if argv is a:
            before_a()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    for _ in range(warmup):
        once(a), once(b)
    runs = [(once(a), once(b)) for _ in range(repeat)]
    med = statistics.median
    return {"a_wall": med(x[0][0] for x in runs), "a_cpu": med(x[0][1] for x in runs),
            "b_wall": med(x[1][0] for x in runs), "b_cpu": med(x[1][1] for x in runs),
            "wall_ratio": med(x[0][0] / x[1][0] for x in runs),
            "cpu_ratio": med(x[0][1] / max(x[1][1], 1e-6) for x in runs)}


def verdict(row: Dict[str, Any]) -> str:
    """``met`` / ``NOT met`` for a row with ``max_ratio``/``max_seconds``, else ``""``."""
    checks = []
    if row.get("max_ratio") is not None and row.get("baseline_seconds"):
        checks.append(row["seconds"] / row["baseline_seconds"] <= row["max_ratio"])
    if row.get("max_seconds") is not None:
        checks.append(row["seconds"] <= row["max_seconds"])
    if not checks:
        return ""
    return "met" if all(checks) else "NOT met"


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
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"python {sys.version.split()[0]} ({sys.executable}); {os.cpu_count()} CPUs"
          + (f"; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min)" if load else ""))
    print(f"{'benchmark':<50} {'seconds':>9} {'baseline':>32} {'ratio':>7}  goal")
    for r in rows:
        if "error" in r:
            print(f"{r['name']:<50} skipped: {r['error']}")
            continue
        base = r.get("baseline_seconds")
        ratio = (f"{r['seconds'] / base:>6.2f}x" if r["seconds"] >= base else f"{r['seconds'] / base:>6.3f}x") \
            if base else "      -"
        bdesc = f"{r.get('baseline', '')} {base:.3f}s" if base else ""
        print(f"{r['name']:<50} {r['seconds']:>9.3f} {bdesc:>32} {ratio}  {r.get('goal', '')}  {verdict(r)}".rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
