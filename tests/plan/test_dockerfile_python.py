"""A rendered Dockerfile's Python is the plan's Python (breaker2 F6, F8, F11).

The class: the wheels of a plan carry one CPython tag (cp310, cp313t…); a Dockerfile whose base image
holds another interpreter makes ``pip install`` fail ("no matching distribution") or, for a
free-threaded plan, installs the GIL build under a label that says 3.13t. Checked here on the rendered
files, structurally (the ROCm and Jetson base images cannot be pulled from here):

* F6 — AMD's ROCm-on-WSL wheel sets are cp310 (ROCm 6.1.3, 6.2.3) or cp312 (6.3.4+); the image's
  distribution must ship that python3 (Ubuntu 22.04: 3.10, 24.04: 3.12 — platforms.toml), and
  ``rocm/dev-ubuntu-24.04`` has no ROCm 6.1.x (AMD staff: Ubuntu 24.04 came with ROCm 6.2.0, not
  back-ported: ROCm/legacy-rocm-build#4064, #2939).
* F8 — ``--python 3.13t``/``3.14t``: no official python image is free-threaded
  (docker-library/python#1082) and no Debian/Ubuntu package is (``apt-get install python3.13t`` names a
  package no release has); uv installs one (its ``3.13t`` request form, docs.astral.sh/uv
  concepts/python-versions). The recipe's "venv already done" check must tell a GIL venv apart.
* F11 — Jetson wheels link L4T's CUDA/cuDNN (they bundle none): the image is NVIDIA's l4t-jetpack of
  the build's JetPack, run with ``--runtime nvidia`` (dusty-nv/jetson-containers run.sh, get_l4t_base).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from tests.conftest import run_cli


def instructions(text: str) -> List[Tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined, comments dropped."""
    out: List[Tuple[str, str]] = []
    cur = ""
    for line in text.splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        cur += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            word, _, rest = cur.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            cur = ""
    return out


def well_formed(text: str) -> Dict[str, List[str]]:
    """Instructions by keyword, after the checks every Dockerfile must pass: one FROM, and every ENV
    is KEY=VALUE pairs (Dockerfile has no trailing comments: `ENV A=1  # why` is an error)."""
    by: Dict[str, List[str]] = {}
    for word, args in instructions(text):
        by.setdefault(word, []).append(args)
    assert len(by.get("FROM", [])) == 1, by.get("FROM")
    for env in by.get("ENV", []):
        try:
            tokens = shlex.split(env)
        except ValueError as exc:  # `ENV A=1  # the recipe's $A`: the comment's quote opens a string
            pytest.fail(f"ENV {env!r}: {exc}")
        for token in tokens:
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", token), f"ENV {env!r}: {token!r} is not KEY=VALUE"
    return by


def lock_python(text: str) -> str:
    """The Python of the lock the Dockerfile carries ([build] python)."""
    m = re.search(r"'python = \"([0-9.]+t?)\"'", text)
    assert m, "no lock in the Dockerfile"
    return m.group(1)


def dockerfile(args: List[str]) -> str:
    r = run_cli(["plan", *args, "--format", "docker"])
    assert r.code == 0, (args, r.err)
    return r.out


def distro_python(matrix, os_id: str, version_id: str) -> str:
    rows = [d for d in matrix.distros if d.os_release.get("ID") == os_id and d.os_release.get("VERSION_ID") == version_id]
    assert rows, f"{os_id} {version_id} not in platforms.toml"
    return rows[0].python3


def test_every_rocm_wsl_wheel_set_gets_an_image_whose_python3_is_its_python(matrix):
    sets = [b for b in matrix.builds if b.wsl and b.rocm]
    assert len(sets) >= 5 and {"3.10", "3.12"} <= {p for b in sets for p in b.python}
    for b in sets:
        for py in b.python:
            text = dockerfile(["--gpu", "7900xtx", "--wsl", "--torch", b.torch[0], "--backend", b.variant,
                               "--python", py])
            by = well_formed(text)
            image = by["FROM"][0]
            m = re.fullmatch(r"rocm/dev-ubuntu-(\d\d\.\d\d):(\S+)", image)
            assert m, image
            ubuntu, tag = m.groups()
            assert lock_python(text) == py and f'io.envcheck.python="{py}"' in text
            assert distro_python(matrix, "ubuntu", ubuntu) == py, (b.variant, py, image)
            assert tag == b.rocm
            assert not (ubuntu == "24.04" and tuple(map(int, b.rocm.split(".")[:2])) < (6, 2)), image
            run = " ".join(by["RUN"])
            assert "apt-get install -y --no-install-recommends python3 python3-venv" in run
            assert f"v == '{py}'" in run  # the build stops if the venv's Python is another


