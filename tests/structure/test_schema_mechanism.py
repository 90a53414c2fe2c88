"""One schema mechanism (envcheck/schema.py) for the four kinds of file envcheck reads — matrix
files, machine files, locks, facts — so a value means the same in each (issue #9: a machine file
once rejected ``sm_90a`` that the matrix accepted).

Every file here is a real file on disk read by the real reader (``load_file``, ``load_machine``,
``load_lock``, ``load_facts``); the expected answers are written out by hand.
"""

from __future__ import annotations

import copy
import json
from dataclasses import fields
from pathlib import Path

import pytest
import tomli_w

from envcheck import schema
from envcheck.errors import DataFileError
from envcheck.lock import EXPECT, Expect, load_lock
from envcheck.machine.io import GPU, MACHINE, load_machine
from envcheck.machine.model import GpuDevice, Machine
from envcheck.matrix.load import load_file
from envcheck.verify.facts import load_facts

ROOT = Path(__file__).resolve().parents[2]
SRC = "https://download.pytorch.org/whl/"

CHANNEL = {"name": "pytorch-cu128", "index_url": SRC + "cu128", "kind": "simple", "source": SRC,
           "confidence": "official"}
BUILD = {"torch": "2.7.0", "variant": "cu128", "channel": "pytorch-cu128", "platforms": ["linux-x86_64"],
         "wheel_tag": "manylinux_2_28_x86_64", "python": ["3.12"], "cuda": "12.8", "sm": ["sm_90"],
         "source": SRC, "confidence": "official"}
GPU_ROW = {"name": "NVIDIA H100", "vendor": "nvidia", "arch": "sm_90", "source": SRC, "confidence": "community"}
MACHINE_DOC = {"os": "linux", "arch": "x86_64", "gpus": [{"vendor": "nvidia", "name": "NVIDIA H100", "arch": "sm_90"}]}
LOCK_DOC = {"schema": 1,
            "build": {"torch": "2.7.0", "variant": "cu128", "index_url": SRC + "cu128"},
            "expect": {"torch_version": "2.7.0+cu128", "variant": "cu128", "python": "3.12", "cuda": "12.8",
                       "arch_list": ["sm_90"], "gpu_arch": ["sm_90"]},
            "pip": {"lines": [f"--index-url {SRC}cu128", "torch==2.7.0+cu128"]}}
FACTS_DOC = {"schema": 2, "platform": {"os": "linux", "glibc": "2.35"},
             "runs": {"cuda_build": {"outcome": "ok", "data": {"cuda": "12.8"}}}, "machine": MACHINE_DOC}


def _write(tmp_path: Path, name: str, doc: dict) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc) if name.endswith(".json") else tomli_w.dumps(doc))
    return p


def read(kind: str, tmp_path: Path, edit) -> None:
    """Write a valid file of ``kind`` changed by ``edit(doc)`` and read it with the real reader."""
    if kind == "matrix-build":
        doc = {"channel": [copy.deepcopy(CHANNEL)], "build": [copy.deepcopy(BUILD)]}
        edit(doc["build"][0])
        load_file(_write(tmp_path, "torch-builds.toml", doc), strict=True)
    elif kind == "matrix-gpu":
        doc = {"gpu": [copy.deepcopy(GPU_ROW)]}
        edit(doc["gpu"][0])
        load_file(_write(tmp_path, "gpus.toml", doc), strict=True)
    elif kind == "machine":
        doc = {"schema": 1, "machine": copy.deepcopy(MACHINE_DOC)}
        edit(doc["machine"])
        load_machine(_write(tmp_path, "machine.toml", doc))
    elif kind == "lock":
        doc = copy.deepcopy(LOCK_DOC)
        edit(doc)
        load_lock(_write(tmp_path, "envcheck.lock.toml", doc))
    elif kind == "facts":
        doc = copy.deepcopy(FACTS_DOC)
        edit(doc)
        load_facts(_write(tmp_path, "facts.json", doc))
    else:  # pragma: no cover
        raise AssertionError(kind)


def accepts(kind: str, tmp_path: Path, edit) -> bool:
    try:
        read(kind, tmp_path, edit)
    except DataFileError:
        return False
    return True


