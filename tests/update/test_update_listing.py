"""`envcheck matrix update` against a real HTTP server serving the real download.pytorch.org listing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envcheck.errors import DataFileError
from envcheck.matrix import load_matrix
from envcheck.matrix.load import load_file
from envcheck.update.pages import parse_html
from tests.update.index_support import snapshot

PAGE = "/whl/torch/"


def _update(cli, server, mx: Path, *extra: str):
    return cli(["matrix", "update", "--index", f"{server.url}/whl/", "--channel", "pytorch",
                "--packages", "torch", "--matrices", str(mx), "--retries", "0", *extra])


@pytest.fixture
def updated(cli, server, listing, mx):
    server.html(PAGE, listing)
    r = _update(cli, server, mx)
    assert r.code == 0, r.err
    return mx, r


def _files(mx: Path, version: str):
    """{(variant, platform, python, glibc)} of every torch file of release ``version``."""
    data = load_matrix(mx).index_data()
    out = set()
    for f in data.files("pytorch", "torch"):
        if f.info.release == version:
            for p in f.info.platforms:
                for py in f.info.pythons:
                    out.add((f.info.variant, p, py, f.glibc))
    return out


def test_parse_listing_counts(listing):
    links = parse_html(listing.decode(), "https://download.pytorch.org/whl/torch/")
    assert len(links) == 2442
    assert all(re.fullmatch(r"[0-9a-f]{64}", ln.sha256) for ln in links)
    first = links[0]
    assert first.filename == "torch-2.0.0+cpu.cxx11.abi-cp310-cp310-linux_x86_64.whl"
    assert first.url == "https://download.pytorch.org/whl/cpu-cxx11-abi/torch-2.0.0%2Bcpu.cxx11.abi-cp310-cp310-linux_x86_64.whl"
    assert first.sha256 == "c334eeb746b1ca896ba6be84d3a9796b1f9b74efa1a5a818662c9b9d59f97550"


#: wheel files of torch >= 1.8.0 in the 2025-07 listing (1206 from 1.13.0 on, before 1.8–1.12 were recorded)
UP_FILES = 1706


def test_first_update_records_the_listing(server, updated):
    mx, r = updated
    assert "first record of torch" in r.out
    path = mx / "generated-index-pytorch-torch.toml"
    assert path.exists()
    text = path.read_text()
    # releases older than the oldest on record (1.8.0) and the dev build on cpu_pypi_pkg are left out
    assert "torch-1.7.1" not in text and "torch-1.12.1" in text and "dev2024" not in text
    up = load_matrix(mx).index_data().updates[("pytorch", "torch")]
    assert up.since == "1.8.0" and up.files == UP_FILES
    assert up.pages == (f"{server.url}/whl/torch/",)
    assert up.index_url == f"{server.url}/whl/"


def test_2_7_1_builds_and_their_pythons(updated):
    mx, _ = updated
    files = _files(mx, "2.7.1")
    variants = {v for v, *_ in files}
    assert variants == {"", "cpu", "cpu.cxx11.abi", "cu118", "cu126", "cu128", "rocm6.2.4", "rocm6.3", "xpu"}
    gil = {"3.9", "3.10", "3.11", "3.12", "3.13"}
    for variant, platform in [("cu128", "linux-x86_64"), ("cu128", "linux-aarch64"), ("cu128", "windows-x86_64"),
                              ("cu126", "linux-x86_64"), ("rocm6.3", "linux-x86_64"), ("xpu", "windows-x86_64")]:
        pys = {py for v, p, py, _ in files if v == variant and p == platform}
        assert pys == gil | {"3.13t"}, (variant, platform)
    # ROCm and cu126 have no aarch64 build in 2.7.1; macOS files carry no label
    assert not {(v, p) for v, p, *_ in files if p == "linux-aarch64"} - {("cpu", "linux-aarch64"), ("cu128", "linux-aarch64")}
    assert {p for v, p, *_ in files if v == ""} == {"macos-arm64"}


def test_free_threaded_from_2_6(updated):
    mx, _ = updated
    data = load_matrix(mx).index_data()
    with_t = {f.info.release for f in data.files("pytorch", "torch") if any(p.endswith("t") for p in f.info.pythons)}
    assert with_t == {"2.6.0", "2.7.0", "2.7.1"}


def test_move_to_manylinux_2_28(updated):
    mx, _ = updated

    def floors(version, variant, platform="linux-x86_64"):
        return {g for v, p, _, g in _files(mx, version) if v == variant and p == platform}

    assert floors("2.5.1", "cu124") == {None}            # plain linux_x86_64 tag: no floor stated
    assert floors("2.6.0", "cu124") == {None}
    assert floors("2.6.0", "cu126") == {"2.28"}          # cu126 moved first, at 2.6
    assert floors("2.6.0", "cpu", "linux-aarch64") == {"2.28"}
    for variant in ("cpu", "cu118", "cu126", "cu128", "rocm6.3"):
        assert floors("2.7.0", variant) == {"2.28"}, variant   # every manylinux build at 2.7
    assert floors("2.0.1", "", "linux-aarch64") == {"2.17"}    # manylinux2014 alias (platforms.toml)


def test_sha256_and_subindex_come_from_the_listing(updated):
    mx, _ = updated
    data = load_matrix(mx).index_data()
    name = "torch-2.7.1+cu126-cp311-cp311-manylinux_2_28_x86_64.whl"
    got = {(f.subindex, f.sha256) for f in data.files("pytorch", "torch") if f.info.filename == name}
    assert got == {("cu126", "e1a8465165708c2e2e90786ade8a3e1b1d01eca1f022792cd397caad9d8c21bc"),
                   ("cu126_full", "3df1e185e464a5cbdc99adc373ebe7422c7a6f00e69d0ac99e5df92cd6d2f7e4")}


def test_second_run_changes_only_the_checked_time(cli, server, updated):
    mx, _ = updated
    before = (mx / "generated-index-pytorch-torch.toml").read_text()
    r = _update(cli, server, mx)
    assert r.code == 0 and "no change" in r.out
    after = (mx / "generated-index-pytorch-torch.toml").read_text()
    strip = lambda t: re.sub(r'checked = "[^"]+"', "", t)  # noqa: E731
    assert strip(before) == strip(after)
    changed = re.search(r'changed = "([^"]+)"', before).group(1)
    assert f'changed = "{changed}"' in after


def test_changes_are_reported(cli, server, listing, updated):
    mx, _ = updated
    text = listing.decode()
    gone = "torch-2.7.1+xpu-cp39-cp39-win_amd64.whl"
    text = "\n".join(line for line in text.splitlines() if f">{gone}<" not in line)
    h = "0" * 64
    new = (f'<a href="/whl/cu129/torch-2.8.0%2Bcu129-cp312-cp312-manylinux_2_28_x86_64.whl#sha256={h}">x</a>'
           f'<a href="/whl/cu129/torch-2.7.1%2Bcu129-cp312-cp312-manylinux_2_28_x86_64.whl#sha256={h}">x</a>'
           "\n  </body>")
    text = text.replace("\n  </body>", new, 1)
    old_sha = "f8c3bee261b0c8e090f6347490dc6ee2aebfd661eb0f3f6aeae06d992d8ed56f"
    text = text.replace(old_sha, "1" * 64)
    server.html(PAGE, text.encode())
    r = _update(cli, server, mx, "--json")
    assert r.code == 0, r.err
    pkg = r.json()["packages"][0]
    assert pkg["new_releases"] == {"2.8.0": ["cu129"]}
    assert pkg["new_variants"] == ["2.7.1+cu129"]
    assert pkg["gone"] == [gone]
    assert pkg["rehashed"] == ["torch-2.7.1-cp310-none-macosx_11_0_arm64.whl"]
    assert pkg["written"] is True
    r = _update(cli, server, mx)  # the same page again: text output says nothing changed
    assert "no change" in r.out


def test_text_output_names_the_changes(cli, server, listing, updated):
    mx, _ = updated
    text = listing.decode().replace(">torch-2.7.1+xpu-cp39-cp39-win_amd64.whl<", ">x<")
    text = text.replace("/whl/xpu/torch-2.7.1%2Bxpu-cp39-cp39-win_amd64.whl", "/whl/xpu/torch-2.7.2%2Bxpu-cp39-cp39-win_amd64.whl")
    server.html(PAGE, text.encode())
    r = _update(cli, server, mx)
    assert "new release 2.7.2: xpu" in r.out
    assert "files gone: torch-2.7.1+xpu-cp39-cp39-win_amd64.whl" in r.out


def test_dry_run_writes_nothing(cli, server, listing, mx):
    server.html(PAGE, listing)
    before = snapshot(mx)
    r = _update(cli, server, mx, "--dry-run")
    assert r.code == 0 and "would write" in r.out
    assert snapshot(mx) == before


def test_generated_file_validates(cli, updated):
    mx, _ = updated
    r = cli(["matrix", "validate", "--matrices", str(mx), "--json"])
    mine = [p for p in r.json()["problems"] if p["file"].startswith("generated-")]
    assert mine == []
    # and a hand edit that breaks the schema is caught, naming the file and key
    path = mx / "generated-index-pytorch-torch.toml"
    path.write_text(path.read_text().replace(".whl#sha256=", ".whl#md5=", 1))
    with pytest.raises(DataFileError) as err:
        load_file(path, strict=True)
    assert (Path(err.value.path).name, err.value.key) == ("generated-index-pytorch-torch.toml", "wheels[0].files[0]")


def test_hand_sourced_files_are_untouched(cli, server, listing, mx):
    before = {k: v for k, v in snapshot(mx).items()}
    server.html(PAGE, listing)
    assert _update(cli, server, mx).code == 0
    after = snapshot(mx)
    assert set(after) - set(before) == {"generated-index-pytorch-torch.toml"}
    assert all(after[k] == v for k, v in before.items())



def test_per_variant_pages_replace_only_their_rows(cli, server, listing, updated):
    """--variants reads <index>/<variant>/<pkg>/ and keeps the rows of the other sub-indexes."""
    mx, _ = updated
    lines = listing.decode().splitlines()
    cu128 = [ln for ln in lines if 'href="/whl/cu128/' in ln and "torch-2.7.1%2B" in ln]
    assert len(cu128) == 18
    page = "<!DOCTYPE html><html><body>\n" + "\n".join(cu128[1:]) + "\n</body></html>\n"  # one file fewer
    server.html("/whl/cu128/torch/", page.encode())
    r = _update(cli, server, mx, "--variants", "cu128", "--json")
    assert r.code == 0, r.err
    pkg = r.json()["packages"][0]
    assert pkg["pages"] == [f"{server.url}/whl/cu128/torch/"]
    gone = re.search(r">([^<]+)</a>", cu128[0]).group(1)
    # the page lists 17 of the 2.7.1 files and none of the 18 of 2.7.0: those 19 are gone
    assert len(pkg["gone"]) == 19 and gone in pkg["gone"]
    assert {n for n in pkg["gone"] if n != gone} == {n for n in pkg["gone"] if n.startswith("torch-2.7.0+cu128-")}
    assert pkg["files"] == 1706 - 19 and pkg["new_releases"] == {}
    data = load_matrix(mx).index_data()
    assert {f.info.release for f in data.files("pytorch", "torch") if f.subindex == "cu128"} == {"2.7.1"}
    assert any(f.subindex == "cu126" for f in data.files("pytorch", "torch"))
