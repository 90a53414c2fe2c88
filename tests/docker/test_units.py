"""The parts of `envcheck docker` that need no engine: device flags from matrices/docker.toml,
pip's target tags, wheelhouse matching and download, plans from locks, engine errors."""

from __future__ import annotations

import os

import pytest

from envcheck.app.plan import plan, request_from_flags
from envcheck.docker.engine import DockerError, check_api_version
from envcheck.docker.inside import run_options
from envcheck.docker.wheelhouse import (
    WheelhouseError, abi_of, find_wheel, missing, platform_tags, prepare, pypi_pins, select_pins)
from tests.docker.conftest import CPU_FLAGS

CU130 = ["--gpu", "RTX 4090", "--backend", "cu130", "--torch", "2.14.1", "--python", "3.11"]


def plan_from_flags(flags):
    """``(matrix, plan)`` for a [[ci_target]]-style flag list, as `envcheck docker ci` reads it."""
    result = plan(request_from_flags(flags, "test"))
    return result.matrix, result.plan


def row(matrix, backend):
    return next(r for r in matrix.base_images if r.backend == backend)


def test_nvidia_rocm_wsl_flags_only_for_what_the_host_has(matrix):
    nothing = run_options(row(matrix, "cuda").run_flags, exists=lambda p: False)
    assert "device_requests" not in nothing.kwargs
    assert nothing.skipped[0][0] == "--gpus all" and "/dev/nvidiactl absent" in nothing.skipped[0][1]
    assert nothing.kwargs["ipc_mode"] == "host"

    gpu = run_options(row(matrix, "cuda").run_flags, exists=lambda p: p == "/dev/nvidiactl")
    (req,) = gpu.kwargs["device_requests"]
    assert req["Count"] == -1 and req["Capabilities"] == [["gpu"]]
    assert gpu.skipped == []

    rocm = run_options(row(matrix, "rocm").run_flags, exists=lambda p: p == "/dev/kfd")
    assert rocm.kwargs["devices"] == ["/dev/kfd:/dev/kfd:rwm"]
    assert [f for f, _ in rocm.skipped] == ["--device /dev/dri"]
    assert rocm.kwargs["group_add"] == ["video"] and rocm.kwargs["security_opt"] == ["seccomp=unconfined"]

    wsl = run_options(row(matrix, "rocm-wsl").run_flags, exists=lambda p: p in ("/dev/dxg", "/usr/lib/wsl/lib/libdxcore.so"))
    assert wsl.kwargs["devices"] == ["/dev/dxg:/dev/dxg:rwm"]
    assert wsl.kwargs["volumes"] == {"/usr/lib/wsl/lib/libdxcore.so": {"bind": "/usr/lib/libdxcore.so", "mode": "ro"}}
    assert wsl.kwargs["environment"] == {"HSA_ENABLE_DXG_DETECTION": "1"}
    assert [f for f, _ in wsl.skipped] == ["-v /opt/rocm/lib/librocdxg.so:/usr/lib/librocdxg.so"]


def test_pip_target_tags():
    tags = platform_tags("x86_64", "2.36")
    assert tags[0] == "manylinux_2_36_x86_64" and "manylinux_2_28_x86_64" in tags
    assert tags.index("manylinux_2_17_x86_64") + 1 == tags.index("manylinux2014_x86_64")
    assert tags[-2:] == ["manylinux1_x86_64", "linux_x86_64"]
    assert abi_of("3.11") == "cp311" and abi_of("3.13t") == "cp313t"


def test_wheel_matching_compares_local_labels(tmp_path):
    for name in ("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
                 "torchvision-0.29.1-cp311-cp311-manylinux_2_28_x86_64.whl", "not-a-wheel.whl"):
        (tmp_path / name).write_bytes(b"")
    assert find_wheel(tmp_path, "torch", "2.13.0+cpu").name.startswith("torch-2.13.0+cpu")
    assert find_wheel(tmp_path, "torch", "2.13.0") is None  # the CPU wheel is not PyPI's 2.13.0
    assert missing(tmp_path, {"torch": "2.13.0+cpu", "torchvision": "0.28.0+cpu"}) == ["torchvision==0.28.0+cpu"]
    assert select_pins({"torch": "1", "torchvision": "2"}, ["torch"]) == {"torch": "1"}
    from envcheck.errors import UsageError

    with pytest.raises(UsageError, match="pins only torch, torchvision"):
        select_pins({"torch": "1", "torchvision": "2"}, ["torchaudio"])


def test_given_wheelhouse_without_a_pin_is_refused(tmp_path):
    _, plan = plan_from_flags(CPU_FLAGS)
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    with pytest.raises(WheelhouseError, match=r"no wheel for torchvision==0\.28\.0\+cpu.*--packages torch"):
        prepare(plan, tmp_path, plan.pins, "2.36")
    assert prepare(plan, tmp_path, {"torch": "2.13.0+cpu"}, "2.36").pins == {"torch": "2.13.0+cpu"}


