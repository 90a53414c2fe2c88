"""The rules of matrices/diagnoses.toml: each matches its example, renders, and the loader checks them."""

from __future__ import annotations

import re
import shutil

import pytest

from envcheck.errors import DataFileError
from envcheck.verify.context import Context
from envcheck.verify.facts import Facts, facts_from_dict
from envcheck.verify.rules import HELPERS, load_rules, load_tolerances, match, render, template_fields
from tests.verify.conftest import CASES


@pytest.fixture(scope="module")
def rules(matrix):
    return load_rules(matrix)


def test_rules_are_loaded_in_file_order(rules):
    ids = [r.id for r in rules]
    assert ids[0] == "glibc-too-old"  # root causes (torch does not load) first
    assert ids.index("torch-lib-missing") < ids.index("no-nvidia-driver") < ids.index("arch-not-compatible")
    assert len(ids) == len(set(ids))
    assert {"glibc-too-old", "driver-too-old", "no-c-compiler", "torchvision-op-missing"} <= set(ids)


@pytest.mark.parametrize("facts_file", [None, "C01.json", "C09.json", "C10.json"])
def test_every_rule_matches_its_example_and_renders(matrix, rules, facts_file):
    import json

    facts = Facts() if facts_file is None else facts_from_dict(json.loads((CASES / facts_file).read_text()))
    for rule in rules:
        m = re.search(rule.pattern, rule.example)
        assert m, f"{rule.id}: pattern does not match its example"
        f = render(rule, m, Context(facts, matrix))
        assert f.cause and f.fix, rule.id
        for field in template_fields(rule.cause) + template_fields(rule.fix):
            assert "{" + field + "}" not in f.cause + f.fix, (rule.id, field)


def test_first_rule_wins_for_a_check(matrix, rules):
    text = "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file"
    wsl = Context(facts_from_dict({"schema": 1, "platform": {"wsl": True}, "runs": {}}), matrix)
    (f,) = match(rules, text, wsl, check="cudnn_conv")
    assert f.rule == "libcuda-missing-wsl"
    # a rule limited to some checks does not fire for others
    (g,) = match(rules, "operator torchvision::nms does not exist", wsl, check="torchvision_compat")
    assert g.rule == "torchvision-op-missing"
    assert match(rules, "operator torchvision::nms does not exist", wsl, check="matmul") == []


def test_tolerances_cover_the_numeric_checks(matrix):
    tol = load_tolerances(matrix)
    assert tol[("matmul", "float32")].rel_error == 5e-3
    assert tol[("matmul", "bfloat16")].rel_error > tol[("matmul", "float16")].rel_error
    assert {("cudnn_conv", "float32"), ("torch_compile", "float32")} <= set(tol)


def _copy_matrices(tmp_path, matrix, extra: str):
    d = tmp_path / "matrices"
    shutil.copytree(matrix.directory, d)
    with open(d / "diagnoses.toml", "a") as fh:
        fh.write(extra)
    from envcheck.matrix import load_matrix

    return load_matrix(d), d


BAD_FIELD = '''
[[diagnosis]]
id = "bad-field"
pattern = 'boom (?P<what>\\w+)'
cause = "{what} went {sideways}"
fix = "nothing"
example = "boom here"
source = "https://example.org/"
confidence = "community"
'''


def test_unknown_template_field_names_file_and_key(tmp_path, matrix):
    m, d = _copy_matrices(tmp_path, matrix, BAD_FIELD)
    with pytest.raises(DataFileError) as e:
        load_rules(m)
    assert str(d / "diagnoses.toml") in str(e.value)
    assert "].cause: unknown field {sideways}" in str(e.value)


def test_invalid_regex_is_a_data_error(tmp_path, matrix):
    with pytest.raises(DataFileError) as e:
        _copy_matrices(tmp_path, matrix, BAD_FIELD.replace("boom (?P<what>", "boom ((?P<what>"))
    assert "pattern: invalid regular expression" in str(e.value)


def test_every_helper_is_used_by_some_rule_or_check(rules):
    used = {f for r in rules for t in (r.cause, r.fix) for f in re.findall(r"{(\w+)}", t)}
    by_code = {"arch_fix", "driver_fix", "cuda_build_fix", "companion_cause", "companion_fix", "libhsa_fix"}
    assert set(HELPERS) - used - by_code == {"python"}