def test_the_valid_files_are_valid(tmp_path):
    """The base files are accepted, so a rejection below is the value's doing."""
    for kind in ("matrix-build", "matrix-gpu", "machine", "lock", "facts"):
        read(kind, tmp_path, lambda d: None)


# -- one value, one answer, in every file kind ----------------------------------------------------
def _set(*path):
    def setter(value):
        def edit(doc):
            node = doc
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = value

        return edit

    return setter


VERSION_SLOTS = {
    "matrix-build": _set("cuda"),
    # glibc: a version slot no cross-field rule narrows (cuda_driver_max must be MAJOR.MINOR, a
    # driver's CUDA: envcheck/machine/consistency.py), so it tells the shared version grammar alone
    "machine": _set("glibc"),
    "lock": lambda v: _set("expect", "cuda")(v),
    "facts": _set("runs", "cuda_build", "data", "cuda"),
}


@pytest.mark.parametrize("value, ok", [
    ("12.8", True), ("570.124.06", True), ("2.7.0+cu128", True), ("13.0", True),
    ("12.x", False), ("", False), ("570.x.1", False), ("1" * 70, False), (12.8, False), (128, False),
])
def test_a_version_is_a_version_in_every_file(tmp_path, value, ok):
    answers = {kind: accepts(kind, tmp_path, slot(value)) for kind, slot in VERSION_SLOTS.items()}
    assert answers == {kind: ok for kind in VERSION_SLOTS}


def _gpu_arch(kind, vendor):
    def setter(value):
        def edit(doc):
            if kind == "matrix-gpu":
                doc.update(vendor=vendor, arch=value)
            elif kind == "lock":
                doc["expect"]["gpu_arch"] = [value]
            else:
                machine = doc["machine"] if kind == "facts" else doc
                machine["gpus"][0].update(vendor=vendor, arch=value)
                if vendor == "apple":  # an Apple-silicon GPU is only in a Mac (a Linux one contradicts it)
                    machine.update(os="macos", arch="arm64")

        return edit

    return setter


@pytest.mark.parametrize("value, vendor, ok", [
    ("sm_90a", "nvidia", True), ("sm_100f", "nvidia", True), ("sm_120", "nvidia", True), ("gfx1100", "amd", True),
    ("gfx90a", "amd", True), ("apple-m2", "apple", True),
    ("sm_9", "nvidia", False), ("SM_90", "nvidia", False), ("ampere", "nvidia", False),
    ("gfx11-generic", "amd", False), ("gfx1100-generic", "amd", False), ("sm_90 ", "nvidia", False),
])
def test_a_gpu_arch_is_one_thing_in_every_file(tmp_path, value, vendor, ok):
    kinds = ("matrix-gpu", "machine", "lock", "facts")
    answers = {kind: accepts(kind, tmp_path, _gpu_arch(kind, vendor)(value)) for kind in kinds}
    assert answers == {kind: ok for kind in kinds}


@pytest.mark.parametrize("value, vendor", [("gfx1100", "nvidia"), ("sm_89", "amd"), ("apple-m2", "intel")])
def test_an_arch_of_another_vendor_is_refused_by_matrix_and_machine(tmp_path, value, vendor):
    kinds = ("matrix-gpu", "machine", "facts")
    assert {k: accepts(k, tmp_path, _gpu_arch(k, vendor)(value)) for k in kinds} == dict.fromkeys(kinds, False)


def _kernel(kind):
    def setter(value):
        def edit(doc):
            if kind == "lock":
                doc["expect"]["arch_list"] = [value]
                return
            key = "ptx" if value.startswith("compute_") else "gfx" if value.startswith("gfx") else "sm"
            doc.pop("sm")
            doc[key] = [value]

        return edit

    return setter


@pytest.mark.parametrize("value, ok", [
    ("sm_90a", True), ("sm_100f", True), ("compute_90", True), ("compute_120a", True), ("gfx1100", True),
    ("gfx11-generic", True), ("gfx10-3-generic", True), ("gfx9-4-generic", True),
    ("sm_9", False), ("compute_9", False), ("gfx11", False), ("sm_90x", False), ("gfx1100-generic", False),
])
def test_a_kernel_target_is_one_thing_in_matrix_and_lock(tmp_path, value, ok):
    """Facts keep torch's arch list as torch reports it (a diagnosis reads it, never refuses it).
    LLVM's generic AMD targets are gfx<major>[-<minor>]-generic (llvm/llvm-project docs/AMDGPUUsage.rst,
    llvm/llvm-project#115190 for gfx9-4-generic); there is no gfx1100-generic."""
    answers = {k: accepts(k, tmp_path, _kernel(k)(value)) for k in ("matrix-build", "lock")}
    assert answers == {"matrix-build": ok, "lock": ok}


