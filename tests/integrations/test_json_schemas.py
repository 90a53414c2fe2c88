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
    """breaker F17: fleet merge --json printed {"schema": 1, "kind": …}, a schema no file in schemas/ is
    named after. Now it names its own, like every --json document, and --save writes the same; fleet
    diff is stamped too."""
    cases = ROOT / "tests" / "fixtures" / "verify" / "cases"
    reports = tmp_path / "r"
    for host, case in (("n1", "C01.json"), ("n2", "C06.json")):
        r = cli(["verify", "--facts", str(cases / case), "--report", f"{reports}/", "--host", host])
        assert (reports / f"{host}.json").exists(), r.err
    merged = cli(["fleet", "merge", str(reports), "--json", "--save", str(tmp_path / "fleet.json")])
    doc = json.loads(merged.out)
    assert doc["schema"] == "envcheck.fleet-merge.v1" and list(doc)[0] == "schema"
    jsonschema.validate(doc, schema(doc["schema"]))
    assert doc["nodes_total"] == 2 and doc["kind"] == "envcheck-fleet"
    assert json.loads((tmp_path / "fleet.json").read_text())["schema"] == doc["schema"]
    diff = cli(["fleet", "diff", str(reports / "n1.json"), str(reports / "n2.json"), "--json"])
    d = json.loads(diff.out)
    assert d["schema"] == "envcheck.fleet-diff.v1"
    jsonschema.validate(d, schema(d["schema"]))


def test_fleets_saved_before_still_read(cli, tmp_path):
    """A fleet saved by an envcheck before (`"kind": "envcheck-fleet", "schema": 1`) is still what fleet
    diff reads, and still not a node when it lies beside the reports."""
    cases = ROOT / "tests" / "fixtures" / "verify" / "cases"
    reports = tmp_path / "r"
    cli(["verify", "--facts", str(cases / "C01.json"), "--report", f"{reports}/", "--host", "n1"])
    doc = json.loads(cli(["fleet", "merge", str(reports), "--json"]).out)
    old = {**doc, "schema": 1}
    (tmp_path / "old.json").write_text(json.dumps(old))
    (reports / "fleet.json").write_text(json.dumps(old))
    merged = json.loads(cli(["fleet", "merge", str(reports), "--json"]).out)
    assert merged["nodes_total"] == 1 and merged["skipped"] == []
    d = cli(["fleet", "diff", str(tmp_path / "old.json"), str(reports / "n1.json"), "--json"])
    assert d.code in (0, 1) and json.loads(d.out)["schema"] == "envcheck.fleet-diff.v1", d.err


ERRORS = [
    (["plan", "--gpu", "no-such-gpu", "--json"], 2, "unknown GPU"),
    (["plan", "--json", "--python"], 2, "expected one argument"),  # argparse's usage error
    (["fleet", "merge", "/nonexistent/reports", "--json"], 2, "no such report or folder"),
    (["lock", "check", "/nonexistent.lock.toml", "--json"], 2, "cannot read"),
    (["verify", "--facts", "/nonexistent.json", "--json"], 2, "cannot read"),
    (["plan", "--json", "--config", ""], 2, "give a settings file"),  # before the command runs
]


@pytest.mark.parametrize("args,code,words", ERRORS, ids=[" ".join(a[:2]) for a, _, _ in ERRORS])
def test_a_json_command_that_fails_prints_an_error_document(cli, args, code, words):
    """breaker F17 (docker base/verify --json with no engine printed nothing on stdout): a --json
    command that stops on an error prints one JSON document all the same — envcheck.error.v1, with the
    exit code and the message stderr gets — so `… --json | jq` never reads an empty stream."""
    r = cli(args)
    assert r.code == code, r.err
    doc = json.loads(r.out)
    jsonschema.validate(doc, schema("envcheck.error.v1"))
    assert doc["exit_code"] == code and words in doc["error"] and words in r.err
    assert doc["command"] == " ".join(a for a in args[:2] if not a.startswith("-"))
    plain = cli([a for a in args if a != "--json"])
    assert plain.out == "" and plain.code == code  # without --json: stderr only, as before


@pytest.mark.parametrize("args", [["docker", "verify", "envcheck/torch:2.13.0-cpu"], ["docker", "base"]])
def test_docker_without_an_engine_prints_an_error_document(cli, monkeypatch, tmp_path, args):
    pytest.importorskip("docker")
    dead = tmp_path / "docker.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{dead}")
    r = cli([*args, "--json"])
    assert r.code == 3, r.err  # could not run: the command line was fine; the engine that must do the work is not there
    doc = json.loads(r.out)
    jsonschema.validate(doc, schema("envcheck.error.v1"))
    assert doc["command"] == " ".join(args[:2]) and doc["exit_code"] == 3
    assert f"no Docker engine reachable at unix://{dead}" in doc["error"] and "DOCKER_HOST" in r.err


def _json_commands():
    from envcheck.cli import build_parser
    from envcheck.cli.conventions import each_parser

    return sorted(" ".join(path) for path, p in each_parser(build_parser(None))
                  if path and any("--json" in a.option_strings for a in p._actions))


@pytest.mark.parametrize("command", _json_commands())
def test_every_json_command_answers_bad_usage_with_a_json_document(cli, command):
    """The class, not the docker case: each command that has --json, given a flag it does not know."""
    r = cli([*command.split(), "--json", "--no-such-flag"])
    assert r.code == 2, r.err
    doc = json.loads(r.out)
    jsonschema.validate(doc, schema("envcheck.error.v1"))
    assert doc["command"] == command and doc["exit_code"] == 2
    assert f"envcheck: error: {doc['error']}\n" in r.err  # (unknown flag, or a required argument missing)
