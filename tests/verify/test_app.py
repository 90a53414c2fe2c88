"""The verify use case (envcheck.app.verify) called as a library: typed results, no printing, the
same files the command writes. Saved facts of public reports (tests/fixtures/verify/cases, each
citing its report) and a real venv with torch 2.13.0."""

from __future__ import annotations

import dataclasses
import json

import pytest

from envcheck.app.verify import VerifyRequest, VerifyResult, select_checks, verify
from envcheck.errors import OutputExistsError, UsageError
from envcheck.verify.checks import CHECKS
from tests.verify.conftest import CASES


def test_saved_facts_give_a_typed_result_and_print_nothing(capsys):
    # C01: an sm_120 GPU with a build without its kernels (github.com/pytorch/pytorch/issues/150733)
    result = verify(VerifyRequest(facts=CASES / "C01.json", checks=["arch_compat", "import_torch"]))
    assert isinstance(result, VerifyResult)
    assert [c.name for c in result.checks] == ["import_torch", "arch_compat"]  # report order, not the order asked
    arch = result.checks[1]
    assert arch.status == "fail" and "sm_120" in arch.detail and "cu128" in arch.fix
    assert result.failed and result.exit_code == 1
    assert result.machine is None and result.lock is None  # judged from the file alone
    assert result.title == "/home/user/anaconda3/envs/ml/bin/python"
    assert set(result.to_json()) == {"checks", "facts"}
    assert capsys.readouterr() == ("", "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.checks = ()  # type: ignore[misc]


def test_save_facts_is_written_and_never_replaced_without_force(tmp_path):
    target = tmp_path / "sub" / "facts.json"
    verify(VerifyRequest(facts=CASES / "C07.json", checks=["import_torch"], save_facts=target))
    saved = json.loads(target.read_text())
    assert saved["python"]["version"] == json.loads((CASES / "C07.json").read_text())["python"]["version"]
    target.write_text("mine")
    with pytest.raises(OutputExistsError):
        verify(VerifyRequest(facts=CASES / "C07.json", save_facts=target))
    assert target.read_text() == "mine"
    verify(VerifyRequest(facts=CASES / "C07.json", save_facts=target, force=True))
    assert target.read_text() != "mine"


def test_node_report_from_saved_facts(tmp_path):
    out = tmp_path / "reports/"
    out.mkdir()
    result = verify(VerifyRequest(facts=CASES / "C16.json", report=str(out) + "/", tier="custom",
                                  checks=["import_torch", "driver"]))
    doc = json.loads((out / "C16.json").read_text())  # the node is named after the facts file
    assert doc["tier"] == "custom"
    assert [c["name"] for c in doc["checks"]] == [c.name for c in result.checks] == ["import_torch", "driver"]


def test_select_checks():
    assert select_checks() == list(CHECKS)
    quick = select_checks(tier="quick")
    assert "matmul" in quick and "torch_compile" not in quick
    assert select_checks("matmul, lock") == ["lock", "matmul"]
    assert "torch_compile" not in select_checks(skip="torch_compile")
    with pytest.raises(UsageError, match="did you mean matmul"):
        select_checks("matmull")
    with pytest.raises(UsageError, match="leave no check"):
        select_checks("matmul", "matmul")
    with pytest.raises(UsageError, match="no check named"):
        select_checks(" , ")


@pytest.mark.subprocess
def test_a_real_venv(torch_venv, capsys):
    result = verify(VerifyRequest(python=str(torch_venv), checks=["import_torch", "matmul"]))
    by = {c.name: c for c in result.checks}
    assert by["import_torch"].status == "pass" and "2.13.0" in by["import_torch"].detail
    assert by["matmul"].status in ("pass", "skip")
    assert result.exit_code == 0 and result.machine is not None
    assert result.facts.torch_version is not None and result.facts.torch_version.startswith("2.13.0")
    assert "variant" in result.extra and result.elapsed > 0
    assert capsys.readouterr().out == ""


@pytest.mark.subprocess
def test_not_a_python_is_bad_input(tmp_path):
    with pytest.raises(UsageError, match="not a usable Python"):
        verify(VerifyRequest(python="/bin/true", checks=["import_torch"], timeout=20))


def test_an_unknown_check_is_bad_input():
    with pytest.raises(UsageError, match="unknown check 'cuda'"):
        verify(VerifyRequest(facts=CASES / "C01.json", checks=["cuda"]))


# -- explain (envcheck.app.explain) ------------------------------------------------------------------

#: the message of github.com/pytorch/pytorch/issues/150733 (an RTX 5090 with a build lacking sm_120)
SM120 = ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
         "installation. The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 "
         "sm_86 sm_90.")


def test_explain_for_a_described_machine(capsys):
    from envcheck.app.explain import ExplainRequest, explain

    result = explain(ExplainRequest(text=SM120, gpus=["RTX 5090"], os="linux", driver="570.124.06", probe=False))
    assert result.explained and result.exit_code == 0
    assert [f.rule for f in result.findings] == ["arch-not-compatible"]
    fix = result.findings[0].fix
    assert "sm_120" in fix and "--index-url https://download.pytorch.org/whl/cu" in fix
    assert result.machine is not None and result.machine.gpus[0].arch == "sm_120"
    assert result.to_json()[0]["rule"] == "arch-not-compatible"  # type: ignore[index]
    assert capsys.readouterr() == ("", "")


def test_explain_unknown_text_names_the_closest_families():
    from envcheck.app.explain import ExplainRequest, explain

    result = explain(ExplainRequest(text="my cat sat on the keyboard", probe=False))
    assert not result.explained and result.exit_code == 1 and result.machine is None
    assert len(result.closest) <= 3 and all({"rule", "score", "example"} <= set(n) and n["score"] > 0
                                            for n in result.closest)
    assert result.to_json() == {"findings": [], "closest": list(result.closest)}


def test_explain_families_table():
    from envcheck.app.explain import families

    table = families()
    names = [row["family"] for row in table]
    assert len(names) == len(set(names)) > 20
    assert all(row["source"] for row in table)  # every family cites where it comes from


# -- probe (envcheck.app.probe) ----------------------------------------------------------------------

@pytest.mark.subprocess
def test_probe_writes_a_machine_file_it_never_clobbers(tmp_path):
    from envcheck.app.probe import ProbeRequest, probe
    from envcheck.machine.io import load_machine

    target = tmp_path / "node.toml"
    result = probe(ProbeRequest(docker=False, output=target))
    assert result.written == str(target) and result.warning is None
    assert target.read_text().startswith("# envcheck probe")
    assert load_machine(target).os == result.machine.os == "linux"
    target.write_text("mine")
    with pytest.raises(OutputExistsError):
        probe(ProbeRequest(docker=False, output=target))
    assert target.read_text() == "mine"
    with pytest.raises(UsageError, match="is a directory"):
        probe(ProbeRequest(docker=False, output=tmp_path))


def test_a_plain_wheel_is_no_news_on_stderr():
    """newcomer L3: every verify printed "wheel variant none (a plain wheel…) [preview]"; now only -v shows it,
    while a variant wheel (PEP 825 draft, label e.g. 'sm89') is still named at normal verbosity."""
    from envcheck.cli.verify import variant_note

    plain = {"preview": True, "installed": True, "version": "2.13.0+cpu", "label": None, "build": "cpu"}
    text, level = variant_note(plain)
    assert level == 1 and "plain wheel" in text
    text, level = variant_note({**plain, "label": "sm89", "properties": ["nvidia :: sm_arch :: 8.9"]})
    assert level == 0 and "'sm89'" in text
    assert variant_note({"installed": False}) is None and variant_note(None) is None
