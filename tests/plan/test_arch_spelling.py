"""One CPU architecture, one spelling per OS (newcomer5 #9): `--arch arm64` and `--arch aarch64`
wrote `arch = "arm64"` and `arch = "aarch64"` into the lock of the same Mac, and the header said
"macOS aarch64" against "macOS arm64". The machine's arch is now spelled the way that OS's wheel
tags and envcheck's own platform key spell it (macosx_*_arm64 / win_arm64, manylinux_*_aarch64).
The oracle is the lock's ``platform`` key, written by another path (the matrix's platform table)."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib


@pytest.mark.parametrize("os_,extra", [("macos", []), ("windows", ["--backend", "cpu"]),
                                       ("linux", ["--backend", "cpu"])])
def test_every_spelling_of_64_bit_arm_gives_one_lock(os_, extra, tmp_path):
    seen = set()
    for spelling in ("arm64", "aarch64", "ARMv8"):
        out = tmp_path / spelling
        r = run_cli(["plan", "-q", "--os", os_, "--arch", spelling, *extra, "--format", "lock", "-o", str(out)])
        assert r.code == 0, r.err
        lock = tomllib.loads((out / "envcheck.lock.toml").read_text())
        arch = lock["machine"]["arch"]
        platform = lock["plan"]["platform"] if "plan" in lock and "platform" in lock["plan"] else None
        if platform is None:
            platform = next(v for k, v in _walk(lock) if k == "platform")
        assert platform.endswith("-" + arch), (spelling, arch, platform)
        seen.add(arch)
    assert len(seen) == 1, seen


def _walk(doc, key=None):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _walk(v, k)
    elif isinstance(doc, list):
        for v in doc:
            yield from _walk(v, key)
    else:
        yield key, doc


def test_the_newer_release_sentence_has_no_double_negative():
    r = run_cli(["plan", "--gpu", "rtx5090", "--json"])
    import json

    alts = json.loads(r.out)["alternatives"]
    newer = [a for a in alts if "is newer and fits too" in a]
    assert newer, alts
    assert all("not unverified" not in a and "no unverified row" in a for a in newer), newer
