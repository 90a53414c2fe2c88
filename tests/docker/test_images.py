"""Real images on the real engine: the CPU plan's image passes verify inside; a wrong torchvision,
a hang, a missing base image, a half-built image and an image without Python each end with a
clear message, a non-zero exit, and nothing left behind."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.docker.conftest import (
    CPU_FLAGS,
    RUN,
    RUN_LABEL,
    TORCH,
    derive_image,
    pip_download,
    run_state,
    run_tag,
    verify_containers,
)

pytestmark = pytest.mark.docker


def by_name(report):
    return {c["name"]: c for c in report["checks"]}


def test_cpu_image_passes_verify_inside(cli, engine, cpu_image, run_base):
    tag, built = cpu_image
    assert built["pins"] == {"torch": TORCH}
    assert built["base_image"] == run_base
    labels = engine.images.get(tag).labels
    assert labels["io.envcheck.torch"] == TORCH and labels["io.envcheck.variant"] == "cpu"
    assert "--no-index --find-links /tmp/wheelhouse" in built["dockerfile"]

    res = cli(["docker", "verify", tag, "--json", "--timeout", "120"])
    assert res.code == 0, res.out[-3000:] + res.err[-2000:]
    rep = res.json()
    checks = by_name(rep)
    assert [n for n, c in checks.items() if c["status"] == "fail"] == []
    # The image holds what the plan pins (torch alone, from the wheelhouse): no NumPy, so torch's import
    # warns and verify says so with its fix — the one warning this image may carry (newcomer L10 is open).
    imp = checks["import_torch"]
    assert imp["status"] == "pass" or (imp["status"] == "warn" and imp["rule"] == "numpy-not-available"), imp
    for name in ("cuda_build", "lock", "matmul", "distributed", "torch_compile"):
        assert checks[name]["status"] == "pass", checks[name]
    assert "label io.envcheck.lock" in checks["lock"]["detail"]  # the lock the image carries
    assert rep["facts"]["python"]["executable"] == "/opt/venv/bin/python3"
    assert rep["docker"]["interpreter"] == "/opt/venv/bin/python3"
    assert rep["docker"]["applied"] == ["--ipc=host"]  # the cpu row's run flags
    assert rep["facts"]["platform"]["container"] is True
    assert verify_containers(engine) == []


def test_quick_tier_inside_and_its_facts_replay_the_same(cli, engine, cpu_image, tmp_path):
    """newcomer3 #15: `docker verify` had no --tier (verify has one; the full run took 110 s, 97 s of it
    torch.compile). --tier quick runs the quick checks in the container; the saved facts replay them."""
    from envcheck.fleet.report import QUICK_CHECKS

    tag, _ = cpu_image
    res = cli(["docker", "verify", tag, "--tier", "quick", "--json", "--timeout", "120"])
    assert res.code == 0, res.out[-3000:] + res.err[-2000:]
    rep = res.json()
    assert [c["name"] for c in rep["checks"]] == [c for c in QUICK_CHECKS]
    assert "torch_compile" not in rep["facts"]["runs"] and "distributed" not in rep["facts"]["runs"]
    assert rep["facts"]["collector"]["tier"] == "quick"
    saved = tmp_path / "facts.json"
    saved.write_text(__import__("json").dumps(rep))
    again = cli(["verify", "--facts", str(saved), "--json"])
    assert [c["name"] for c in again.json()["checks"]] == [c["name"] for c in rep["checks"]]
    assert verify_containers(engine) == []


def test_wrong_torchvision_is_named_inside(cli, engine, cpu_image, tmp_path):
    """torchvision 0.29.1 (built for torch 2.14.1) on torch 2.13.0: verify inside says so."""
    tag, _ = cpu_image
    r = pip_download(tmp_path, ["torchvision==0.29.1"], no_deps=True)
    wheels = list(tmp_path.glob("torchvision-0.29.1-*.whl"))
    if not wheels:
        pytest.skip(f"torchvision 0.29.1 wheel not available here: {r.stderr[-300:]}")
    broken = derive_image(engine, tag, run_tag("torch:broken-tv"),
                          [f"COPY {wheels[0].name} /tmp/", f"RUN python -m pip install --no-deps --no-index /tmp/{wheels[0].name}"],
                          {wheels[0].name: wheels[0].read_bytes()})
    try:
        res = cli(["docker", "verify", broken, "--checks", "import_torch,lock,torchvision_compat", "--json"])
    finally:
        engine.images.remove(broken, force=True)
    assert res.code == 1, res.out[-2000:]
    tv = by_name(res.json())["torchvision_compat"]
    assert tv["status"] == "fail"
    assert "operator torchvision::nms does not exist" in tv["detail"], tv
    assert "torchvision 0.29.1 is built for torch 2.14.1, but the torch loaded is 2.13.0+cpu" in tv["detail"], tv
    # first: the torchvision that pairs with the torch in the image; or: the pair of the stray one
    assert tv["fix"].index("torchvision==0.28.0+cpu") < tv["fix"].index("torch==2.14.1+cpu torchvision==0.29.1+cpu"), tv
    assert verify_containers(engine) == []


def test_hang_inside_is_reported_and_its_container_removed(cli, engine, cpu_image):
    """`import torch` never returns (a .pth hook that blocks it; Debian's own sitecustomize would
    shadow a sitecustomize.py): the check times out, the worker's container is killed and removed,
    exit 1."""
    tag, _ = cpu_image
    hang = (b"import sys, time\n"
            b"class Hang:\n"
            b"    def find_spec(self, name, path=None, target=None):\n"
            b"        if name == 'torch':\n"
            b"            time.sleep(3600)\n"
            b"sys.meta_path.insert(0, Hang())\n")
    site = "/opt/venv/lib/python3.11/site-packages/"
    hung = derive_image(engine, tag, run_tag("torch:hang"),
                        [f"COPY envcheck_hang.py envcheck_hang.pth {site}"],
                        {"envcheck_hang.py": hang, "envcheck_hang.pth": b"import envcheck_hang\n"})
    try:
        res = cli(["docker", "verify", hung, "--checks", "import_torch,matmul", "--timeout", "3", "--json"])
    finally:
        engine.images.remove(hung, force=True)
    assert res.code == 1, res.out[-2000:]
    imp = by_name(res.json())["import_torch"]
    assert imp["status"] == "fail" and "no result within 6 s; the worker was killed" in imp["detail"], imp  # 2 × --timeout
    assert verify_containers(engine) == []


def test_missing_base_image_fails_cleanly(cli, engine):
    before = run_state(engine)
    nope = run_tag("nope:1")
    res = cli(["docker", "build", *CPU_FLAGS, "--base-image", "envcheck-missing:nope", "--tag", nope])
    assert res.code == 3
    assert f"building {nope} failed" in res.err and "envcheck-missing" in res.err, res.err
    assert "Traceback" not in res.err
    assert run_state(engine) == before
    assert not engine.images.list(name=nope)


def test_failed_step_leaves_no_intermediate_image(cli, engine, cpu_image, run_base, wheelhouse, tmp_path):
    """A wheelhouse with torch but not its dependencies: pip fails inside the build after the COPY
    step made a layer; that layer and the build's containers are removed."""
    tag, _ = cpu_image  # the base's earlier layers exist already (cached, not ours to remove)
    only = tmp_path / "only-torch"
    only.mkdir()
    for whl in wheelhouse.glob("torch-*.whl"):
        shutil.copy(whl, only / whl.name)
    before = run_state(engine)  # built FROM run_base: its layers and build containers carry the run label
    half = run_tag("half:1")
    res = cli(["docker", "build", *CPU_FLAGS, "--base-image", run_base, "--wheelhouse", str(only),
               "--packages", "torch", "--tag", half])
    assert res.code == 3
    assert f"building {half} failed" in res.err and "No matching distribution" in res.err, res.err[-1500:]
    assert "removed 1 intermediate image(s)" in res.err, res.err[-800:]
    assert run_state(engine) == before


