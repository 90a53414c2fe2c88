"""Slurm hostlists (breaker F21): the expansion agrees with the real `scontrol show hostnames`
(multi-bracket names are a product: ``rack[1-2]-node[01-02]`` is 4 names), is bounded (a typo like
``gpu[0-99999999]`` is a one-line error, not a login node's memory), and malformed ones are refused."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, strategies as st

from envcheck.fleet.hostlist import MAX_HOSTS, expand
from tests.conftest import run_cli
from tests.hostile.conftest import hostile

VALID = ["gpu[1-2]-ib[0-1]", "rack[1-2]-node[01-02]", "x,rack[01-02]", "gpu[01-3]", "gpu[1-2],gpu[2-3]", "gpu",
         "a[1-2]b[3-4]c[5-6]", "gpu[001-010]", "g[9-11]", "gpu[001-003,020],login", "n[1,3-4]", "dgx[1-2]-gpu[0-7]"]
#: refused by both scontrol and envcheck
INVALID = ["gpu[3-1]", "g[1-2]x[a]", "n[x-2]"]
#: refused by envcheck; scontrol takes them literally or half-way ("x[1-2" → "x]"), which no node is named
MALFORMED = ["gpu[", "x]", "a[[1]]", "g[]", "g[1-2-3]", "g[1--2]"]


@pytest.fixture(scope="module")
def scontrol(tmp_path_factory):
    if shutil.which("scontrol") is None:
        pytest.skip("needs Slurm's scontrol (.ci/run installs slurm-client)")
    conf = tmp_path_factory.mktemp("slurm") / "slurm.conf"
    conf.write_text("ClusterName=t\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n")

    def run(hostlist):
        r = subprocess.run(["scontrol", "show", "hostnames", hostlist], capture_output=True, text=True, timeout=30,
                           env={"SLURM_CONF": str(conf), "PATH": "/usr/bin:/bin"})
        bad = "Invalid hostlist" in r.stdout + r.stderr or r.returncode != 0
        return None if bad else r.stdout.split()
    return run


@pytest.mark.subprocess
@pytest.mark.parametrize("hostlist", VALID)
def test_expansion_matches_scontrol(scontrol, hostlist):
    want = scontrol(hostlist)
    assert want is not None, hostlist
    got = expand(hostlist)
    assert sorted(got) == sorted(set(want)) and len(got) == len(set(got))


@pytest.mark.subprocess
@hostile(25)
@given(st.lists(st.tuples(st.sampled_from(["gpu", "rack", "n-", "a.b"]),
                          st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3), st.integers(1, 3)), min_size=1,
                                   max_size=2),
                          st.sampled_from(["", "-ib", "x"])), min_size=1, max_size=2))
def test_generated_hostlists_match_scontrol(scontrol, spec):
    parts = []
    for prefix, groups, mid in spec:
        text = prefix
        for i, (lo, span, width) in enumerate(groups):
            text += (mid if i else "") + f"[{lo:0{width}d}-{lo + span:0{width}d}]"
        parts.append(text)
    hostlist = ",".join(parts)
    want = scontrol(hostlist)
    assert want is not None, hostlist
    assert sorted(expand(hostlist)) == sorted(set(want)), hostlist


@pytest.mark.subprocess
@pytest.mark.parametrize("hostlist", INVALID)
def test_both_refuse(scontrol, hostlist):
    assert scontrol(hostlist) is None
    with pytest.raises(ValueError):
        expand(hostlist)


@pytest.mark.parametrize("hostlist", MALFORMED)
def test_malformed_is_refused(hostlist):
    with pytest.raises(ValueError):
        expand(hostlist)


@pytest.mark.parametrize("hostlist", ["gpu[0-99999999]", "a[0-999]b[0-999]", f"g[1-{MAX_HOSTS + 1}]"])
def test_expansion_is_bounded_before_it_is_made(hostlist):
    with pytest.raises(ValueError, match="more than"):
        expand(hostlist)
    assert len(expand(f"g[1-{MAX_HOSTS}]")) == MAX_HOSTS


@pytest.mark.parametrize("argv", [["fleet", "merge", "{d}", "--expect", "gpu[0-99999999]"],
                                  ["fleet", "slurm", "--nodelist", "gpu[0-99999999]"],
                                  ["fleet", "merge", "{d}", "--expect", "gpu["],
                                  ["fleet", "slurm", "--nodelist", "rack[1-2]-node[01"]])
def test_cli_says_so_in_one_line(tmp_path, argv):
    r = run_cli([a.replace("{d}", str(tmp_path)) for a in argv])
    assert r.code == 2 and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err


def test_merge_names_the_missing_nodes_of_a_multi_bracket_list(tmp_path):
    r = run_cli(["fleet", "merge", str(tmp_path), "--expect", "rack[1-2]-node[01-02]", "--json"])
    doc = r.json()
    assert doc["expected"] == 4 and doc["missing_count"] == 4
