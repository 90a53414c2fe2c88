"""One ranking rule (#10): README, `plan --explain` and the code agree; a complete, verified set
beats a newer incomplete/unverified release unless --prefer newest; caveats do not push a build made
for the GPU below one made before it existed."""

from __future__ import annotations

import re
from pathlib import Path

from envcheck.resolve import RANKING_RULE, Request
from tests.conftest import plan_for

README = Path(__file__).resolve().parents[2] / "README.md"


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_readme_and_explain_carry_the_one_rule(cli):
    assert flat(RANKING_RULE) in flat(README.read_text())
    r = cli(["plan", "--gpu", "RTX 4090", "--explain"])
    assert flat(RANKING_RULE) in flat(r.out)


def test_help_and_file_headers_state_the_rule_the_code_uses(cli, matrix):
    """newcomer L1: `plan --help` said "the newest torch wins" and every file's header "the newest torch
    release whose build fits" while a newer one fitting was passed over for a complete set."""
    from envcheck.cli.plan import EPILOG
    from envcheck.render.common import comment_block
    from envcheck.resolve.plan import make_plan

    assert "newest torch wins" not in flat(EPILOG)
    assert "a complete, verified set" in flat(EPILOG) and "--prefer newest" in flat(EPILOG)
    res = plan_for(matrix, gpus=["RTX 4090"])
    assert any("--prefer newest picks it" in a for a in res.alternatives)  # a newer one fits
    header = comment_block(make_plan(res, matrix))
    assert "newest torch release with a complete, verified set" in header, header
    newest = plan_for(matrix, Request(prefer="newest"), gpus=["RTX 4090"])
    assert "(--prefer newest)" in comment_block(make_plan(newest, matrix))


def test_complete_verified_set_beats_a_newer_incomplete_release(matrix):
    res = plan_for(matrix, gpus=["RTX 4090"])
    newest = plan_for(matrix, Request(prefer="newest"), gpus=["RTX 4090"]).chosen
    c = res.chosen
    # the data has a newer release that fits but lacks a paired torchvision or rests on unverified
    # rows (2.15.0 here); the default pick is a release with its torchvision on record, verified
    assert newest.release.version != c.release.version
    assert not newest.release.torchvision or newest.build.confidence == "unverified"
    assert c.release.torchvision and c.build.confidence != "unverified"
    assert any("--prefer newest picks it" in a for a in res.alternatives)


def test_a_build_made_for_the_gpu_beats_one_from_before_its_arch(matrix):
    # torch 2.0.1: cu117 (CUDA 11.7, before sm_89 — NVIDIA added Ada in CUDA 11.8) vs cu118; the PyPI
    # default is cu117, yet an RTX 4090 gets the cu118 build whatever caveats its row carries
    res = plan_for(matrix, Request(torch=Request.parse_torch("2.0.1"), torch_text="2.0.1"),
                   gpus=["RTX 4090"], python="3.10")
    assert res.chosen.build.variant == "cu118"
    cu117 = next(c for c in res.accepted if c.build.variant == "cu117")
    assert cu117.fit.arch_predates and not res.chosen.fit.arch_predates


def test_cli_prefer_flag(cli):
    default = cli(["plan", "--gpu", "RTX 4090", "--json"]).json()
    newest = cli(["plan", "--gpu", "RTX 4090", "--json", "--prefer", "newest"]).json()
    assert newest["request"]["prefer"] == "newest"
    assert newest["chosen"]["torch"] != default["chosen"]["torch"]
    bad = cli(["plan", "--gpu", "RTX 4090", "--prefer", "oldest"])
    assert bad.code == 2
