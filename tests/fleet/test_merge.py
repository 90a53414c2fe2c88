"""fleet merge / diff over node reports made from the recorded facts of real machines.

The drift test takes a real machine's report, copies it onto ten nodes, and changes one recorded
fact on one node at a time (the raw report, as that node would have written it): merge must report
drift in exactly the facts that change and name exactly that node as the outlier.
"""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import run_cli

NODES = [f"gpu{i:03d}" for i in range(1, 11)]


def write_fleet(d, base, mutate=None, victim="gpu004"):
    d.mkdir(parents=True, exist_ok=True)
    for node in NODES:
        doc = copy.deepcopy(base)
        doc["host"] = {"id": node, "id_from": "test", "shm_bytes": 64 << 30}
        if mutate and node == victim:
            mutate(doc)
        (d / f"{node}.json").write_text(json.dumps(doc))
    return d


def runs(doc, probe):
    return doc["facts"]["runs"][probe]["data"]


def set_path(*path, value):
    def mutate(doc):
        cur = doc
        for key in path[:-1]:
            cur = cur[key]
        cur[path[-1]] = value
    return mutate


def _gpu_added(doc):
    data = runs(doc, "cuda_build")
    data["devices"] = data["devices"] + [dict(data["devices"][0], index=1)]
    data["device_count"] = 2


def _gpu_renamed(doc):
    runs(doc, "cuda_build")["devices"][0]["name"] = "NVIDIA GeForce RTX 4090"


#: Public reports of one node differing, which these mutations stand for:
#: - NCCL: "could it be possible that you have different NCCL versions on different nodes?" — a
#:   multi-node hang (https://github.com/NVIDIA/nccl/issues/354); the NCCL banner printed on one
#:   server and not the other (https://github.com/huggingface/accelerate/issues/412).
#: - driver: a hang traced to the torch/driver pairing on one HPC node (https://github.com/NVIDIA/nccl/issues/447).
#: - /dev/shm: DataLoader "Bus error … insufficient shared memory" in Kubernetes pods and torchrun
#:   workers (https://github.com/pytorch/pytorch/issues/16979, https://github.com/pytorch/pytorch/issues/108861).
#: (what changes on one node, the raw change, the facts it must show up as — written by hand).
MUTATIONS_C01 = [
    ("driver", lambda d: runs(d, "cuda_build")["driver"].update(version="535.183.01"), {"driver"}),
    ("torch release", lambda d: runs(d, "import_torch").update(version="2.6.1+cu126"), {"torch"}),
    ("torch variant", lambda d: runs(d, "import_torch").update(version="2.6.0+cu124", cuda="12.4"),
     {"torch", "variant", "cuda"}),
    ("cuda", lambda d: (runs(d, "import_torch").update(cuda="12.8"), runs(d, "cuda_build").update(cuda="12.8")), {"cuda"}),
    ("cudnn", lambda d: runs(d, "cuda_build").update(cudnn=90100), {"cudnn"}),
    ("nccl", lambda d: runs(d, "cuda_build").update(nccl="2.21.5"), {"nccl"}),
    ("arch list", lambda d: runs(d, "cuda_build").update(arch_list=["sm_50", "sm_60", "sm_70"]), {"arch_list"}),
    ("torchvision", lambda d: d["facts"]["packages"].update(torchvision=[{"version": "0.21.0+cu126"}]), {"torchvision"}),
    ("python", set_path("facts", "python", "version", value="3.12.3"), {"python"}),
    ("glibc", set_path("facts", "platform", "glibc", value="2.31"), {"glibc"}),
    ("os", set_path("facts", "platform", "arch", value="aarch64"), {"os"}),
    ("shm", set_path("host", "shm_bytes", value=64 << 20), {"shm"}),
    ("gpu model", _gpu_renamed, {"gpu_model"}),
    ("gpu count", _gpu_added, {"gpu_model", "gpu_count"}),
]


def _baseline(case_reports, case):
    base = copy.deepcopy(case_reports[case])
    # the companions and NCCL/cuDNN the case did not record: give every node the same ones, so a
    # change on one node is visible
    base["facts"]["packages"].setdefault("torchvision", [{"version": "0.21.0"}])
    if "cuda_build" in base["facts"]["runs"] and runs(base, "cuda_build") is not None:
        runs(base, "cuda_build").setdefault("cudnn", 90501)
        runs(base, "cuda_build").setdefault("nccl", "2.20.5")
    return base


