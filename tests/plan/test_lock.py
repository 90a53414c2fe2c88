"""The one lock module: what `plan` writes is what `verify --lock` reads, field for field, for
machines of every backend (CUDA, ROCm, ROCm on WSL, macOS/MPS, CPU)."""

from __future__ import annotations

import json

import pytest

from envcheck.lock import LOCK_FILE, LOCK_SCHEMA, Expect, load_lock
from envcheck.render import render
from envcheck.resolve.plan import make_plan
from tests.conftest import plan_for

MACHINES = [
    dict(gpus=["RTX 5090"], driver="570.124.06", python="3.11"),
    dict(gpus=["MI300X"]),
    dict(gpus=["7900xtx"], wsl=True),
    dict(os="macos", arch="aarch64"),
    dict(os="linux", python="3.11"),
]


@pytest.mark.parametrize("flags", MACHINES, ids=lambda f: "-".join(str(v) for v in f.values()))
def test_written_lock_reads_back_as_the_plan(matrix, tmp_path, flags):
    plan = make_plan(plan_for(matrix, None, **flags), matrix)
    path = tmp_path / LOCK_FILE
    path.write_text(render(plan, ["lock"])[LOCK_FILE])
    lock = load_lock(path)
    assert lock.expect == plan.expect()
    assert isinstance(lock.expect, Expect)
    assert lock.torch == plan.release.version and lock.variant == plan.build.variant
    assert lock.pip_lines == plan.pip_lines()
    assert lock.machine is not None and lock.machine.platform == plan.machine.platform


def test_expect_is_typed(matrix):
    plan = make_plan(plan_for(matrix, None, gpus=["RTX 5090"], driver="570.124.06", python="3.11"), matrix)
    exp = plan.expect()
    assert isinstance(exp.cudnn_version, int) and exp.cuda == ".".join(plan.build.cuda.split(".")[:2])
    assert "sm_120" in exp.arch_list and exp.gpu_arch == ("sm_120",)
    assert exp.driver["vendor"] == "nvidia" and exp.get("driver_vendor") == "nvidia"


def test_one_schema_constant():
    import envcheck.render.files as files

    assert not hasattr(files, "LOCK_SCHEMA")  # the writer has no second copy
    assert LOCK_SCHEMA == 1


@pytest.mark.subprocess  # plan for this machine probes it (docker info)
@pytest.mark.parametrize("line, why", [
    ("torch==2.13.0+cpu; touch /tmp/PWNLOCK", "one requirement"),
    ("torch==2.13.0+cpu ; python_version>'3'", "one requirement"),
    ("--index-url https://x.example/whl/cpu; id", "URL or folder"),
    ("--extra-index-url $(id)", "URL or folder"),
    ("torch @ https://x.example/torch.whl", "one requirement"),
    ("torch==2.13.0+cpu --hash=sha256:abc", "one requirement"),
])
def test_a_lock_pip_line_that_is_not_a_requirement_or_index_option_is_malformed(tmp_path, line, why):
    """breaker3 F10: `lock check` passed a lock whose [pip] line carried a shell command ("still
    resolves", exit 0) and verify --lock repeated it in its fix; a lock line is a requirement (with
    --hash options) or an index option, anything else is a malformed lock (exit 2, the key path)."""
    from tests.conftest import run_cli

    out = tmp_path / "lk"
    assert run_cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--format", "lock",
                    "-o", str(out)]).code == 0
    lock = out / "envcheck.lock.toml"
    assert run_cli(["lock", "check", str(lock)]).code == 0
    text = lock.read_text()
    assert '    "torchvision==0.28.0+cpu",\n' in text
    lock.write_text(text.replace('    "torchvision==0.28.0+cpu",\n', f"    {json.dumps(line)},\n"))
    r = run_cli(["lock", "check", str(lock)])
    assert r.code == 2 and "pip.lines[" in r.err and why in r.err, (line, r.err)