PYTHON_SLOTS = {
    "matrix-build": lambda v: _set("python")([v]),
    "machine": _set("python"),
    "lock": lambda v: _set("expect", "python")(v),
    "facts": lambda v: _set("machine", "python")(v),
}


@pytest.mark.parametrize("value, ok", [
    ("3.12", True), ("3.13t", True), ("3.9", True),
    ("3.12.1", False), ("3", False), ("py3.12", False), ("3.13T", False), (" 3.12", False),
])
def test_a_python_is_one_thing_in_every_file(tmp_path, value, ok):
    answers = {kind: accepts(kind, tmp_path, slot(value)) for kind, slot in PYTHON_SLOTS.items()}
    assert answers == {kind: ok for kind in PYTHON_SLOTS}


def test_an_empty_python_is_a_lock_of_a_plan_without_one(tmp_path):
    """The plan writes python = "" when its build names no Python (resolve/plan.py); the lock reads
    back what envcheck wrote. A machine or a matrix row never has an empty Python."""
    assert accepts("lock", tmp_path, PYTHON_SLOTS["lock"](""))
    assert not accepts("machine", tmp_path, PYTHON_SLOTS["machine"](""))
    assert not accepts("matrix-build", tmp_path, PYTHON_SLOTS["matrix-build"](""))


def test_sm_90a_machine_names_the_gpu_it_belongs_to(tmp_path):
    doc = {"schema": 1, "machine": {**MACHINE_DOC, "gpus": [{"vendor": "nvidia", "name": "H100", "arch": "sm_90a"}]}}
    assert load_machine(_write(tmp_path, "m.toml", doc)).gpus[0].arch == "sm_90"


