"""sha256 pins for `plan --hashes` (envcheck.matrix.index.hashes.wheel_hashes) from the generated index data."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envcheck.errors import IndexDataMissing
from envcheck.matrix import load_matrix
from envcheck.matrix.index.hashes import wheel_hashes

TV = {  # torchvision files the test's PEP 691 page serves (names as on download.pytorch.org, digests made up)
    "torchvision-0.22.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl": "a" * 64,
    "torchvision-0.22.1+cu128-cp312-cp312-win_amd64.whl": "b" * 64,
    "torchvision-0.22.1+cu126-cp312-cp312-manylinux_2_28_x86_64.whl": "c" * 64,
}


def listed_sha(listing: bytes, path: str) -> str:
    """The #sha256 fragment of the link to ``path`` in the real listing."""
    m = re.search(re.escape(path) + r"#sha256=([0-9a-f]{64})", listing.decode())
    assert m, path
    return m.group(1)


def _update(cli, server, mx: Path, packages: str, channel: str = "pytorch", base: str = "/whl/"):
    r = cli(["matrix", "update", "--index", f"{server.url}{base}", "--channel", channel, "--packages", packages,
             "--matrices", str(mx), "--retries", "0"])
    assert r.code == 0, r.err


@pytest.fixture
def mxh(cli, server, listing, mx):
    server.html("/whl/torch/", listing)
    server.json("/whl/torchvision/", {
        "meta": {"api-version": "1.0"}, "name": "torchvision",
        "files": [{"filename": n, "url": f"/whl/{n.split('+')[1].split('-')[0]}/{n.replace('+', '%2B')}",
                   "hashes": {"sha256": h}} for n, h in TV.items()],
    })
    _update(cli, server, mx, "torch,torchvision")
    return load_matrix(mx)


def test_cu126_pins_the_file_pip_gets_from_whl_cu126(mxh, listing):
    got = wheel_hashes(mxh, "2.7.1", "cu126", {}, "linux-x86_64", "3.11")
    # the same file name also sits in /whl/cu126_full/ with another digest; pip reads /whl/cu126/
    assert got == {"torch": [listed_sha(listing, "/whl/cu126/torch-2.7.1%2Bcu126-cp311-cp311-manylinux_2_28_x86_64.whl")]}
    assert got["torch"] == ["e1a8465165708c2e2e90786ade8a3e1b1d01eca1f022792cd397caad9d8c21bc"]


def test_free_threaded_aarch64(mxh, listing):
    got = wheel_hashes(mxh, "2.7.1", "cu128", {}, "linux-aarch64", "3.13t")
    assert got == {"torch": [listed_sha(listing, "/whl/cu128/torch-2.7.1%2Bcu128-cp313-cp313t-manylinux_2_28_aarch64.whl")]}


def test_companions_get_the_build_label(mxh, listing):
    got = wheel_hashes(mxh, "2.7.1", "cu128", {"torchvision": "0.22.1"}, "windows-x86_64", "3.12")
    assert list(got) == ["torch", "torchvision"]
    assert got["torch"] == [listed_sha(listing, "/whl/cu128/torch-2.7.1%2Bcu128-cp312-cp312-win_amd64.whl")]
    assert got["torchvision"] == ["b" * 64]
    # an explicit label is kept as given
    assert wheel_hashes(mxh, "2.7.1", "cu128", {"torchvision": "0.22.1+cu126"}, "linux-x86_64",
                        "3.12")["torchvision"] == ["c" * 64]


def test_companion_without_index_data(mxh):
    with pytest.raises(IndexDataMissing, match=r"no index data for torchaudio on channel pytorch.*envcheck matrix update"):
        wheel_hashes(mxh, "2.7.1", "cu128", {"torchaudio": "2.7.1"}, "linux-x86_64", "3.12")


def test_release_newer_than_the_data(mxh):
    assert mxh.builds_for("2.8.0"), "the matrix knows 2.8.0 builds"
    with pytest.raises(IndexDataMissing) as err:
        wheel_hashes(mxh, "2.8.0", "cu128", {}, "linux-x86_64", "3.12")
    msg = str(err.value)
    assert "no torch 2.8.0+cu128 wheel for linux-x86_64 / Python 3.12" in msg
    assert "newest on record: 2.7.1" in msg and "envcheck matrix update" in msg


def test_python_without_a_wheel(mxh):
    with pytest.raises(IndexDataMissing, match=r"Python 3\.8 .*that release has: .*2\.7\.1\+cu128"):
        wheel_hashes(mxh, "2.7.1", "cu128", {}, "linux-x86_64", "3.8")