def test_the_breaker_commands_now_get_ubuntu_22_04(matrix):
    for driver, tag in (("24.12.1", "6.2.3"), ("24.6.1", "6.1.3")):
        text = dockerfile(["--gpu", "7900xtx", "--wsl", "--driver", driver])
        assert well_formed(text)["FROM"] == [f"rocm/dev-ubuntu-22.04:{tag}"]
        assert lock_python(text) == "3.10"


def _without_row(tmp_path: Path, image: str) -> Path:
    """A copy of the matrices whose docker.toml lacks the [[base_image]] row of ``image``."""
    from envcheck.matrix import default_matrix_dir

    out = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), out)
    text = (out / "docker.toml").read_text()
    blocks = text.split("\n[[")
    kept = [blk for blk in blocks if f'image = "{image}"' not in blk]
    assert len(kept) == len(blocks) - 1
    (out / "docker.toml").write_text("\n[[".join(kept))
    return out


def test_an_apt_image_whose_python3_is_not_the_plans_is_refused_in_one_line(tmp_path):
    mdir = _without_row(tmp_path, "rocm/dev-ubuntu-22.04:{rocm}")
    r = run_cli(["plan", "--matrices", str(mdir), "--gpu", "7900xtx", "--wsl", "--driver", "24.12.1", "--format", "docker"])
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1, r.err
    assert "with Python 3.10" in r.err and "ships Python 3.12" in r.err
    out = tmp_path / "o"
    r = run_cli(["plan", "--matrices", str(mdir), "--gpu", "7900xtx", "--wsl", "--driver", "24.12.1", "-o", str(out)])
    assert r.code == 0 and not (out / "Dockerfile").exists() and "Dockerfile not made" in r.err, r.err
    assert (out / "requirements.txt").exists()


def test_docker_build_refuses_a_known_base_image_with_another_python(matrix):
    from envcheck.docker.build import base_row
    from envcheck.errors import UsageError
    from envcheck.resolve.plan import make_plan
    from tests.conftest import plan_for

    def plan(py):
        from envcheck.resolve import Request

        res = plan_for(matrix, Request(torch=Request.parse_torch("2.13.0"), torch_text="2.13.0", backend="cpu"),
                       os="linux", arch="x86_64", python=py)
        return make_plan(res, matrix)

    assert base_row(plan("3.11"), matrix, "envcheck-base:bookworm").image == "envcheck-base:bookworm"  # Debian 12: 3.11
    with pytest.raises(UsageError, match="ships Python 3.11 .*not 3.12"):
        base_row(plan("3.12"), matrix, "envcheck-base:bookworm")


# -- F8: free-threaded plans ---------------------------------------------------------------------

FT_MACHINES = [["--gpu", "RTX 4090"], ["--backend", "cpu", "--os", "linux", "--arch", "x86_64"], ["--gpu", "MI300X"]]


@pytest.mark.parametrize("python", ["3.13t", "3.14t"])
@pytest.mark.parametrize("machine", FT_MACHINES, ids=["cuda", "cpu", "rocm"])
def test_a_free_threaded_plan_gets_a_free_threaded_python_in_its_image(machine, python):
    r = run_cli(["plan", *machine, "--python", python, "--format", "docker"])
    if r.code == 1 and "no PyTorch build fits" in (r.out + r.err):
        pytest.skip(f"no build for {python} on {machine}")
    assert r.code == 0, r.err
    text = r.out
    by = well_formed(text)
    assert not by["FROM"][0].startswith("python:")  # the official image has no free-threaded build
    assert lock_python(text) == python and f'io.envcheck.python="{python}"' in text
    run = " ".join(by["RUN"])
    assert f"uv python install {python}" in run and f"uv venv --seed --python {python} /opt/venv" in run
    assert "Py_GIL_DISABLED" in run and f"== '{python}'" in run  # the build stops on a GIL venv
    copies = [c for c in by.get("COPY", []) if "astral-sh/uv" in c]
    assert len(copies) == 1 and re.search(r"--from=ghcr\.io/astral-sh/uv:\d+\.\d+\S* /uv /uvx /bin/", copies[0])


@pytest.mark.parametrize("distro", [[], ["--distro", "debian12"], ["--distro", "ubuntu24.04"], ["--distro", "rhel9"]])
def test_a_free_threaded_recipe_asks_no_distribution_for_a_python3_13t_package(distro, tmp_path):
    out = tmp_path / "o"
    r = run_cli(["plan", "--gpu", "RTX 4090", "--python", "3.13t", *distro, "--format", "script", "-o", str(out)])
    assert r.code == 0, r.err
    script = (out / "install.sh").read_text()
    assert not re.search(r"(apt-get|dnf) install[^\n]*python3\.13t", script), "a package no distribution has"
    assert "uv python install 3.13t" in script and "uv venv --seed --python 3.13t" in script