def test_pypi_serves_the_cu130_build_of_2_14_1():
    """matrices/torch-releases.toml: [release.pypi] linux-x86_64 = "cu130" for 2.14.1."""
    _, plan = plan_from_flags(CU130)
    assert plan.pins == {"torch": "2.14.1+cu130", "torchvision": "0.29.1+cu130"}
    assert pypi_pins(plan, plan.pins) == {"torch": "2.14.1", "torchvision": "0.29.1"}
    _, cpu = plan_from_flags(CPU_FLAGS)
    assert pypi_pins(cpu, cpu.pins) is None  # PyPI's 2.13.0 for Linux is not the CPU build


def test_lock_gives_back_its_plan_and_keeps_its_mirror(tmp_path, matrix):
    from envcheck.docker.source import plan_from_lock_file
    from envcheck.render.files import render_lock
    from envcheck.resolve.plan import make_plan

    _, plan = plan_from_flags(CPU_FLAGS + ["--mirror", "https://mirror.example/whl"])
    lock = tmp_path / "envcheck.lock.toml"
    lock.write_text(render_lock(plan))
    again = plan_from_lock_file(lock, matrix)
    assert again.pins == plan.pins == {"torch": "2.13.0+cpu", "torchvision": "0.28.0+cpu"}
    assert again.index_url == "https://mirror.example/whl/cpu"
    assert make_plan(again.resolution, matrix).index_url == "https://download.pytorch.org/whl/cpu"


@pytest.mark.parametrize("packages,want", [("torch", {"torch": "2.13.0+cpu"}),
                                            ("torch,torchvision", {"torch": "2.13.0+cpu", "torchvision": "0.28.0+cpu"})])
def test_docker_build_from_a_lock_pins_exactly_what_it_pins(cli, tmp_path, matrix, packages, want):
    """Newcomer M3: a lock from `plan … --packages torch` pins torch alone, but `docker build --lock`
    re-resolved the companions and asked the wheelhouse for torchvision==0.28.0+cpu. The plan a
    lock gives back pins what the lock pins — in the Dockerfile's install line too."""
    from envcheck.docker.source import plan_from_lock_file
    from envcheck.render.files import render_dockerfile

    out = tmp_path / "out"
    r = cli(["plan", *CPU_FLAGS, "--packages", packages, "--format", "lock", "-o", str(out)])
    assert r.code == 0, r.err
    again = plan_from_lock_file(out / "envcheck.lock.toml", matrix)
    assert again.pins == want
    install = next(ln for ln in render_dockerfile(again).splitlines() if ln.startswith("RUN python -m pip install"))
    assert install.endswith(" ".join(f"{k}=={v}" for k, v in want.items())), install
    step = next(s for s in again.recipe if s.kind == "install")
    assert ("torchvision" in step.commands) == ("torchvision" in want)


def test_lock_and_plan_flags_together_are_bad_input(cli, tmp_path):
    lock = tmp_path / "envcheck.lock.toml"
    lock.write_text("schema = 1\n")
    res = cli(["docker", "build", "--lock", str(lock), "--gpu", "RTX 4090"])
    assert res.code == 2 and "leave out --gpu" in res.err
    res = cli(["docker", "build", "--lock", str(lock)])
    assert res.code == 2 and "build" in res.err and "Traceback" not in res.err


def test_no_engine_is_a_clear_exit_3(cli, monkeypatch, tmp_path):
    """Exit 3 (could not run), not 2: the command line was fine; the engine that must do the work is
    not there. Not 1 either: nothing was judged (no build "does not fit", no check failed)."""
    dead = tmp_path / "docker.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{dead}")
    for argv in (["docker", "verify", "envcheck/torch:2.13.0-cpu"], ["docker", "build", *CPU_FLAGS, "--packages", "torch"]):
        res = cli(argv)
        assert res.code == 3, res.err
        assert f"no Docker engine reachable at unix://{dead}" in res.err and "DOCKER_HOST" in res.err
        assert "Traceback" not in res.err


def test_old_engine_is_refused():
    with pytest.raises(DockerError, match="speaks API 1.23; the docker SDK needs 1.24 or newer"):
        check_api_version("1.23", "1.24")
    check_api_version("1.41", "1.24")


@pytest.mark.subprocess
def test_wheelhouse_download_uses_the_plans_index(wheelhouse, tmp_path, monkeypatch):
    """An empty --wheelhouse is filled by `pip download` from the plan's index (here a mirror of
    /whl/cpu on disk, built from real wheels) for the image's Python and platform; pip's own
    configuration is switched off so nothing else can serve them."""
    from tests.plan.test_install import build_simple_index

    build_simple_index(wheelhouse, tmp_path / "mirror", "cpu")
    for k in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    _, plan = plan_from_flags(CPU_FLAGS + ["--mirror", (tmp_path / "mirror").as_uri()])
    said = []
    wh = prepare(plan, tmp_path / "new", {"torch": "2.13.0+cpu"}, "2.36", said.append)
    got = sorted(p.name.split("-")[0].lower() for p in wh.path.glob("*.whl"))
    assert "torch" in got and "sympy" in got and "filelock" in got
    assert "numpy" in got  # the plan's NumPy (matrices/numpy.toml) comes along
    assert wh.origin == f"pip download from --index-url {(tmp_path / 'mirror').as_uri()}/cpu"
    assert any(s.startswith("Saved ") and "torch-2.13.0+cpu" in s for s in said)
