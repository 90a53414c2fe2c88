"""`envcheck explain` on fresh public bug reports (tests/fixtures/verify/reports.toml): every report is
put in its message family first, and the cause and fix carry what the maintainers or the accepted
answer gave (the family's key facts); real reports of bugs in the user's own code match no family.

The reports were collected for the hexplain evaluation (/work/notes/hexplain-eval.md) from other
repositories and other wordings than the families' own examples (messages.toml): translated Windows
errors, old torch wordings ("cuda runtime error (38)"), tracebacks around the message, truncated
titles — the variants a family has to cover."""

from __future__ import annotations

import re

import pytest

from envcheck.verify.rules import load_rules
from tests.verify.conftest import FIXTURES

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

DATA = tomllib.loads((FIXTURES / "reports.toml").read_text(encoding="utf-8"))
REPORTS = DATA["report"]
FACTS = {f["id"]: f for f in DATA["family"]}
NEGATIVES = DATA["negative"]


def explain(cli, text, *flags):
    r = cli(["explain", "--no-probe", "--json", *flags, text])
    doc = r.json()
    return r, doc if isinstance(doc, list) else doc["findings"]


@pytest.mark.parametrize("report", REPORTS, ids=[f"{r['family']}-{i}" for i, r in enumerate(REPORTS)])
def test_report_gets_its_family_with_the_maintainers_cause_and_fix(cli, report):
    r, findings = explain(cli, report["text"], *report.get("flags", []))
    assert r.code == 0, (report["source"], r.err)
    assert findings[0]["rule"] == report["family"], (report["source"], [f["rule"] for f in findings])
    f = findings[0]
    facts = FACTS[report["family"]]
    for word in facts["cause"]:
        assert word.lower() in f["cause"].lower(), (report["source"], word, f["cause"])
    for word in facts["fix"]:
        assert word.lower() in f["fix"].lower(), (report["source"], word, f["fix"])
    assert not re.search(r"(?<!\$)\{[a-z_]+\}", f["cause"] + f["fix"]), f
    assert f["source"]


@pytest.mark.parametrize("report", NEGATIVES, ids=[n["source"].rsplit("/", 3)[1] for n in NEGATIVES])
def test_a_bug_in_the_users_code_is_no_environment_family(cli, report):
    r, findings = explain(cli, report["text"])
    assert r.code == 1 and findings == [], [f["rule"] for f in findings]


def test_the_reports_are_distinct_public_reports_of_known_families(matrix):
    sources = [r["source"] for r in REPORTS]
    assert len(sources) >= 40 and len(set(sources)) == len(sources)
    assert all(s.startswith("https://github.com/") for s in sources + [n["source"] for n in NEGATIVES])
    families = {r.id for r in load_rules(matrix)}
    assert {r["family"] for r in REPORTS} <= families
    assert set(FACTS) == {r["family"] for r in REPORTS}  # every family's key facts are checked
    assert all(FACTS[f]["cause"] for f in FACTS)  # no family is held to nothing


@pytest.mark.parametrize("family", sorted({r["family"] for r in REPORTS}))
def test_no_other_family_claims_a_report(cli, family):
    """A message belongs to one family: no other family of the file may match any report of it (the
    first-match order must not be what hides a wrong family); a paste holding two messages names both."""
    for report in [r for r in REPORTS if r["family"] == family]:
        _, findings = explain(cli, report["text"], *report.get("flags", []))
        also = report.get("also", [])  # a paste that carries a second message of another family
        assert [f["rule"] for f in findings] == [family, *also], (report["source"], [f["rule"] for f in findings])
