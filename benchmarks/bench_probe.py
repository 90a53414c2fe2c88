"""``envcheck probe --json`` against ``python -m torch.utils.collect_env`` (goal: ≤ 0.05× its time, issue #9).

Both run as fresh processes, as a person would run them. collect_env runs in a venv with torch
2.13.0 (``$ENVCHECK_BENCH_TORCH_VENV``, default /work/venvs/torch-2.13.0); probe runs with this
interpreter. Also timed: probe of a replayed multi-GPU + AMD tree in-process (no process start).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
TORCH_VENV = Path(os.environ.get("ENVCHECK_BENCH_TORCH_VENV", "/work/venvs/torch-2.13.0"))


def _torch_python() -> Path:
    return TORCH_VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def run() -> List[Dict[str, object]]:
    sys.path.insert(0, str(HERE))
    from run import median_seconds, time_command, time_pair  # noqa: E402  (benchmarks/run.py)

    rows: List[Dict[str, object]] = []
    probe_cmd = [sys.executable, "-m", "envcheck", "probe", "--json"]
    torch_py = _torch_python()
    if torch_py.exists():  # in turn (probe, collect_env, probe, …): wall and CPU, medians of the pair ratios
        t = time_pair(probe_cmd, [str(torch_py), "-m", "torch.utils.collect_env"], repeat=5, warmup=1)
        rows.append({"name": "probe --json vs torch collect_env (wall)", "seconds": t["a_wall"],
                     "baseline": "collect_env", "baseline_seconds": t["a_wall"] / t["wall_ratio"],
                     "goal": "<= 0.05x", "max_ratio": 0.05})
        rows.append({"name": "probe --json vs torch collect_env (CPU)", "seconds": t["a_cpu"],
                     "baseline": "collect_env (CPU)", "baseline_seconds": t["a_cpu"] / t["cpu_ratio"],
                     "goal": "<= 0.05x", "max_ratio": 0.05})
    else:
        rows.append({"name": "probe --json", "seconds": time_command(probe_cmd, repeat=7),
                     "goal": f"(no {torch_py} for the baseline: $ENVCHECK_BENCH_TORCH_VENV)"})

    sys.path.insert(0, str(HERE.parent))
    from envcheck.probe import load_probe_matrix, probe_machine
    from tests.probe.replay import machine_replay

    matrix = load_probe_matrix()

    def replayed() -> None:
        root, replay = machine_replay("mixed-3090-7900xtx")
        probe_machine(matrix, root=root, runner=replay, docker=False, nvml=False)

    rows.append({"name": "probe of a replayed NVIDIA+AMD tree (in-process)",
                 "seconds": median_seconds(replayed, repeat=20), "goal": "informational"})
    return rows
