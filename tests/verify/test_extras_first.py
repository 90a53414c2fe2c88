"""Optional extras are checked before any work (newcomer M12): `verify --report DIR --junit X`
without junitparser wrote DIR/<host>.json, then stopped on the missing extra — and the retry refused
to overwrite the report. Every command that needs an extra (a flag's, or the command's own) now
stops first, with the one-line hint, having written nothing.

The extra is made absent the way Python sees a missing package (``sys.modules[name] = None`` makes
``import name`` raise ImportError); the command runs for real otherwise.
"""

from __future__ import annotations

import sys

import pytest

from tests.verify.conftest import CASES


def test_verify_junit_without_its_extra_writes_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "junitparser", None)
    reports = tmp_path / "reports"
    r = cli(["verify", "--facts", str(CASES / "C01.json"), "--report", str(reports), "--host", "gpu001",
             "--junit", str(tmp_path / "node.xml")])
    assert r.code == 2 and "'junit' extra" in r.err, r.err
    assert not reports.exists() and not (tmp_path / "node.xml").exists()


def test_fleet_merge_junit_without_its_extra_writes_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "junitparser", None)
    r = cli(["fleet", "merge", str(tmp_path), "--save", str(tmp_path / "fleet.json"), "--junit", str(tmp_path / "f.xml")])
    assert r.code == 2 and "'junit' extra" in r.err, r.err
    assert not (tmp_path / "fleet.json").exists()


@pytest.mark.parametrize("argv,module", [(["docker", "build", "--backend", "cpu"], "docker"),
                                         (["matrix", "update"], "requests"),
                                         (["completion", "bash"], "argcomplete")])
def test_commands_that_need_an_extra_say_so_first(cli, monkeypatch, argv, module):
    monkeypatch.setitem(sys.modules, module, None)
    r = cli(argv)
    assert r.code == 2 and "extra: pip install" in r.err, r.err
    assert r.out == ""