# -- each error names its file, its key path and what was expected ------------------------------
@pytest.mark.parametrize("kind, edit, message", [
    ("matrix-build", _set("cuda")("12.x"),
     "torch-builds.toml: build[0].cuda: expected a version like '12.8' or '570.124.06', got a string \"12.x\""),
    ("matrix-build", _set("sm")(["sm_90", "sm_9"]),
     "torch-builds.toml: build[0].sm[1]: expected an NVIDIA cubin arch like 'sm_89' or 'sm_90a', got a string \"sm_9\""),
    ("matrix-build", lambda d: d.pop("variant"), "torch-builds.toml: build[0].variant: missing (required)"),
    ("matrix-build", _set("cudaa")("12.8"), "torch-builds.toml: build[0].cudaa: unknown key; known keys: torch, "),
    ("matrix-build", _set("platforms")(["linux-x86_64", "beos-m68k"]),
     "torch-builds.toml: build[0].platforms[1]: expected one of linux-x86_64, "),
    ("matrix-build", _set("wheel_tag")({"linux-x86_64": "x", "beos": "y"}),
     "torch-builds.toml: build[0].wheel_tag: expected a wheel tag or a table of them per platform"),
    ("matrix-build", _set("source")("somewhere"), "torch-builds.toml: build[0].source: expected a source: an https"),
    ("matrix-gpu", _set("arch")("gfx1100"),
     "gpus.toml: gpu[0].arch: a nvidia GPU's arch starts with sm_, got 'gfx1100'"),
    ("machine", _set("gpus")([{"vendor": "nvidia", "name": "x", "arch": "sm_9"}]),
     "machine.toml: machine.gpus[0].arch: expected a GPU arch like 'sm_89', 'sm_90a', 'gfx1100'"),
    ("machine", _set("gpus")([{"vendor": "nvidia", "name": "", "arch": "sm_90"}]),
     "machine.toml: machine.gpus[0].name: expected a GPU name"),
    ("machine", _set("how")({"glibc\n": "ldd"}),
     "machine.toml: machine.how.glibc\\n: unknown key; a key here is a field name (at most 64 characters)"),
    ("machine", _set("distro_name")("Ubuntu\x1b[31m"),
     "machine.toml: machine.distro_name: expected printable text on one line (at most 200 characters)"),
    ("machine", _set("os")("beos"), "machine.toml: machine.os: expected one of linux, windows, macos, got a string"),
    ("machine", _set("gpu")([]), "machine.toml: machine.gpu: unknown key; known keys: os, arch, "),
    ("machine", _set("plan_gpu")(1), "machine.toml: machine.plan_gpu: expected the index of one of the 1 GPUs, got 1"),
    ("lock", _set("expect", "arch_list")(["sm_90", "sm90"]),
     "envcheck.lock.toml: expect.arch_list[1]: expected a kernel target like 'sm_90a', 'compute_90' or 'gfx1100'"),
    ("lock", _set("build", "index_url")("https://h.example/$(id)"),
     "envcheck.lock.toml: build.index_url: 'https://h.example/$(id)': a URL here has no whitespace or shell "
     "metacharacters ($ ( ))"),
    ("lock", lambda d: d.pop("expect"), "envcheck.lock.toml: expect: missing (required): [expect] table"),
    ("lock", _set("expect", "driver_floor")(570), "envcheck.lock.toml: expect.driver_floor: expected a string"),
    ("facts", _set("runs", "matmul")({"outcome": "maybe"}),
     "facts.json: runs.matmul.outcome: expected one of ok, error, skip, crash, timeout, got 'maybe'"),
    ("facts", _set("runs", "matmul")({"outcome": "ok", "data": {"seed": 1}}),
     "facts.json: runs.matmul.data.results: missing: an \"ok\" result must carry the check's data"),
    ("facts", _set("runs", "warp")({"outcome": "ok"}), "facts.json: runs.warp: unknown probe; known probes: "),
    ("facts", _set("python")({"bits": 48}), "facts.json: python.bits: expected one of 32, 64, got 48"),
    ("facts", _set("machine", "glibc")("2.x"),
     "facts.json: machine.glibc: expected a version like '12.8' or '570.124.06', got a string \"2.x\""),
])
def test_each_error_names_file_key_and_expectation(tmp_path, kind, edit, message):
    with pytest.raises(DataFileError) as err:
        read(kind, tmp_path, edit)
    text = str(err.value)
    assert text.startswith(str(tmp_path) + "/" + message.split(":")[0])
    assert message in text, text
    assert "\n" not in text and err.value.exit_code == 2


# -- the specs describe the types they fill -----------------------------------------------------
def test_machine_specs_cover_the_dataclasses():
    assert set(MACHINE.fields) == {f.name for f in fields(Machine)}
    assert set(GPU.fields) == {f.name for f in fields(GpuDevice)}


def test_expect_spec_covers_the_dataclass():
    named = {f.name for f in fields(Expect)} - {"driver"}  # driver is written as driver_* keys
    assert set(EXPECT.fields) == named


def test_probe_json_schema_agrees_with_the_machine_spec():
    """schemas/envcheck.probe.v1.json (what `probe --json` writes) names only fields the machine
    spec reads back, with the same vocabulary."""
    doc = json.loads((ROOT / "schemas" / "envcheck.probe.v1.json").read_text())
    props = doc["properties"]
    assert set(props) - {"schema"} <= set(MACHINE.fields)
    assert tuple(props["os"]["enum"]) == schema.OSES
    assert set(props["gpus"]["items"]["properties"]) <= set(GPU.fields)
    assert set(props["gpus"]["items"]["required"]) <= set(GPU.required())


# -- the mechanism itself ---------------------------------------------------------------------------
def test_check_finds_the_first_misfit_with_its_path():
    spec = schema.Table({"a": schema.req(schema.list_of({"b": "int"}))}, unknown="allow")
    assert schema.check({"a": [{"b": 1}, {"b": "x"}]}, spec) == ("a[1].b", 'expected an integer, got a string "x"')
    assert schema.check({"a": [{"b": 1}, None]}, spec) == ("a[1]", "expected a value, got null")
    assert schema.check({}, spec) == ("a", "missing (required)")
    assert schema.check({"a": [], "zzz": object()}, spec) is None  # unknown keys allowed here


