"""Message families: every family of matrices/diagnoses.toml is recognised in a verbatim message from
a public report (tests/fixtures/verify/messages.toml), Python errors that are not environment
problems match none, and explain reads the platform, GPU and driver from the text and the flags."""

from __future__ import annotations

import json
import re

import pytest

from envcheck.verify.rules import load_rules
from tests.verify.conftest import FIXTURES

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

DATA = tomllib.loads((FIXTURES / "messages.toml").read_text(encoding="utf-8"))
MESSAGES = DATA["message"]
NEGATIVES = DATA["negative"]["texts"]


def explain(cli, text, *flags):
    return cli(["explain", "--no-probe", "--json", *flags, text])


@pytest.mark.parametrize("msg", MESSAGES, ids=[f"{m['family']}-{i}" for i, m in enumerate(MESSAGES)])
def test_family_is_recognised_in_a_public_report(cli, msg):
    assert msg["source"].startswith("https://"), msg
    r = explain(cli, msg["text"], *msg.get("flags", []))
    assert r.code == 0, r.err
    findings = r.json()["findings"]
    assert findings[0]["rule"] == msg["family"], [f["rule"] for f in findings]
    f = findings[0]
    assert f["cause"] and f["fix"] and f["source"]
    assert not re.search(r"(?<!\$)\{[a-z_]+\}", f["cause"] + f["fix"]), f


def test_every_family_has_a_public_message_and_there_are_at_least_40(matrix):
    families = {r.id for r in load_rules(matrix)} - {"distributed-hang"}  # envcheck's own timeout note
    tested = {m["family"] for m in MESSAGES}
    assert families == tested, (families - tested, tested - families)
    assert len(families) >= 40
    assert len({m["source"] for m in MESSAGES}) >= 40  # distinct reports, not one report reused


@pytest.mark.parametrize("text", NEGATIVES)
def test_unrelated_python_errors_match_no_family(cli, text):
    r = explain(cli, text)
    assert r.code == 1, r.out
    doc = r.json()
    assert doc["findings"] == []
    assert len(doc["closest"]) <= 3 and all(c["rule"] and c["score"] > 0 for c in doc["closest"])


def test_there_are_at_least_20_negatives():
    assert len(NEGATIVES) >= 20 and len(set(NEGATIVES)) == len(NEGATIVES)


def test_unknown_text_names_the_closest_families(cli):
    r = cli(["explain", "--no-probe", "RuntimeError: CUDA error: an illegal memory access was encountered"])
    assert r.code == 1
    assert "The closest families it looked for:" in r.err
    # the families named share the text's words ("RuntimeError: CUDA error: …"), whichever rank first
    named = [line.strip() for line in r.err.splitlines() if line.startswith("    ") and ": " in line]
    assert len(named) == 3 and all("CUDA" in line for line in named), named


def test_no_family_sharing_no_word_is_called_close(cli):
    """newcomer L5: `explain "KeyError: 'foo'"` listed the first three families with score 0.0 as closest."""
    r = cli(["explain", "--no-probe", "--json", "KeyError: 'foo'"])
    assert r.code == 1 and r.json()["closest"] == []
    r = cli(["explain", "--no-probe", "KeyError: 'foo'"])
    assert "closest families" not in r.err and "No family envcheck knows is close" in r.err


# -- the text's own facts -----------------------------------------------------------------------

@pytest.mark.parametrize("msg", [m for m in MESSAGES if m.get("os")], ids=lambda m: m["family"])
def test_platform_comes_from_the_paths_in_the_text(msg):
    from envcheck.verify.rules import platform_hints

    assert platform_hints(msg["text"])["os"] == msg["os"]


def test_wsl_from_the_text():
    from envcheck.verify.rules import platform_hints

    msg = next(m for m in MESSAGES if m["family"] == "rocm-no-gpu-wsl")
    assert platform_hints(msg["text"]) == {"os": "linux", "wsl": "true"}


def test_a_windows_paste_on_a_linux_machine_gets_the_windows_answer(cli):
    """Probing this (Linux) machine must not override what the paste shows: no official Triton on
    Windows, so no `pip install triton==…` (which has no Windows wheel)."""
    msg = next(m for m in MESSAGES if m["family"] == "triton-missing-windows")
    r = cli(["explain", "--json", msg["text"]])
    rules = [f["rule"] for f in r.json()["findings"]]
    assert rules == ["triton-missing-windows"]
    assert "triton-windows" in r.json()["findings"][0]["fix"]


