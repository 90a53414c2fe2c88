"""explain's "the first release with code for sm_XY" is the oldest torch on record whose wheels carry a
cubin that runs on the GPU — for ANY Python, the machine's own Python named apart (newcomer6 #5).

On Python 3.11 explain told a GTX 1080 Ti (sm_61) user that the first release with code for sm_61 is
1.13.0+cu117, while the matrix's 1.12.1 (and 1.8.0) builds carry sm_60 cubins, which run on sm_61:
NVIDIA's binary compatibility rule, "a cubin generated for compute capability X.y will only execute on
devices of compute capability X.z where z >= y" (CUDA C++ Programming Guide, Binary Compatibility;
https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility).

The expected release is read here from the torch-builds*.toml rows with tomllib (the Linux x86_64 CUDA
rows' ``sm`` lists), for every NVIDIA architecture the data has a desktop/server GPU for.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from envcheck.machine.describe import apply_flags
from envcheck.matrix.model import vkey
from envcheck.verify import explain

MATRICES = Path(__file__).resolve().parents[2] / "matrices"


def _rows():
    out = []
    for f in sorted(MATRICES.glob("torch-builds*.toml")):
        out += tomllib.loads(f.read_text()).get("build", [])
    return out


def _earliest_with_cubin(arch: str):
    """The oldest torch version of a Linux x86_64 CUDA row with a cubin that runs on ``arch``."""
    major, minor = divmod(int(arch[3:]), 10)
    best = None
    for row in _rows():
        if row.get("tegra") or "linux-x86_64" not in row.get("platforms", ()) or not row.get("cuda"):
            continue
        runs = False
        for sm in row.get("sm", ()):
            m = re.fullmatch(r"sm_(\d+)", sm)  # arch-specific sm_90a / sm_100a cubins do not carry over
            if m:
                ma, mi = divmod(int(m.group(1)), 10)
                runs = runs or (ma == major and mi <= minor)
        if runs:
            for v in row["torch"]:
                if best is None or vkey(v) < vkey(best):
                    best = v
    return best


def _archs_with_a_gpu():
    cuda = tomllib.loads((MATRICES / "cuda.toml").read_text())
    gpus = tomllib.loads((MATRICES / "gpus-nvidia.toml").read_text())["gpu"]
    out = []
    for a in cuda["arch"]:
        sm = a["sm"]
        if not re.fullmatch(r"sm_\d+", sm):
            continue
        names = [g["name"] for g in gpus if g.get("arch") == sm and not g.get("tegra")
                 and "jetson" not in g["name"].lower() and not g.get("host_arch")]
        if names:
            out.append((sm, names[0]))
    return out


ARCHS = _archs_with_a_gpu()


def test_the_data_has_archs_to_check():
    assert len(ARCHS) >= 12, ARCHS


@pytest.mark.parametrize("python", [None, "3.11"])
def test_first_release_with_code_is_the_oldest_row_with_a_cubin_for_the_arch(matrix, python):
    named = 0
    for arch, gpu in ARCHS:
        want = _earliest_with_cubin(arch)
        text = f"NVIDIA {gpu} with CUDA capability {arch} is not compatible with the current PyTorch installation."
        machine = apply_flags(matrix, None, gpus=[gpu], **({"python": python} if python else {}))
        fixes = [f.fix for f in explain(text, matrix, machine, None) if "Held to an older torch?" in f.fix]
        if not fixes:
            continue  # the plan's own pick is the first release with code (nothing older to name)
        said = re.search(r"The first release with code for \S+ is torch (\d+\.\d+\.\d+)", fixes[0])
        assert said, fixes[0]
        assert said.group(1) == want, (arch, gpu, python, said.group(1), want, fixes[0][-400:])
        named += 1
    assert named >= 8, named


def test_the_newcomer_case_names_1_8_and_the_machine_python_apart(matrix):
    text = ("UserWarning: Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of cuda capability 6.1. PyTorch no longer "
            "supports this GPU because it is too old. The minimum cuda capability supported by this library is 7.5.")
    machine = apply_flags(matrix, None, gpus=["GTX 1080 Ti"], python="3.11")
    (fix,) = [f.fix for f in explain(text, matrix, machine, None) if "Held to an older torch?" in f.fix]
    assert "The first release with code for sm_61 is torch 1.8.0" in fix, fix
    assert "with this machine's Python 3.11, torch 1.13.0" in fix, fix  # 1.12.1 has no Python 3.11 wheel