def test_image_without_python_is_a_clear_error(cli, engine):
    empty = derive_image(engine, "scratch", run_tag("empty:1"), [f"LABEL note=\"no files at all\" {RUN_LABEL}={RUN}"], {})
    try:
        res = cli(["docker", "verify", empty, "--checks", "import_torch"])
    finally:
        engine.images.remove(empty, force=True)
    assert res.code == 3
    assert "looking for Python in" in res.err and "--python PATH" in res.err, res.err
    assert verify_containers(engine) == []


def test_the_wheels_line_prints_a_control_character_path_inert(cli, engine, cpu_image, run_base, wheelhouse,
                                                               tmp_path):
    """hfix10 put `docker build`'s "wheels:" line through fsutil.shown() untested. Run for real, that line
    says how the wheels got there ("a wheelhouse given on the host (pip --no-index)"), never the folder, so
    a wheelhouse named with a newline, ESC and BEL must leave the whole output inert: one "wheels:" line,
    no control character, no forged line (breaker5 F10). The recipe is cpu_image's, so the engine's layer
    cache makes this build take seconds once that image exists."""
    odd = tmp_path / "wh\x1b]0;owned\x07\nFAIL fake"
    odd.mkdir()
    for whl in wheelhouse.iterdir():
        os.link(whl, odd / whl.name)  # same files: the build context is the same, its layers are cached
    tag = run_tag("odd:1")
    res = cli(["docker", "build", *CPU_FLAGS, "--base-image", run_base, "--wheelhouse", str(odd),
               "--packages", "torch", "--tag", tag])
    assert res.code == 0, res.err[-2000:]
    wheels = [line for line in res.out.splitlines() if "wheels:" in line]
    assert len(wheels) == 1 and wheels[0].endswith("wheels: a wheelhouse given on the host (pip --no-index)"), res.out
    assert "\x1b" not in res.out and "\x07" not in res.out and not any(
        line.startswith("FAIL fake") for line in res.out.splitlines()), res.out