def test_strict_unknown_keys_are_errors_only_when_asked():
    spec = schema.Table({"a": "int"}, unknown="strict")
    assert schema.check({"a": 1, "b": 2}, spec, strict=False) is None
    assert schema.check({"a": 1, "b": 2}, spec, strict=True) == ("b", "unknown key; known keys: a")
    assert schema.validate({"a": 1, "b": 2}, spec, "f", strict=False) == {"a": 1}  # the newer key left out


def test_null_is_absent_in_a_table_and_refused_in_lists_unless_nullable():
    assert schema.check({"a": None}, {"a": "int"}) is None
    assert schema.check([1, None], schema.list_of("int")) == ("[1]", "expected a value, got null")
    assert schema.check({"k": None}, schema.map_of(schema.nullable("str"))) is None


def test_freeze_turns_lists_into_tuples_and_one_or_list_into_a_tuple():
    spec = schema.Table({"a": schema.one_or_list("str"), "b": schema.list_of("int")})
    assert schema.validate({"a": "x", "b": [1, 2]}, spec, "f", freeze=True) == {"a": ("x",), "b": (1, 2)}


def test_sizes_are_bounded():
    assert schema.check("x" * 201, "name") is not None
    assert schema.check(list(range(5)), schema.list_of("int", max_items=4)) == ("", "5 items, more than the 4 allowed")
    deep: object = "x"
    for _ in range(12):
        deep = {"k": deep}
    assert schema.check(deep, schema.plain(depth=8)) is not None
    assert schema.check({"k": {"k": "x"}}, schema.plain(depth=8)) is None


@pytest.mark.parametrize("kind, edit, path", [
    ("machine", _set("a\nb\x1b[31m")(1), "machine.a\\nb\\x1b[31m: unknown key"),
    ("facts", _set("runs", "x\u2028y")({"outcome": "ok"}), "runs.x\\u2028y: unknown probe"),
    ("machine", _set("k" * 5000)(1), "machine." + "k" * 64 + "...: unknown key"),
])
def test_a_hostile_key_is_named_on_one_safe_line(tmp_path, kind, edit, path):
    with pytest.raises(DataFileError) as err:
        read(kind, tmp_path, edit)
    text = str(err.value)
    assert path in text, text
    assert "\n" not in text and "\x1b" not in text and "\u2028" not in text and len(text) < 2000


def test_booleans_are_not_integers():
    assert schema.check(True, "int") == ("", "expected an integer, got a boolean true")
    assert schema.check(True, schema.enum(1, 2)) is not None


# -- fleet merge reads node reports with the same mechanism -----------------------------------------
NODE = {"kind": "envcheck-node-report", "schema": 1, "host": {"id": "node07", "rank": 0},
        "checks": [{"name": "matmul", "status": "pass"}], "facts": {}}


@pytest.mark.parametrize("edit, reason", [
    (lambda d: None, ""),
    (lambda d: d["host"].pop("id"), "host.id: missing (required)"),
    (lambda d: d["host"].update(id=""), 'host.id: expected a node name, got a string ""'),
    (lambda d: d["host"].update(rank="0"), 'host.rank: expected an integer, got a string "0"'),
    (lambda d: d.update(checks=[{"name": "matmul"}, "pass"]), 'checks[1]: expected a table, got a string "pass"'),
    (lambda d: d.pop("host"), "host: missing (required): {id: node name}"),
])
def test_a_node_report_is_read_with_the_schema(tmp_path, edit, reason):
    from envcheck.fleet.merge import read_report

    doc = copy.deepcopy(NODE)
    edit(doc)
    got, why = read_report(_write(tmp_path, "node07.json", doc))
    assert why == reason
    assert (got is None) == bool(reason)


def test_node_report_spec_agrees_with_its_json_schema():
    from envcheck.fleet.merge import NODE_REPORT

    doc = json.loads((ROOT / "schemas" / "node-report.schema.json").read_text())
    assert set(NODE_REPORT.required()) <= set(doc["required"])
    host = NODE_REPORT.fields["host"].spec
    assert set(host.required()) == set(doc["properties"]["host"]["required"])
    json_type = {key: doc["properties"]["host"]["properties"][key]["type"] for key in host.fields}
    assert json_type == {key: "integer" if spec == "int" else "string" for key, spec in host.fields.items()}