def test_a_mac_paste_gets_mps_not_a_cuda_build(cli):
    r = explain(cli, "AssertionError: Torch not compiled with CUDA enabled\n"
                     "  File \"/Users/me/proj/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py\"")
    (f,) = r.json()["findings"]
    assert "mps" in f["fix"] and "download.pytorch.org/whl/cu" not in f["fix"]


def test_the_gfx_target_in_the_text_picks_the_rocm_build(cli):
    r = explain(cli, "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek "
                     "for GPU arch : gfx1100")
    (f,) = r.json()["findings"]
    assert "gfx1100" in f["fix"] and "rocm" in f["fix"], f["fix"]


def test_flags_add_what_the_text_lacks(cli):
    bare = explain(cli, "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!").json()["findings"][0]
    assert "gfx1100" not in bare["fix"]
    r = explain(cli, "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
                "--gpu", "RX 7900 XTX", "--os", "linux")
    (f,) = r.json()["findings"]
    assert "gfx1100" in f["cause"] and "`envcheck plan` picks for this machine, which carries gfx1100" in f["fix"]  # #10 wording
    assert "+rocm" in f["fix"]


def test_driver_flag_limits_the_build(cli):
    """A CPU build on a GPU machine: the CUDA build offered must run on the driver given."""
    r = explain(cli, "AssertionError: Torch not compiled with CUDA enabled", "--gpu", "RTX 3090", "--driver",
                "470.82.01")
    (f,) = r.json()["findings"]
    m = re.search(r"\+cu(\d+)", f["fix"])
    assert m, f["fix"]
    assert int(m.group(1)[:2]) <= 11, f["fix"]  # driver 470 runs CUDA 11.x, never a cu12x build


def test_bad_flags_are_usage_errors(cli):
    r = cli(["explain", "--no-probe", "--gpu", "no such gpu 9000", "x"])
    assert r.code == 2 and "Traceback" not in r.err
    r = cli(["explain", "--os", "beos", "x"])
    assert r.code == 2


# -- the family table ---------------------------------------------------------------------------

def test_list_prints_every_family_with_evidence_cause_fix_source(cli):
    r = cli(["explain", "--list", "--json"])
    assert r.code == 0
    rows = r.json()["families"]
    assert len(rows) >= 40
    for row in rows:
        assert row["evidence"] and row["cause"] and row["fix"] and row["source"], row["family"]
        assert not re.search(r"(?<!\$)\{[a-z_]+\}", row["cause"] + row["fix"]), row["family"]
    text = cli(["explain", "--list"])
    assert text.code == 0
    assert f"{len(rows)} message families" in text.out
    assert "nccl-symbol-mismatch" in text.out and "evidence:" in text.out


def test_readme_family_table_lists_every_family(matrix):
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for r in load_rules(matrix):
        if r.id != "distributed-hang":
            assert f"| `{r.id}` |" in readme, r.id
    json.dumps(readme[:1])  # the README is text


@pytest.mark.subprocess  # the this-machine case probes (nvidia-smi, docker info…)
@pytest.mark.parametrize("flags", [["--no-probe"], []], ids=["nothing-probed", "this-machine"])
def test_no_gpu_known_means_no_cuda_build_and_a_request_for_gpu(cli, flags):
    """newcomer H5: on a machine where no GPU is known, "Torch not compiled with CUDA enabled" got a
    cu130 build called "the build `envcheck plan` picks for this machine" (plan picks +cpu there), and
    cu130 carries no sm_50-sm_70 code (CUDA 13.0 dropped them), the GPUs many who hit this message own
    (pytorch/pytorch#122924 is such a report). The fix must be plan's own answer, and ask for --gpu."""
    r = cli(["explain", "--json", *flags, "AssertionError: Torch not compiled with CUDA enabled"])
    (f,) = r.json()["findings"]
    if not flags and "+cpu" not in f["fix"]:
        pytest.skip("this machine has a GPU")
    assert "download.pytorch.org/whl/cu" not in f["fix"] and "+cu" not in f["fix"], f["fix"]
    assert "--gpu" in f["fix"]
    if not flags:  # plan's own answer for this machine is the one named
        plan = cli(["plan", "--json"])
        assert plan.json()["chosen"]["torch"] in f["fix"], (plan.json()["chosen"], f["fix"])


def test_a_gpu_given_gets_plans_gpu_build(cli):
    r = explain(cli, "AssertionError: Torch not compiled with CUDA enabled", "--gpu", "GTX 1080")
    (f,) = r.json()["findings"]
    assert "+cu126" in f["fix"], f["fix"]  # CUDA 13 builds carry no sm_61
