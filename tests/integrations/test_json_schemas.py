"""Every --json document names its schema, and the JSON Schema file in schemas/ accepts what the
real commands print (validated with jsonschema, Draft 2020-12)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT

jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = ROOT / "schemas"
CASE = ROOT / "tests" / "fixtures" / "verify" / "cases" / "C01.json"


def schema(sid):
    return json.loads((SCHEMAS / f"{sid}.json").read_text())


def test_every_schema_id_has_a_valid_schema_file_and_back():
    from envcheck.cli.conventions import JSON_SCHEMAS

    ids = {sid for sid, _ in JSON_SCHEMAS.values()}
    files = {p.name[:-len(".json")] for p in SCHEMAS.glob("envcheck.*.json")}
    assert ids == files  # (schemas/node-report.schema.json is the fleet's node report, written by --report)
    for sid in ids:
        s = schema(sid)
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["$id"] == sid and s["properties"]["schema"] == {"const": sid}


COMMANDS = [
    (["plan", "--gpu", "RTX 4090", "--driver", "580.65.06", "--json"], 0),
    (["plan", "--gpu", "GTX 980", "--driver", "300", "--torch", "2.13.0", "--json"], 1),  # nothing fits
    (["plan", "--backend", "cpu", "--python", "3.11", "--json"], 0),
    (["probe", "--json"], 0),
    (["verify", "--facts", str(CASE), "--json"], 1),
    (["explain", "--no-probe", "--json", "version `GLIBC_2.17' not found"], None),
    (["explain", "--json", "--list"], 0),  # breaker F3: its own schema, not findings without `rule`
    (["gpus", "4090", "--json"], 0),
    (["matrix", "show", "--torch", "2.13.0", "--json"], 0),
    (["matrix", "validate", "--json"], 0),
    (["matrix", "status", "--json"], None),
    (["config", "plan", "--json"], 0),
]


@pytest.mark.parametrize("args,code", COMMANDS, ids=[" ".join(a[:2]) for a, _ in COMMANDS])
def test_real_output_validates(cli, args, code):
    r = cli(args)
    if code is not None:
        assert r.code == code, r.err
    doc = json.loads(r.out)
    jsonschema.validate(doc, schema(doc["schema"]))
    name = "-".join(a for a in args[:2] if not a.startswith("-") and a in ("matrix", "show", "validate", "status")
                    ) or args[0]
    name += "-list" if "--list" in args else ""
    assert doc["schema"] == f"envcheck.{name}.v1"


def test_schemas_can_fail():
    """A document missing what the contract promises is refused (the schemas are not `{}`)."""
    plan = schema("envcheck.plan.v1")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema": "envcheck.plan.v1", "status": "ok"}, plan)
    verify = schema("envcheck.verify.v1")
    bad = {"schema": "envcheck.verify.v1", "facts": {}, "checks": [{"name": "x", "status": "maybe"}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, verify)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema": "envcheck.gpus.v2", "gpus": []}, schema("envcheck.gpus.v1"))


def test_fleet_documents_validate(cli, tmp_path):
    """fleet merge keeps its own {kind, schema: 1} (fleet diff reads it back); fleet diff is stamped."""
    cases = ROOT / "tests" / "fixtures" / "verify" / "cases"
    reports = tmp_path / "r"
    for host, case in (("n1", "C01.json"), ("n2", "C06.json")):
        r = cli(["verify", "--facts", str(cases / case), "--report", f"{reports}/", "--host", host])
        assert (reports / f"{host}.json").exists(), r.err
    merged = cli(["fleet", "merge", str(reports), "--json"])
    doc = json.loads(merged.out)
    jsonschema.validate(doc, json.loads((SCHEMAS / "fleet.schema.json").read_text()))
    assert doc["schema"] == 1 and doc["nodes_total"] == 2
    diff = cli(["fleet", "diff", str(reports / "n1.json"), str(reports / "n2.json"), "--json"])
    d = json.loads(diff.out)
    assert d["schema"] == "envcheck.fleet-diff.v1"
    jsonschema.validate(d, schema(d["schema"]))
