"""`envcheck matrix status`: freshness of the index data and what torch-builds*.toml does not cover."""

from __future__ import annotations

from pathlib import Path

import pytest

PAGE = "/whl/torch/"


def _update(cli, server, mx: Path):
    r = cli(["matrix", "update", "--index", f"{server.url}/whl/", "--channel", "pytorch", "--packages", "torch",
             "--matrices", str(mx), "--retries", "0"])
    assert r.code == 0, r.err
    return r


@pytest.fixture
def status(cli, server, listing, mx):
    server.html(PAGE, listing)
    _update(cli, server, mx)

    def run(*extra):
        return cli(["matrix", "status", "--matrices", str(mx), *extra])

    return run


def _gaps(st, **want):
    return [g for g in st["uncovered"] if all(g[k] == v for k, v in want.items())]


def test_no_data_yet(cli, mx):
    """newcomer6 #7: exit 1 means "judged and failed" (README's exit codes); with no data nothing
    was judged: 3, as `plan --hashes` without `matrix update` data, in text and --json."""
    r = cli(["matrix", "status", "--matrices", str(mx)])
    assert r.code == 3
    assert cli(["matrix", "status", "--matrices", str(mx), "--json"]).code == 3
    assert "run `envcheck matrix update`" in r.out


def test_freshness(status, server, matrix):
    r = status("--json")
    assert r.code == 0, r.err
    st = r.json()
    assert st["newest_on_record"] == matrix.releases[0].version
    (idx,) = st["indexes"]
    # torch >= 1.8.0 wheels in the listing
    assert (idx["channel"], idx["package"], idx["newest"], idx["files"]) == ("pytorch", "torch", "2.7.1", 1706)
    assert idx["index_url"] == f"{server.url}/whl/"
    assert idx["checked"] == idx["changed"] and idx["checked"].endswith("Z")
    assert st["unrecorded"] == []  # every release in the 2025-07 listing is in torch-releases.toml


def test_odd_variants_are_uncovered(status):
    st = status("--json").json()
    cxx11 = _gaps(st, variant="cpu.cxx11.abi", code="no-build")
    assert {g["torch"] for g in cxx11} == {"2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.1.2", "2.2.0", "2.2.1", "2.2.2",
                                          "2.3.0", "2.3.1", "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1"}
    assert {g["platform"] for g in cxx11} == {"linux-x86_64"}
    assert {g["torch"] for g in _gaps(st, variant="cu117.with.pypi.cudnn")} == {"1.13.0", "1.13.1", "2.0.0", "2.0.1"}
    # the well-known builds are covered
    assert not _gaps(st, torch="2.7.1", variant="cu128", code="no-build")
    assert not _gaps(st, torch="2.7.1", variant="rocm6.3")


def test_text_report(status):
    r = status()
    assert r.code == 0
    assert "last update" in r.out
    assert "cpu.cxx11.abi on linux-x86_64 [pytorch]" in r.out and "no [[build]] row" in r.out


def test_new_release_is_unrecorded(cli, server, listing, mx):
    extra = ('<a href="/whl/cu130/torch-9.9.0%2Bcu130-cp313-cp313-manylinux_2_28_x86_64.whl#sha256='
             + "0" * 64 + '">x</a>\n  </body>')
    server.html(PAGE, listing.decode().replace("\n  </body>", extra, 1).encode())
    _update(cli, server, mx)
    st = cli(["matrix", "status", "--matrices", str(mx), "--json"]).json()
    assert st["unrecorded"] == ["9.9.0"]
    (g,) = _gaps(st, torch="9.9.0")
    assert (g["variant"], g["platform"], g["code"]) == ("cu130", "linux-x86_64", "release")


def test_rows_without_kernels_or_cudnn(cli, server, listing, mx):
    """A [[build]] row that exists but lacks the facts plan decides from is still a gap."""
    (mx / "torch-builds-zz-test.toml").write_text('''
[[build]]
torch = ["2.7.1"]
variant = "cpu.cxx11.abi"
channel = "pytorch"
platforms = ["linux-x86_64"]
wheel_tag = "linux_x86_64"
source = "https://download.pytorch.org/whl/torch/"
confidence = "official"

[[build]]
torch = ["2.7.1"]
variant = "cu117.with.pypi.cudnn"
channel = "pytorch"
platforms = ["linux-x86_64"]
wheel_tag = "linux_x86_64"
python = ["3.9", "3.10", "3.11", "3.12", "3.13"]
cuda = "11.7.0"
source = "https://download.pytorch.org/whl/torch/"
confidence = "unverified"
''')
    extra = "".join(f'<a href="/whl/cu117_pypi_cudnn/torch-2.7.1%2Bcu117.with.pypi.cudnn-cp3{m}-cp3{m}-linux_x86_64.whl'
                    f'#sha256={"0" * 64}">x</a>\n' for m in (9, 10, 11, 12, 13))
    server.html(PAGE, listing.decode().replace("\n  </body>", extra + "  </body>", 1).encode())
    _update(cli, server, mx)
    st = cli(["matrix", "status", "--matrices", str(mx), "--json"]).json()
    assert not _gaps(st, torch="2.7.1", variant="cpu.cxx11.abi")  # the new row covers it
    assert {g["code"] for g in _gaps(st, torch="2.7.1", variant="cu117.with.pypi.cudnn")} == {"no-kernels", "no-cudnn"}


def test_row_listing_a_python_the_index_lacks(status, mx):
    # make a row claim a 3.13t wheel the listing does not have (this gap was once real: 2.6.0+xpu)
    p = mx / "torch-builds.toml"
    p.write_text(p.read_text().replace('python = ["3.9", "3.10", "3.11", "3.12", "3.13"]\n',
                                       'python = ["3.9", "3.10", "3.11", "3.12", "3.13", "3.13t"]\n', 1))
    st = status("--json").json()
    (g,) = _gaps(st, torch="2.6.0", variant="xpu", code="not-on-index")
    assert g["pythons"] == ["3.13t"]
