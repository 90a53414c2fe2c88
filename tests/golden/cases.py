"""The 30 machines of the ``plan --json`` golden test: name → the ``envcheck plan`` flags.

Assorted on purpose — NVIDIA old/new/datacenter, AMD native and under WSL, Intel, Apple, Jetson,
CPU-only, CentOS 7, Windows, several GPUs, a driver too old, a request nothing satisfies — so a
change to the matrix, the resolver or the JSON shows up in a reviewed diff of ``tests/golden/plan/``.
"""

from __future__ import annotations

from typing import Dict, List

PLAN_CASES: Dict[str, List[str]] = {
    "rtx4090-driver550": ["--gpu", "RTX 4090", "--driver", "550.54"],
    "rtx5090-driver570-py311": ["--gpu", "RTX 5090", "--driver", "570.124.06", "--python", "3.11"],
    "rtx5090-driver-unknown": ["--gpu", "rtx5090"],
    "gtx1080ti": ["--gpu", "GTX 1080 Ti"],
    "gtx1080ti-driver470": ["--gpu", "GTX 1080 Ti", "--driver", "470.82.01"],
    "kepler-sm35": ["--gpu", "sm_35"],
    "t4-driver535": ["--gpu", "T4", "--driver", "535.104.05"],
    "v100-centos7": ["--distro", "centos7", "--gpu", "V100"],
    "a100x2-driver525": ["--gpu", "2x A100", "--driver", "525.85.12"],
    "h100-aarch64-driver560": ["--gpu", "H100", "--arch", "aarch64", "--driver", "560.35.03"],
    "h100-a100-mixed": ["--gpu", "H100", "A100"],
    "b200-driver580": ["--gpu", "B200", "--driver", "580.65.06"],
    "rtx3060-windows": ["--os", "windows", "--gpu", "RTX 3060"],
    "rtx4080-windows-py39": ["--os", "windows", "--gpu", "RTX 4080", "--python", "3.9"],
    "rtx4090-wsl-driver560": ["--gpu", "RTX 4090", "--wsl", "--driver", "560.94"],
    "rtx4090-driver390-bad": ["--gpu", "RTX 4090", "--driver", "390.157"],
    "7900xtx-wsl": ["--gpu", "7900xtx", "--wsl"],
    "7900xtx-native": ["--gpu", "7900xtx"],
    "mi300x": ["--gpu", "MI300X"],
    "rx6700xt": ["--gpu", "RX 6700 XT"],
    "rx5700xt-old-rocm": ["--gpu", "RX 5700 XT", "--python", "3.10"],
    "intel-arc-a770": ["--gpu", "Arc A770"],
    "apple-macos14": ["--os", "macos", "--arch", "aarch64", "--macos", "14.5"],
    "macos-x86_64": ["--os", "macos", "--arch", "x86_64"],
    "jetson-orin": ["--gpu", "jetson orin"],
    "cpu-only-linux": ["--backend", "cpu", "--os", "linux"],
    "cpu-torch-2.13.0-py312": ["--backend", "cpu", "--torch", "2.13.0", "--python", "3.12", "--os", "linux"],
    "centos7-cpu-py38": ["--distro", "centos7", "--python", "3.8", "--backend", "cpu"],
    "rtx4090-py313t": ["--gpu", "RTX 4090", "--python", "3.13t"],
    "rtx4090-compile-py314": ["--gpu", "RTX 4090", "--python", "3.14", "--compile"],
}
