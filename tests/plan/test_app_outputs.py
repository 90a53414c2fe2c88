"""plan's outputs as a use case (envcheck.app.plan.make_outputs): rendered, written all or
nothing, never over a file without force, --packages applied to every output; nothing printed."""

from __future__ import annotations

import pytest

from envcheck.app.plan import OutputRequest, PlanRequest, Target, make_outputs, plan
from envcheck.errors import OutputExistsError, UsageError

CPU = PlanRequest(target=Target(os="linux", arch="x86_64", python="3.11"), torch="2.13.0", backend="cpu")


def test_written_files_follow_packages(tmp_path, capsys):
    result = plan(CPU)
    assert result.plan is not None and set(result.plan.pins) >= {"torch", "torchvision"}
    made = make_outputs(result, CPU, OutputRequest(formats=("pip", "lock"), packages="torch", output=tmp_path / "o"))
    assert made.plan is not None and list(made.plan.pins) == ["torch"]
    assert sorted(made.written) == sorted(str(tmp_path / "o" / n) for n in ("requirements.txt", "envcheck.lock.toml"))
    req = (tmp_path / "o" / "requirements.txt").read_text()
    assert "torch==2.13.0" in req and "torchvision" not in req
    assert made.files["requirements.txt"] == req
    assert capsys.readouterr() == ("", "")
    (tmp_path / "o" / "requirements.txt").write_text("mine")
    with pytest.raises(OutputExistsError):
        make_outputs(result, CPU, OutputRequest(formats=("pip", "lock"), output=tmp_path / "o"))
    assert (tmp_path / "o" / "requirements.txt").read_text() == "mine"


def test_files_only_when_asked(tmp_path):
    result = plan(CPU)
    assert make_outputs(result, CPU, OutputRequest(formats=("pip",))).files == {}
    shown = make_outputs(result, CPU, OutputRequest(formats=("pip",), print_files=True))
    assert list(shown.files) == ["requirements.txt"] and shown.written == []
    with pytest.raises(UsageError):
        make_outputs(result, CPU, OutputRequest(packages="torchvision"))  # a list without torch


def test_no_build_no_outputs(tmp_path):
    none = PlanRequest(target=Target(os="linux", arch="x86_64", python="3.11"), torch="2.13.0", backend="rocm5.2")
    result = plan(none)
    assert result.plan is None and result.exit_code == 1
    made = make_outputs(result, none, OutputRequest(output=tmp_path / "o"))
    assert made.plan is None and made.written == [] and not (tmp_path / "o").exists()