# -- the same specs as JSON Schema (schema.json_schema) ---------------------------------------------
def _locks_written_by_plan():
    """Every envcheck.lock.toml the render goldens hold (real `plan --format all` output)."""
    from envcheck.matrix.load import tomllib

    for f in sorted((ROOT / "tests" / "golden" / "render").glob("*.txt")):
        parts = f.read_text().split("==> ")
        for part in parts:
            if part.startswith("envcheck.lock.toml <==\n"):
                yield f.stem, tomllib.loads(part.split("\n", 1)[1])


def _kinds():
    from envcheck.fleet.merge import NODE_REPORT
    from envcheck.lock import LOCK
    from envcheck.verify.facts import FACTS

    return {"machine": MACHINE, "lock": LOCK, "facts": FACTS, "node-report": NODE_REPORT}


def test_each_file_kind_has_a_valid_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    from envcheck.matrix.load import SPECS

    for name, spec in {**_kinds(), **{c.__name__: s for c, s in SPECS.items()}}.items():
        jsonschema.Draft202012Validator.check_schema(schema.json_schema(spec, title=name))


def test_what_envcheck_accepts_the_json_schema_accepts():
    """Real documents — every shipped matrix row, every lock the render goldens hold (and its
    machine), the verify fact cases — pass envcheck's check and the derived JSON Schema alike."""
    jsonschema = pytest.importorskip("jsonschema")
    from envcheck.matrix.load import tomllib

    from envcheck.lock import LOCK
    from envcheck.matrix.load import SPECS, TABLES
    from envcheck.verify.facts import FACTS

    seen = 0
    for f in sorted((ROOT / "matrices").glob("*.toml")):
        tables = next((t for rx, t in TABLES if rx.fullmatch(f.name)), {})
        data = tomllib.loads(f.read_text())
        for tname, cls in tables.items():
            validator = jsonschema.Draft202012Validator(schema.json_schema(SPECS[cls]))
            for row in data.get(tname, []):
                assert schema.check(row, SPECS[cls]) is None
                validator.validate(row)
                seen += 1
    locks = list(_locks_written_by_plan())
    assert len(locks) >= 5
    for _name, lock in locks:
        assert schema.check(lock, LOCK) is None and schema.check(lock["machine"], MACHINE) is None
        jsonschema.validate(lock, schema.json_schema(LOCK))
        jsonschema.validate(lock["machine"], schema.json_schema(MACHINE))
    for f in sorted((ROOT / "tests" / "fixtures" / "verify" / "cases").glob("*.json")):
        doc = json.loads(f.read_text())
        assert schema.check(doc, FACTS) is None
        jsonschema.validate(doc, schema.json_schema(FACTS))
    assert seen > 1000


@pytest.mark.parametrize("kind, edit", [
    ("machine", _set("os")("beos")),
    ("machine", _set("gpus")([{"vendor": "nvidia", "name": "x", "arch": "sm_9"}])),
    ("machine", _set("gpus")([{"vendor": "nvidia", "arch": "sm_90"}])),
    ("machine", _set("gpu")([])),
    ("machine", _set("python")("3.12.1")),
    ("lock", _set("expect", "arch_list")(["sm90"])),
    ("lock", _set("expect", "cudnn_version")("9.1")),
    ("lock", lambda d: d.pop("build")),
    ("facts", _set("runs", "matmul")({"outcome": "maybe"})),
    ("facts", _set("runs", "warp")({"outcome": "ok"})),
    ("facts", _set("python")({"bits": 48})),
])
def test_what_the_json_schema_refuses_envcheck_refuses(kind, edit):
    """Type, required, unknown-key, enum and pattern misfits: refused by both."""
    jsonschema = pytest.importorskip("jsonschema")
    base = {"machine": MACHINE_DOC, "lock": LOCK_DOC, "facts": FACTS_DOC}[kind]
    doc = copy.deepcopy(base)
    edit(doc)
    spec = _kinds()[kind]
    assert schema.check(doc, spec) is not None
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema.json_schema(spec))
    jsonschema.validate(base, schema.json_schema(spec))  # the base passes: the edit is what fails