@pytest.mark.parametrize("what, mutate, expected", MUTATIONS_C01, ids=[m[0] for m in MUTATIONS_C01])
def test_one_mutation_is_drift_on_exactly_that_node(tmp_path, case_reports, what, mutate, expected):
    from envcheck.fleet.merge import merge

    base = _baseline(case_reports, "C01")
    clean = merge([str(write_fleet(tmp_path / "clean", base))])
    assert clean.drift == [] and len(clean.nodes) == 10
    fleet = merge([str(write_fleet(tmp_path / "fleet", base, mutate))])
    assert {d["fact"] for d in fleet.drift} == expected
    for d in fleet.drift:
        assert d["majority_count"] == 9
        assert [o["nodes"] for o in d["outliers"]] == ["gpu004"], d
    assert fleet.exit_code == 1


@pytest.mark.parametrize("case", ["C09", "C16", "C06", "dev-cpu-x86_64-torch-2.13.0-cpu", "N01-nccl-two-majors",
                                  "N03-nccl-small-shm"])
def test_mutations_on_other_real_machines(tmp_path, case_reports, case):
    """The same on a WSL2 conda machine (C09), a runtime container (C16), CentOS 7 (C06), a machine
    recorded by `nox -s device` (dev-cpu…), and schema-2 facts from public reports (N01 two NCCL
    majors, N03 a 64 MB /dev/shm): the facts each of them recorded, changed one at a time."""
    from envcheck.fleet.merge import merge

    base = _baseline(case_reports, case)
    mutations = [(set_path("facts", "python", "version", value="3.9.1"), {"python"}),
                 (set_path("facts", "platform", "glibc", value="2.28"), {"glibc"}),
                 (set_path("host", "shm_bytes", value=1 << 26), {"shm"}),
                 (lambda d: d["facts"]["packages"]["torch"][0].update(version="9.9.9"),
                  # the version torch reports wins over pip's metadata; C06's and N01's torch did not import
                  {"torch"} if case in ("C06", "N01-nccl-two-majors") else set())]
    for i, (mutate, expected) in enumerate(mutations):
        fleet = merge([str(write_fleet(tmp_path / str(i), base, mutate, victim="gpu010"))])
        assert {d["fact"] for d in fleet.drift} == expected, (case, i, fleet.drift)
        assert all([o["nodes"] for o in d["outliers"]] == ["gpu010"] for d in fleet.drift)


def test_real_machines_side_by_side(tmp_path, case_reports):
    """Seven different real machines: the CentOS 7 node is the glibc outlier; failures grouped."""
    from envcheck.fleet.merge import merge

    for name, doc in case_reports.items():
        if name.startswith("C"):  # the seven cases from public bug reports
            (tmp_path / f"{name}.json").write_text(json.dumps(doc))
    fleet = merge([str(tmp_path)])
    assert len(fleet.nodes) == 7 and fleet.passed == 0
    glibc = next(d for d in fleet.drift if d["fact"] == "glibc")
    assert glibc["majority"] == "2.35" and glibc["majority_count"] == 3
    assert {o["value"]: o["nodes"] for o in glibc["outliers"]} == {"2.17": "C06", "2.39": "C07", "2.40": "C01"}
    variant = next(d for d in fleet.drift if d["fact"] == "variant")
    assert {o["value"]: o["nodes"] for o in variant["outliers"]}["cpu"] == "C[06,10]"
    checks = {g["check"]: g["nodes"] for g in fleet.failures}
    assert checks["arch_compat"] == "C01" and checks["import_torch"] == "C06"


def test_failures_group_by_cause_with_compressed_lists(tmp_path, case_reports):
    from envcheck.fleet.merge import merge

    base = case_reports["C01"]  # arch_compat fails (sm_120 not in the wheel)
    ok = copy.deepcopy(base)
    ok["checks"] = [dict(c, status="pass") for c in ok["checks"]]
    d = tmp_path / "f"
    d.mkdir()
    for i in range(1, 21):
        doc = copy.deepcopy(base if i <= 17 or i == 20 else ok)
        doc["host"] = {"id": f"gpu{i:03d}"}
        (d / f"gpu{i:03d}.json").write_text(json.dumps(doc))
    fleet = merge([str(d)])
    assert fleet.passed == 2
    assert [(g["check"], g["count"], g["nodes"]) for g in fleet.failures] == [("arch_compat", 18, "gpu[001-017,020]")]
    r = run_cli(["fleet", "merge", str(d)])
    assert r.code == 1
    assert "20 nodes: 2 pass, 18 fail" in r.out and "arch_compat on 18 node(s): gpu[001-017,020]" in r.out


