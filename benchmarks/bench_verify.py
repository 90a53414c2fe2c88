"""``envcheck verify`` (without torch.compile) against ``python -c "import torch; cpu matmul"`` in the
same venv (goal: ≤ 1.5× — torch is imported once, by one worker).

The venv with torch 2.13.0 is ``$ENVCHECK_BENCH_TORCH_VENV`` (default /work/venvs/torch-2.13.0);
envcheck runs with this interpreter against it, as ``verify --python`` does for a venv without
envcheck. Also timed: the same run against saved facts (diagnose alone, no interpreter started).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
TORCH_VENV = Path(os.environ.get("ENVCHECK_BENCH_TORCH_VENV", "/work/venvs/torch-2.13.0"))
BASELINE = "import torch; x=torch.randn(256,256); (x@x).sum().item()"


def run() -> List[Dict[str, object]]:
    sys.path.insert(0, str(HERE))
    from run import time_command  # noqa: E402  (benchmarks/run.py)

    py = TORCH_VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not py.exists():
        raise FileNotFoundError(f"{py}: set ENVCHECK_BENCH_TORCH_VENV to a venv with torch 2.13.0")
    base = time_command([str(py), "-c", BASELINE], repeat=7)
    verify = [sys.executable, "-m", "envcheck", "verify", "--python", str(py), "--skip", "torch_compile", "--json"]
    rows: List[Dict[str, object]] = [
        {"name": "verify --skip torch_compile (13 checks)", "seconds": time_command(verify, repeat=7),
         "baseline": "import torch; cpu matmul", "baseline_seconds": base, "goal": "≤ 1.5×"},
    ]
    quick = verify[:-3] + ["--checks", "import_torch,cuda_build,arch_compat,driver", "--json"]
    rows.append({"name": "verify --checks import,build,arch,driver", "seconds": time_command(quick, repeat=7),
                 "baseline": "import torch; cpu matmul", "baseline_seconds": base, "goal": "≤ 1.2×"})
    with tempfile.TemporaryDirectory() as tmp:
        report = json.loads(subprocess.run(verify, capture_output=True, text=True).stdout)
        facts = Path(tmp) / "facts.json"
        facts.write_text(json.dumps(report["facts"]))
        replay = [sys.executable, "-m", "envcheck", "verify", "--facts", str(facts), "--json"]
        rows.append({"name": "verify --facts FILE (diagnose only)", "seconds": time_command(replay, repeat=7),
                     "baseline": "", "baseline_seconds": None, "goal": "≤ 0.3 s"})
    return rows