def test_no_build_row(mxh):
    with pytest.raises(IndexDataMissing, match="no \\[\\[build\\]\\] row for torch 2.7.1 cu999"):
        wheel_hashes(mxh, "2.7.1", "cu999", {}, "linux-x86_64", "3.12")


def test_pypi_channel_uses_bare_versions(cli, server, listing, mx):
    # the same listing served as if it were the pypi channel: macOS files carry no label
    server.html("/simple/torch/", listing)
    _update(cli, server, mx, "torch", channel="pypi", base="/simple/")
    got = wheel_hashes(load_matrix(mx), "2.7.1", "cpu", {}, "macos-arm64", "3.12", channel="pypi")
    assert got == {"torch": [listed_sha(listing, "/whl/cpu/torch-2.7.1-cp312-none-macosx_11_0_arm64.whl")]}


def test_file_without_hash_cannot_be_pinned(cli, server, listing, mx):
    server.html("/whl/torch/", listing)
    server.json("/whl/torchvision/", {"meta": {"api-version": "1.0"}, "name": "torchvision", "files": [
        {"filename": "torchvision-0.22.1+cu128-cp312-cp312-win_amd64.whl", "url": "x.whl", "hashes": {}}]})
    _update(cli, server, mx, "torch,torchvision")
    with pytest.raises(IndexDataMissing, match="without a sha256"):
        wheel_hashes(load_matrix(mx), "2.7.1", "cu128", {"torchvision": "0.22.1"}, "windows-x86_64", "3.12")


def test_plan_hashes_end_to_end(cli, mxh, server, listing, tmp_path):
    """`plan --hashes` writes requirements.txt lines pip --require-hashes accepts, with the index's digests."""
    ta = "torchaudio-2.7.1+cu126-cp312-cp312-manylinux_2_28_x86_64.whl"
    server.json("/whl/torchaudio/", {"meta": {"api-version": "1.0"}, "name": "torchaudio", "files": [
        {"filename": ta, "url": f"/whl/cu126/{ta.replace('+', '%2B')}", "hashes": {"sha256": "e" * 64}}]})
    _update(cli, server, mxh.directory, "torchaudio")
    out = tmp_path / "o"
    args = ["plan", "--matrices", str(mxh.directory), "--gpu", "RTX 4090", "--torch", "2.7.1", "--backend", "cu126"]
    r = cli([*args, "--python", "3.12", "--hashes", "-o", str(out), "--format", "pip"])
    assert r.code == 0, r.err
    req = (out / "requirements.txt").read_text()
    want = listed_sha(listing, "/whl/cu126/torch-2.7.1%2Bcu126-cp312-cp312-manylinux_2_28_x86_64.whl")
    assert f"torch==2.7.1+cu126 --hash=sha256:{want}" in req
    assert f"torchvision==0.22.1+cu126 --hash=sha256:{TV['torchvision-0.22.1+cu126-cp312-cp312-manylinux_2_28_x86_64.whl']}" in req
    assert f"torchaudio==2.7.1+cu126 --hash=sha256:{'e' * 64}" in req
    # no cp311 torchvision in this index data: a clear error naming it, exit 1, nothing written
    r2 = cli([*args, "--python", "3.11", "--hashes", "-o", str(tmp_path / "o2")])
    assert r2.code == 3 and "torchvision" in r2.err and "Traceback" not in r2.err
    assert not (tmp_path / "o2").exists()


def test_plan_lists_index_only_releases_as_unverified(cli, server, mx):
    """A release the index has and the sourced facts lack is a candidate rejected as `unverified`."""
    name = "torch-2.16.0+cu134-cp311-cp311-manylinux_2_28_x86_64.whl"
    server.json("/whl/torch/", {"meta": {"api-version": "1.0"}, "name": "torch", "files": [
        {"filename": name, "url": f"/whl/cu134/{name.replace('+', '%2B')}", "hashes": {"sha256": "d" * 64}}]})
    _update(cli, server, mx, "torch")
    r = cli(["plan", "--matrices", str(mx), "--gpu", "RTX 4090", "--python", "3.11", "--json"])
    data = r.json()
    new = [c for c in data["candidates"] if c["torch"] == "2.16.0"]
    assert new and not new[0]["accepted"]
    assert new[0]["reasons"][0]["code"] == "unverified" and "matrix status" in new[0]["reasons"][0]["message"]
    assert data["chosen"]["torch"] != "2.16.0"