def test_truncated_report_is_named_and_skipped(tmp_path, case_reports):
    d = write_fleet(tmp_path / "f", case_reports["C16"])
    full = (d / "gpu002.json").read_text()
    (d / "gpu002.json").write_text(full[: len(full) // 2])
    (d / "notes.json").write_text('{"hello": 1}')
    r = run_cli(["fleet", "merge", str(d), "--json"])
    assert r.code == 2
    doc = r.json()
    assert doc["nodes_total"] == 9
    assert {s["file"].rsplit("/", 1)[1]: s["reason"].split(" ")[0] for s in doc["skipped"]} == {
        "gpu002.json": "truncated", "notes.json": "not"}
    assert f"skipped {d / 'gpu002.json'}: truncated" in r.err


def test_exit_codes(tmp_path, case_reports):
    base = copy.deepcopy(case_reports["C01"])
    base["checks"] = [dict(c, status="pass") for c in base["checks"]]
    d = write_fleet(tmp_path / "ok", base)
    assert run_cli(["fleet", "merge", str(d)]).code == 0
    d2 = write_fleet(tmp_path / "drift", base, set_path("host", "shm_bytes", value=64 << 20))
    r = run_cli(["fleet", "merge", str(d2)])
    assert r.code == 1 and "shm: majority 64 GiB on 9 node(s)" in r.out and "64 MiB on gpu004" in r.out
    assert run_cli(["fleet", "merge", str(tmp_path / "absent")]).code == 2
    (tmp_path / "empty").mkdir()
    assert run_cli(["fleet", "merge", str(tmp_path / "empty")]).code == 2


def test_lock_marks_the_wrong_values(tmp_path, case_reports):
    base = _baseline(case_reports, "C01")
    d = write_fleet(tmp_path / "f", base, lambda doc: runs(doc, "import_torch").update(version="2.6.0+cu124", cuda="12.4"))
    plan = tmp_path / "plan"
    assert run_cli(["plan", "--backend", "cu126", "--torch", "2.6.0", "--gpu", "rtx 4090", "--python", "3.12",
                    "--format", "lock", "-o", str(plan)]).code == 0
    r = run_cli(["fleet", "merge", str(d), "--lock", str(plan / "envcheck.lock.toml"), "--json"])
    doc = r.json()
    variant = next(x for x in doc["drift"] if x["fact"] == "variant")
    assert variant["majority"] == "cu126" and variant["lock"] == "cu126"
    assert [(o["value"], o["nodes"], o["lock_wrong"]) for o in variant["outliers"]] == [("cu124", "gpu004", True)]
    assert variant["values"][0]["lock_wrong"] is False
    python = doc["lock"]["mismatches"]
    assert {m["fact"] for m in python} >= {"variant", "torch", "cuda"}


def test_a_fleet_uniformly_off_the_lock_says_so_in_its_headline(tmp_path, case_reports):
    """newcomer3 #13: every node on the same wrong torch passed its checks; merge --lock printed
    "N nodes: N pass, 0 fail" and "no drift: …", then exited 1. The headline names the lock mismatch."""
    base = _baseline(case_reports, "C01")
    base["checks"] = [dict(c, status="pass") for c in base["checks"]]
    runs(base, "import_torch").update(version="2.6.0+cu124", cuda="12.4")
    d = write_fleet(tmp_path / "f", base)
    plan = tmp_path / "plan"
    assert run_cli(["plan", "--backend", "cu126", "--torch", "2.6.0", "--gpu", "rtx 4090", "--python", "3.12",
                    "--format", "lock", "-o", str(plan)]).code == 0
    r = run_cli(["fleet", "merge", str(d), "--lock", str(plan / "envcheck.lock.toml")])
    assert r.code == 1
    head = r.out.splitlines()[0]
    assert head == f"envcheck fleet — {len(NODES)} nodes: {len(NODES)} pass, 0 fail; {len(NODES)} nodes differ from the lock"
    assert "no drift: every compared fact" not in r.out and "but the lock rules out what the nodes have" in r.out
    assert " lock variant: expected cu126, found cu124 on " in r.out
    doc = run_cli(["fleet", "merge", str(d), "--lock", str(plan / "envcheck.lock.toml"), "--json"]).json()
    assert doc["lock"]["nodes_off_lock"] == len(NODES)
    assert run_cli(["fleet", "merge", str(d)]).out.splitlines()[0].endswith(f"{len(NODES)} pass, 0 fail")


def test_junit_and_prometheus(tmp_path, case_reports):
    from junitparser import JUnitXml

    base = _baseline(case_reports, "C16")
    d = write_fleet(tmp_path / "f", base, set_path("facts", "platform", "glibc", value="2.28"))
    r = run_cli(["fleet", "merge", str(d), "--junit", str(tmp_path / "f.xml"), "--prometheus", str(tmp_path / "f.prom")])
    assert r.code == 1
    suites = {s.name: s for s in JUnitXml.fromfile(str(tmp_path / "f.xml"))}
    assert set(suites) == set(NODES) | {"fleet-drift"}
    assert {c.classname for c in suites["gpu001"]} == {"gpu001"}
    drift = {c.name: c for c in suites["fleet-drift"]}
    assert not drift["glibc"].is_passed and "2.28 on gpu004" in drift["glibc"].result[0].message
    assert drift["torch"].is_passed
    prom = (tmp_path / "f.prom").read_text()
    assert 'envcheck_fleet_nodes{status="fail"} 10' in prom
    assert 'envcheck_fleet_drift_outliers{fact="glibc",value="2.28",nodes="gpu004"} 1' in prom
    assert 'envcheck_node_check_failed{node="gpu004",check="torch_compile"} 1' in prom


def test_diff_two_nodes_and_two_fleets(tmp_path, case_reports):
    base = _baseline(case_reports, "C01")
    before = write_fleet(tmp_path / "before", base)
    after = write_fleet(tmp_path / "after", base, lambda d: runs(d, "cuda_build")["driver"].update(version="580.65.06"))
    assert run_cli(["fleet", "merge", str(before), "--save", str(tmp_path / "before.json")]).code == 1
    r = run_cli(["fleet", "diff", str(tmp_path / "before.json"), str(after), "--json"])
    assert r.code == 1, r.err
    doc = r.json()
    assert doc["kind"] == "fleets"
    assert doc["facts"] == [{"fact": "driver", "a": "570.124.04", "b": "580.65.06", "count": 1, "nodes": "gpu004"}]
    assert run_cli(["fleet", "diff", str(before), str(tmp_path / "before.json")]).code == 0
    r = run_cli(["fleet", "diff", str(before / "gpu001.json"), str(after / "gpu004.json")])
    assert r.code == 1 and "driver: 570.124.04 → 580.65.06" in r.out
    assert run_cli(["fleet", "diff", str(before), str(tmp_path / "nope")]).code == 2


def test_diff_says_what_is_absent_in_words(tmp_path, case_reports):
    """newcomer3 #13: `fleet diff` printed `torch: 2.13.0+cpu → None`: a value one side does not have is
    "not installed" for a package and "absent" for another fact or a check, in both diff forms."""
    base = _baseline(case_reports, "C01")

    def strip(doc):
        doc["facts"]["packages"].pop("torchvision")
        doc["facts"]["runs"]["cuda_build"]["data"].pop("driver")
        doc["checks"] = [c for c in doc["checks"] if c["name"] != "matmul"]

    before = write_fleet(tmp_path / "before", base)
    after = write_fleet(tmp_path / "after", base, strip)
    r = run_cli(["fleet", "diff", str(before / "gpu004.json"), str(after / "gpu004.json")])
    assert r.code == 1 and "None" not in r.out, r.out
    assert " torchvision: 0.21.0 → not installed" in r.out and " driver: 570.124.04 → absent" in r.out
    assert " check matmul: " in r.out and "→ absent" in r.out.split(" check matmul: ")[1].splitlines()[0]
    back = run_cli(["fleet", "diff", str(after / "gpu004.json"), str(before / "gpu004.json")])
    assert " torchvision: not installed → 0.21.0" in back.out
    fleets = run_cli(["fleet", "diff", str(before), str(after)])
    assert "None" not in fleets.out and " torchvision: 0.21.0 → not installed on gpu004" in fleets.out


def test_hostlist():
    from envcheck.fleet.hostlist import compress, expand

    assert compress([f"gpu{i:03d}" for i in [*range(1, 18), 20]]) == "gpu[001-017,020]"
    assert compress(["a1", "a2", "login", "a10", "b-7"]) == "a[1-2],a10,b-7,login"
    assert compress(["n1-rank0", "n1-rank1"]) == "n1-rank[0-1]"
    assert expand("gpu[001-003,020],login") == ["gpu001", "gpu002", "gpu003", "gpu020", "login"]
    with pytest.raises(ValueError):
        expand("gpu[3-1]")


@pytest.mark.parametrize("mutate", [
    set_path("facts", "runs", "cuda_build", "data", "device_count", value="two"),
    set_path("facts", "runs", "cuda_build", "data", "devices", value=[1, 2]),
    set_path("facts", "packages", value=[]),
    set_path("facts", "runs", value="x"),
    set_path("host", "shm_bytes", value="64G"),
    set_path("checks", value=[{"name": 1, "status": None, "seconds": "x"}]),
    set_path("distributed", value={"bandwidth": "fast"}),
], ids=["count-str", "devices-ints", "packages-list", "runs-str", "shm-str", "checks-odd", "dist-odd"])
def test_wrong_types_never_traceback(tmp_path, case_reports, mutate):
    """A hand-edited or foreign report: merged when its oddities can be read past, else named and
    skipped (exit 2) — never a traceback, and the other nodes are still merged."""
    d = write_fleet(tmp_path / "f", _baseline(case_reports, "C01"), mutate)
    r = run_cli(["fleet", "merge", str(d), "--json"])
    assert r.code in (1, 2) and "Traceback" not in r.err, r.err
    doc = r.json()
    assert doc["nodes_total"] + len(doc["skipped"]) == 10
    assert doc["nodes_total"] >= 9


def test_same_rule_is_one_cause_whatever_the_paths(tmp_path, case_reports):
    """CentOS 7 nodes whose envs live in different folders: the details and fixes differ by path,
    the cause (the diagnosis rule glibc-too-old) is one."""
    from envcheck.fleet.merge import merge

    base = case_reports["C06"]
    failing = [c for c in base["checks"] if c["status"] == "fail"]
    assert [(c["name"], c.get("rule")) for c in failing] == [("import_torch", "glibc-too-old")]
    d = tmp_path / "f"
    d.mkdir()
    for i in range(1, 6):
        doc = copy.deepcopy(base)
        doc["host"] = {"id": f"cpu{i:02d}"}
        for c in doc["checks"]:
            c["detail"] = c["detail"].replace("/home/user/", f"/home/user{i}/")
            c["fix"] = c["fix"].replace("/home/user/", f"/home/user{i}/")
        (d / f"cpu{i:02d}.json").write_text(json.dumps(doc))
    fleet = merge([str(d)])
    assert [(g["check"], g["rule"], g["nodes"]) for g in fleet.failures] == [("import_torch", "glibc-too-old", "cpu[01-05]")]


def test_expected_nodes_without_a_report_are_missing(tmp_path, case_reports):
    base = copy.deepcopy(case_reports["C01"])
    base["checks"] = [dict(c, status="pass") for c in base["checks"]]
    d = write_fleet(tmp_path / "f", base)
    assert run_cli(["fleet", "merge", str(d), "--expect", "gpu[001-010]"]).code == 0
    r = run_cli(["fleet", "merge", str(d), "--expect", "gpu[001-012],gpu020", "--json"])
    assert r.code == 1
    doc = r.json()
    assert (doc["expected"], doc["missing"], doc["missing_count"]) == (13, "gpu[011-012,020]", 3)
    r = run_cli(["fleet", "merge", str(d), "--expect", "gpu[001-012]"])
    assert "MISSING 2 of 12 expected node(s) sent no readable report: gpu[011-012]" in r.out
    assert run_cli(["fleet", "merge", str(d), "--expect", "gpu[9-1]"]).code == 2
    from junitparser import JUnitXml

    r = run_cli(["fleet", "merge", str(d), "--expect", "gpu[001-011]", "--junit", str(tmp_path / "m.xml"),
                 "--prometheus", str(tmp_path / "m.prom")])
    assert r.code == 1
    inputs = {s.name: s for s in JUnitXml.fromfile(str(tmp_path / "m.xml"))}["fleet-inputs"]
    assert [(c.name, c.is_passed) for c in inputs] == [("gpu011", False)]
    assert "envcheck_fleet_missing_nodes 1" in (tmp_path / "m.prom").read_text()


#: What `envcheck probe` saw on recorded real machines (tests/fixtures/probe/machines), and the facts
#: a node of the A5000 fleet shows as drift when its probe is that machine's instead (hand-written:
#: the A5000 box has 2× RTX A5000 on driver 590.44.01; the 3090+7900 XTX box the same driver, two GPUs;
#: the WSL2 Quadro one GPU on the Windows driver 527.27; the open-module box a driver from /proc and
#: no GPU nvidia-smi could list; the MI350X box no NVIDIA driver).
PROBED = [("mixed-3090-7900xtx", {"gpu_model"}),
          ("wsl2-nvidia-quadro", {"driver", "gpu_model", "gpu_count"}),
          ("nvidia-open-proc-only", {"driver", "gpu_count"}),
          ("amd-smi-mi350x", {"gpu_model", "gpu_count"})]


@pytest.mark.parametrize("other, expected", PROBED, ids=[p[0] for p in PROBED])
def test_a_node_whose_probe_differs(tmp_path, case_reports, other, expected):
    """Ten nodes with the facts recorded on a real machine and the probe of the 2× A5000 box; one
    node's probe is another recorded machine's: drift in exactly the machine facts that differ."""
    from envcheck.fleet.merge import merge
    from envcheck.probe import load_probe_matrix, probe_machine
    from tests.probe.replay import machine_replay

    def probed(name):
        root, replay = machine_replay(name)
        return probe_machine(load_probe_matrix(), root=root, runner=replay, docker=False, nvml=False).to_dict()

    base = copy.deepcopy(case_reports["dev-cpu-x86_64-torch-2.13.0-cpu"])
    base["machine"] = base["facts"]["machine"] = probed("nvidia-2x-a5000")
    theirs = probed(other)

    def swap(doc):
        doc["machine"] = doc["facts"]["machine"] = theirs

    fleet = merge([str(write_fleet(tmp_path / "f", base, swap, victim="gpu007"))])
    assert {d["fact"] for d in fleet.drift} == expected
    for d in fleet.drift:
        assert [o["nodes"] for o in d["outliers"]] == ["gpu007"]
        if d["fact"] == "gpu_model":
            assert d["majority"] == "2× NVIDIA RTX A5000"
        if d["fact"] == "driver":
            assert d["majority"] == "590.44.01"


def test_shm_from_the_collector_when_the_host_did_not_say(case_reports):
    """A report made from saved facts has no host /dev/shm reading: the collector's is used (N03:
    the 64 MB /dev/shm of a container from a public report)."""
    from envcheck.fleet.drift import node_facts

    doc = case_reports["N03-nccl-small-shm"]
    assert "shm_bytes" not in doc["host"]
    assert node_facts(doc)["shm"] == "64 MiB"
    assert node_facts(case_reports["C01"])["shm"] is None  # schema 1 facts never had it


def test_no_report_to_merge_says_why(tmp_path, case_reports):
    """breaker5 F6: an empty folder, or one holding only a saved fleet document (merge's own --save),
    ended exit 2 with not a word on stderr."""
    (tmp_path / "empty").mkdir()
    r = run_cli(["fleet", "merge", str(tmp_path / "empty")])
    assert r.code == 2 and r.err.count("\n") == 1 and "no node report in" in r.err, r.err
    d = write_fleet(tmp_path / "ok", case_reports["C01"])
    assert run_cli(["fleet", "merge", str(d), "--save", str(tmp_path / "saved" / "fleet.json")]).code in (0, 1)
    r = run_cli(["fleet", "merge", str(tmp_path / "saved")])
    assert r.code == 2 and "no node report in" in r.err and "saved fleet document" in r.err, r.err


@pytest.mark.parametrize("a, b", [("--save", "--junit"), ("--junit", "--prometheus"), ("--save", "--prometheus")])
def test_two_outputs_naming_one_file_are_refused_before_anything_is_written(tmp_path, case_reports, a, b):
    """breaker5 F7: `--save x.json --junit x.json` wrote x.json, then refused to overwrite it."""
    d = write_fleet(tmp_path / "ok", case_reports["C01"])
    r = run_cli(["fleet", "merge", str(d), a, str(tmp_path / "x"), b, str(tmp_path / "." / "x")])
    assert r.code == 2 and r.err.count("\n") == 1 and "name the same file" in r.err, r.err
    assert a in r.err and b in r.err
    assert not (tmp_path / "x").exists()


def test_every_existing_output_is_listed_at_once(tmp_path, case_reports):
    """breaker5 F7: with --save, --junit and --prometheus all there, only one was named per try."""
    d = write_fleet(tmp_path / "ok", case_reports["C01"])
    outs = {flag: tmp_path / name for flag, name in [("--save", "s.json"), ("--junit", "j.xml"),
                                                      ("--prometheus", "p.prom")]}
    for p in outs.values():
        p.write_text("mine")
    r = run_cli(["fleet", "merge", str(d), *[x for flag, p in outs.items() for x in (flag, str(p))]])
    assert r.code == 2 and "refusing to overwrite" in r.err, r.err
    assert all(str(p) in r.err for p in outs.values()), r.err
    assert {p.read_text() for p in outs.values()} == {"mine"}


def test_a_fleet_document_among_the_reports_is_named_not_dropped(tmp_path, case_reports):
    """breaker5 F6 (left by hfix7): in a folder mixing node reports and a saved merge document, the
    document was left out without a word; it is named (and is no bad report: the exit is the node's)."""
    d = write_fleet(tmp_path / "reps", case_reports["C01"])
    alone = run_cli(["fleet", "merge", str(d)])
    assert run_cli(["fleet", "merge", str(d), "--save", str(d / "fleet-saved.json")]).code == alone.code
    for extra in ([], ["--json"]):
        r = run_cli(["fleet", "merge", str(d), *extra])
        assert r.code == alone.code, r.err
        line = next((x for x in r.err.splitlines() if "fleet-saved.json" in x), "")
        assert "skipped" in line and "fleet document" in line and "not a node report" in line, r.err


def _no_torchvision(doc):
    """The node as `verify --report` writes it where torchvision is not installed: the package list
    without it, the compat probe skipped."""
    doc["facts"]["packages"].pop("torchvision", None)
    if "torchvision_compat" in doc["facts"]["runs"]:
        doc["facts"]["runs"]["torchvision_compat"] = {"outcome": "skip", "error": "torchvision is not installed"}


def test_a_package_one_node_lacks_is_drift_and_off_a_lock_that_pins_it(tmp_path, case_reports):
    """newcomer6 #4: node01 without torchvision, the others with it: `fleet merge` said "no drift"
    and `--lock` flagged only the nodes with another version, while `fleet diff` showed
    "not installed → 0.27.0" and `verify --lock` failed node01. One comparison: a package the report
    lists as not installed is a value ("not installed"), in merge as in diff; unknown stays unknown."""
    base = _baseline(case_reports, "C01")
    d = write_fleet(tmp_path / "f", base, _no_torchvision)
    fleet_doc = run_cli(["fleet", "merge", str(d), "--json"]).json()
    tv = next(x for x in fleet_doc["drift"] if x["fact"] == "torchvision")
    assert tv["majority"] == "0.21.0" and tv["unknown"] == 0
    assert [(o["value"], o["nodes"]) for o in tv["outliers"]] == [("not installed", "gpu004")]
    text = run_cli(["fleet", "merge", str(d)])
    assert text.code == 1 and "no drift" not in text.out and "not installed on gpu004" in text.out
    # fleet diff says the same of the same two nodes
    r = run_cli(["fleet", "diff", str(d / "gpu004.json"), str(d / "gpu005.json"), "--json"])
    assert {"fact": "torchvision", "a": "not installed", "b": "0.21.0"} in r.json()["facts"]
    # a lock pinning torchvision rules out the node without it, as verify --lock does
    plan = tmp_path / "plan"
    assert run_cli(["plan", "--backend", "cu126", "--torch", "2.6.0", "--gpu", "rtx 4090", "--python", "3.12",
                    "--format", "lock", "-o", str(plan)]).code == 0
    locked = run_cli(["fleet", "merge", str(d), "--lock", str(plan / "envcheck.lock.toml"), "--json"]).json()
    row = next(m for m in locked["lock"]["mismatches"] if m["fact"] == "torchvision")
    assert ("not installed", "gpu004") in [(w["value"], w["nodes"]) for w in row["wrong"]]
    # a report that does not list packages at all knows nothing of torchvision: unknown, not drift
    unknown = write_fleet(tmp_path / "u", base, lambda doc: (_no_torchvision(doc), doc["facts"].pop("packages")))
    doc = run_cli(["fleet", "merge", str(unknown), "--json"]).json()
    assert all(x["fact"] != "torchvision" for x in doc["drift"])


def test_the_text_output_never_cuts_a_fix(tmp_path, case_reports):
    """newcomer6 #7: the text output cut each fix at 300 characters, mid-command ("…pip install
    --force-reinstall"), while --json had it whole. The whole fix is printed (as verify does)."""
    d = write_fleet(tmp_path / "f", case_reports["C01"])
    doc = run_cli(["fleet", "merge", str(d), "--json"]).json()
    fixes = [g["fix"] for g in doc["failures"] if g["fix"]]
    assert any(len(f) > 300 for f in fixes), [len(f) for f in fixes]  # the case the cut hit
    text = " ".join(run_cli(["fleet", "merge", str(d)]).out.split())  # rich folds long lines at spaces
    for fix in fixes:
        assert " ".join(fix.split()) in text


def test_a_host_id_with_a_lone_surrogate_is_written_to_every_output(tmp_path, case_reports):
    """breaker6 F5: a node report whose host id holds a lone surrogate escape (`"id": "node\\udc80"`, which
    json.loads accepts) made `fleet merge --prometheus` end in a UnicodeEncodeError traceback. Every output
    is written with one rule (fsutil.encoded): UTF-8, the character that cannot be encoded as `?`."""
    from junitparser import JUnitXml

    def odd_id(doc):
        doc["host"]["id"] = "gpu004\udc80"

    d = write_fleet(tmp_path / "f", _baseline(case_reports, "C16"), odd_id)
    out = {flag: tmp_path / name for flag, name in (("--save", "m.json"), ("--junit", "m.xml"), ("--prometheus", "m.prom"))}
    alone = run_cli(["fleet", "merge", str(d)])
    for flags in ([("--prometheus",)], [("--save",), ("--junit",), ("--prometheus",)]):
        for p in out.values():
            p.unlink(missing_ok=True)
        argv = [x for (flag,) in flags for x in (flag, str(out[flag]))]
        r = run_cli(["fleet", "merge", str(d), *argv])
        assert r.code == alone.code and "Traceback" not in r.err, (r.code, r.err)
        prom = out["--prometheus"].read_bytes().decode("utf-8")  # valid UTF-8 throughout
        assert 'envcheck_node_pass{node="gpu004?"}' in prom, prom
    assert json.loads(out["--save"].read_text(encoding="utf-8"))
    assert any(s.name.startswith("gpu004") for s in JUnitXml.fromfile(str(out["--junit"])))


def test_no_report_to_merge_prints_no_fleet(tmp_path, case_reports):
    """breaker6 F11: an empty folder printed "envcheck fleet — 0 nodes: 0 pass, 0 fail" on stdout and then
    exited 2: stdout said a (vacuous) fleet, the exit code bad input. Now only the one-line reason, and no
    --save of an empty fleet is written; the same when every report there was skipped."""
    (tmp_path / "empty").mkdir()
    r = run_cli(["fleet", "merge", str(tmp_path / "empty"), "--save", str(tmp_path / "fleet.json")])
    assert (r.code, r.out) == (2, "") and r.err.count("\n") == 1 and "no node report in" in r.err, (r.out, r.err)
    assert not (tmp_path / "fleet.json").exists()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "n1.json").write_text("nope")
    r = run_cli(["fleet", "merge", str(tmp_path / "bad")])
    assert (r.code, r.out) == (2, "") and "no readable node report in" in r.err and "n1.json" in r.err, (r.out, r.err)


@pytest.mark.parametrize("text, reason", [
    ("nope", "not a JSON report"),  # was "truncated (JSON ends at line 1, column 1): the node did not finish writing"
    ("<html>502 Bad Gateway</html>", "not a JSON report"),
    ("", "empty"),
    ('{"host": {"id": "n9"}, "checks": [', "truncated"),  # a node that died writing: still truncated
])
def test_a_file_that_is_not_json_is_not_called_truncated(tmp_path, case_reports, text, reason):
    d = write_fleet(tmp_path / "f", case_reports["C01"])
    (d / "zz.json").write_text(text)
    doc = run_cli(["fleet", "merge", str(d), "--json"]).json()
    assert [s["reason"].startswith(reason) for s in doc["skipped"]] == [True], doc["skipped"]


def test_no_report_but_expected_nodes_is_a_failing_fleet(tmp_path):
    """With --expect, no report at all is a fleet whose every node is missing: printed, saved, exit 1
    (stdout and the exit code agree: it was "0 nodes" and exit 2)."""
    (tmp_path / "r").mkdir()
    r = run_cli(["fleet", "merge", str(tmp_path / "r"), "--expect", "n[1-2]", "--save", str(tmp_path / "f.json")])
    assert r.code == 1 and "n[1-2]" in r.out, (r.out, r.err)
    assert json.loads((tmp_path / "f.json").read_text())["missing_count"] == 2
