"""The one lock module: what `plan` writes is what `verify --lock` reads, field for field, for
machines of every backend (CUDA, ROCm, ROCm on WSL, macOS/MPS, CPU)."""

from __future__ import annotations

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
