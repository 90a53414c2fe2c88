"""`--driver 12.8` (the CUDA version nvidia-smi shows, not the driver's own) is visible in the plan
(newcomer5 #9): the header named nothing, and no assumption said how "12.8" was read, although a
driver reporting CUDA 12.8 can be older than the driver the chosen cu128 build needs."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize("gpu,cuda", [("RTX 5090", "12.8"), ("RTX 4090", "12.4"), ("A100", "13.0")])
def test_cuda_form_of_driver_is_in_header_and_assumptions(gpu, cuda):
    text = run_cli(["plan", "-q", "--gpu", gpu, "--driver", cuda])
    assert text.code == 0, text.err
    assert f"driver for CUDA ≤ {cuda}" in text.out.splitlines()[0], text.out.splitlines()[0]
    doc = json.loads(run_cli(["plan", "--gpu", gpu, "--driver", cuda, "--json"]).out)
    assert doc["machine"]["cuda_driver_max"] == cuda
    said = [a for a in doc["assumptions"] if f"CUDA ≤ {cuda}" in a]
    assert len(said) == 1, doc["assumptions"]
    # the driver it names is the one a plan for that driver version says the build needs
    needs = [ln for ln in text.out.splitlines() if ln.strip().startswith("needs")]
    assert needs and needs[0].split("≥ ")[1].split()[0] in said[0], (needs, said)
