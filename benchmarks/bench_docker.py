"""`envcheck docker build` (a cached rebuild: every layer already built) and `envcheck docker
verify` against bare `docker run` of the same image (goals: rebuild ≤ 6×, verify ≤ 2× a
`docker run` that imports torch and runs a matmul).

Needs a Docker engine and the local base image (`envcheck docker base`; or
$ENVCHECK_BENCH_BASE_IMAGE); the wheels come from `pip download torch==2.13.0+cpu` with this
machine's pip configuration. The image is built once first (the warm-up), then timed as a rebuild
(the context upload of ~200 MB of wheels and the cache lookups are what remain), and removed at
the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
TAG = "envcheck-bench/torch:2.13.0-cpu"
CPU = ["--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--os", "linux"]
MATMUL = "import torch; x=torch.randn(256,256); (x@x).sum().item()"


def run() -> List[Dict[str, object]]:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent))
    from run import time_command  # noqa: E402  (benchmarks/run.py)

    from envcheck.docker.wheelhouse import download_argv, platform_tags

    base = os.environ.get("ENVCHECK_BENCH_BASE_IMAGE", "envcheck-base:bookworm")
    if subprocess.run(["docker", "image", "inspect", base], capture_output=True).returncode != 0:
        raise FileNotFoundError(f"no image {base}: run `envcheck docker base` (or set ENVCHECK_BENCH_BASE_IMAGE)")
    envcheck = [sys.executable, "-m", "envcheck"]
    with tempfile.TemporaryDirectory() as tmp:
        wheels = Path(tmp) / "wheels"
        argv = download_argv(wheels, {"torch": "2.13.0+cpu"}, "3.11", platform_tags("x86_64", "2.36"))
        subprocess.run(argv, check=True, capture_output=True)
        build = envcheck + ["docker", "build", *CPU, "--base-image", base, "--wheelhouse", str(wheels),
                            "--packages", "torch", "--tag", TAG, "--json"]
        try:
            rebuild = time_command(build, repeat=3, warmup=1)  # the warm-up is the real build
            bare = time_command(["docker", "run", "--rm", TAG, "true"], repeat=5)
            matmul = time_command(["docker", "run", "--rm", TAG, "python", "-c", MATMUL], repeat=5)
            verify = time_command(envcheck + ["docker", "verify", TAG, "--skip", "torch_compile", "--json"], repeat=3)
            quick = time_command(envcheck + ["docker", "verify", TAG, "--checks", "import_torch,cuda_build,lock",
                                             "--json"], repeat=3)
        finally:
            subprocess.run(["docker", "rmi", "-f", TAG], capture_output=True)
    return [
        {"name": "docker build (cached rebuild, 190 MB wheelhouse)", "seconds": rebuild,
         "baseline": "docker run --rm IMAGE true", "baseline_seconds": bare, "goal": "≤ 6×"},
        {"name": "docker verify --skip torch_compile (13 checks)", "seconds": verify,
         "baseline": "docker run IMAGE python -c 'import torch; matmul'", "baseline_seconds": matmul, "goal": "≤ 2×"},
        {"name": "docker verify --checks import_torch,cuda_build,lock", "seconds": quick,
         "baseline": "docker run IMAGE python -c 'import torch; matmul'", "baseline_seconds": matmul, "goal": "≤ 1.5×"},
    ]
