"""Windows + torch.compile on a GPU (#10): no official Triton exists there; the plan carries the
community triton-windows package with a caveat, and verify's compile finding says the same.

Sources: triton-lang/triton-windows README ("Each PyTorch minor version is only guaranteed to work
with a specific Triton minor version", the 2.4–2.13 table as of 2026-07-24; Turing only up to Triton
3.2, Pascal not supported); torch's own Linux METADATA pins (2.14.x: triton~=3.8.0; 2.15.0:
triton~=3.9.0); PyPI's triton-windows file list (3.8.0.post29 newest, no 3.9 as of 2026-12); pytorch/pytorch#116696-class reports of
"Cannot find a working triton installation" (matrices/diagnoses.toml triton-missing).
"""

from __future__ import annotations

from envcheck.matrix.model import vkey
from envcheck.resolve import Request
from envcheck.resolve.plan import make_plan
from envcheck.verify.context import Context
from envcheck.verify.facts import facts_from_dict
from envcheck.verify.rules import HELPERS
from tests.conftest import plan_for


def test_windows_rtx_4090_compile_gets_a_triton_answer(matrix, cli):
    res = plan_for(matrix, Request(compile=True), gpus=["RTX 4090"], os="windows")
    c = res.chosen
    row = c.fit.triton_windows
    assert row is not None and row.torch == ".".join(c.release.version.split(".")[:2])
    assert any(w.code == "compile" and "community" in w.message for w in c.warnings)
    plan = make_plan(res, matrix)
    assert any(f"triton-windows=={row.version}" in s.shell for s in plan.steps)
    r = cli(["plan", "--os", "windows", "--gpu", "RTX 4090", "--compile"])
    assert r.code == 0 and "triton-windows" in r.out


def test_a_release_without_a_triton_windows_row_is_not_planned_for_compile(matrix):
    res = plan_for(matrix, Request(compile=True), gpus=["RTX 4090"], os="windows", python="3.12")
    unrecorded = [x for x in res.candidates if x.build.backend == "cuda" and "windows-x86_64" in x.build.platforms
                  and vkey(x.release.version) >= vkey("2.15")]  # torch 2.15 pins Triton 3.9: no triton-windows 3.9
    assert unrecorded
    assert all(any("triton-windows" in r.message for r in x.reasons if r.code == "compile") for x in unrecorded)


def test_turing_needs_triton_3_2_or_older(matrix):
    res = plan_for(matrix, Request(compile=True), gpus=["RTX 2080"], os="windows")
    assert res.chosen.fit.triton_windows.triton in ("3.1", "3.2")


def test_linux_compile_has_no_triton_step(matrix):
    res = plan_for(matrix, Request(compile=True), gpus=["RTX 4090"])
    assert res.chosen.fit.triton_windows is None


def test_verify_triton_fix_on_windows_names_triton_windows(matrix):
    f = facts_from_dict({"schema": 1, "python": {"version": "3.12.4", "executable": "C:\\\\py\\\\python.exe"},
                         "platform": {"os": "windows", "arch": "AMD64"},
                         "runs": {"import_torch": {"outcome": "ok", "data": {"version": "2.7.1+cu128", "cuda": "12.8"}}}})
    fix = HELPERS["triton_fix"](Context(f, matrix))
    assert "triton-windows==" + matrix.triton_windows["2.7"].version in fix
    assert "no Triton for Windows" in fix and "paired with your torch" not in fix


def test_newer_torch_pairs_with_the_triton_its_linux_wheel_pins(matrix):
    # README 2026-07-24: 2.11 -> 3.6, 2.12/2.13 -> 3.7; torch 2.14's METADATA: triton~=3.8.0
    assert {m: matrix.triton_windows[m].triton for m in ("2.11", "2.12", "2.13", "2.14")} == {
        "2.11": "3.6", "2.12": "3.7", "2.13": "3.7", "2.14": "3.8"}
    assert matrix.triton_windows["2.14"].version == "3.8.0.post29"
    assert "2.15" not in matrix.triton_windows


def test_windows_compile_plans_reach_past_2_10(matrix, cli):
    # the default is the newest verified Windows CUDA set (was 2.10.0 while rows stopped at 2.10);
    # --prefer newest reaches 2.14.x with triton-windows 3.8
    c = plan_for(matrix, Request(compile=True), gpus=["RTX 4090"], os="windows").chosen
    assert vkey(c.release.version) >= vkey("2.11") and c.fit.triton_windows is not None
    r = cli(["plan", "--os", "windows", "--gpu", "RTX 4090", "--compile", "--prefer", "newest", "--json"])
    d = r.json()
    assert d["chosen"]["torch"].startswith("2.14.") and "triton-windows==3.8.0.post29" in r.out