def test_a_free_threaded_uv_project_says_to_pin_the_free_threaded_python():
    """requires-python is a version range: only .python-version (`uv python pin 3.13t`) asks uv for 3.13t."""
    r = run_cli(["plan", "--gpu", "RTX 4090", "--python", "3.13t", "--format", "uv"])
    assert r.code == 0 and "`uv python pin 3.13t`" in r.out, r.err
    r = run_cli(["plan", "--gpu", "RTX 4090", "--python", "3.13", "--format", "uv"])
    assert r.code == 0 and "uv python pin" not in r.out


def _venv_skip_if(matrix, python: str) -> str:
    row = next(r for r in matrix.recipe if r.key == "venv")
    return row.skip_if.replace("{{python}}", python)


@pytest.mark.subprocess
def test_the_venv_step_does_not_take_a_gil_venv_for_a_free_threaded_one(matrix, tmp_path):
    """A real venv of this machine's (GIL) Python: done for its own X.Y, not done for X.Yt."""
    import sys
    import sysconfig

    assert not sysconfig.get_config_var("Py_GIL_DISABLED"), "this test needs a GIL interpreter"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    mm = f"{sys.version_info[0]}.{sys.version_info[1]}"

    def done(python: str) -> bool:
        cmd = _venv_skip_if(matrix, python)
        r = subprocess.run(["bash", "-c", cmd], env={"VENV": str(tmp_path / "venv"), "PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, timeout=60)
        return r.returncode == 0

    assert done(mm)
    assert not done(mm + "t")
    assert not done("3.1")


# -- F11: Jetson ---------------------------------------------------------------------------------

def _jetson_args(matrix, b) -> List[str]:
    """Flags for a Jetson of the build's JetPack generation (platforms.toml [[jetpack]])."""
    gen = next(j for j in matrix.jetpacks if b.channel in j.channels)
    gpu = {"4": "Jetson Nano", "7": "Jetson AGX Thor"}.get(gen.major, "Jetson AGX Orin")
    return ["--gpu", gpu, "--distro", gen.distro, "--torch", b.torch[0], "--backend", b.variant, "--python", b.python[0]]


def test_every_jetson_wheel_set_gets_the_l4t_image_of_its_jetpack(matrix):
    sets = [b for b in matrix.builds if b.tegra]
    assert len(sets) >= 6
    for b in sets:
        gen = next(j for j in matrix.jetpacks if b.channel in j.channels)
        if gen.major == "4":
            # NVIDIA's l4t-jetpack images begin with r35 (JetPack 5): a JetPack 4 plan writes no Dockerfile
            # and says why, rather than putting JetPack 4's wheel on a JetPack 5 image
            r = run_cli(["plan", *_jetson_args(matrix, b), "--format", "docker"])
            assert r.code == 2 and not r.out and "no Docker base image on record" in r.err, r.err
            continue
        text = dockerfile(_jetson_args(matrix, b))
        by = well_formed(text)
        image = by["FROM"][0]
        m = re.fullmatch(r"nvcr\.io/nvidia/l4t-jetpack:r(\d+)\.(\d+)\.(\d+)", image)
        assert m, (b.channel, b.torch, image)
        l4t = tuple(int(x) for x in m.groups())
        assert str(l4t[0]) == gen.l4t, (b.channel, image)  # the JetPack generation the wheels are built for
        if gen.major == "6":  # an r36 image below r36.4 runs on hosts below r36.4, and r36.4+ on r36.4+
            assert (l4t >= (36, 4, 0)) == b.cuda.startswith("12.6"), (b.channel, b.cuda, image)
        ubuntu = next(d for d in matrix.distros if d.id == gen.distro).os_release["VERSION_ID"]
        assert distro_python(matrix, "ubuntu", ubuntu) == lock_python(text) == b.python[0]
        run = re.search(r"^# Run: +docker run (.*)$", text, re.M).group(1)
        assert "--runtime nvidia" in run and "--gpus" not in run
        assert "libopenblas-dev" in " ".join(by["RUN"])


def test_matrix_validate_wants_the_distro_of_an_apt_image(tmp_path):
    """Without `distro` a python_from = "apt" row serves any Python: the F6 hole, caught in the data."""
    from envcheck.matrix.validate import validate

    mdir = _without_row(tmp_path, "nvcr.io/nvidia/l4t-jetpack:r35.4.1")  # a copy to edit
    text = (mdir / "docker.toml").read_text()
    edited = text.replace('distro = "ubuntu22.04"\n', "", 1)
    assert edited != text
    (mdir / "docker.toml").write_text(edited)
    problems = [str(p) for p in validate(mdir)]
    assert any("needs the distro whose python3 it ships" in p for p in problems), problems
