"""The matrix: it loads, validates, and its lookups answer what the sources say."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envcheck.errors import DataFileError, UnknownGpuError
from envcheck.matrix import default_matrix_dir, load_matrix
from envcheck.matrix.validate import validate


def test_shipped_matrix_validates_clean():
    problems = validate(default_matrix_dir())
    errors = [str(p) for p in problems if p.severity == "error"]
    assert errors == []


def test_every_row_carries_source_and_confidence(matrix):
    rows = (matrix.releases + matrix.builds + list(matrix.channels.values()) + matrix.toolkits
            + list(matrix.families.values()) + list(matrix.archs.values()) + matrix.gpus + matrix.rocm_wsl
            + list(matrix.steps.values()) + matrix.distros + matrix.conda_forge + matrix.base_images)
    assert len(rows) > 500
    for r in rows:
        assert r.source, r
        assert r.confidence in ("official", "copy", "community", "unverified"), r


def test_coverage_of_releases_and_cuda(matrix):
    versions = matrix.versions()
    assert "1.13.0" in versions and "2.14.1" in versions
    majors = {t.version.split(".")[0] for t in matrix.toolkits}
    assert {"11", "12", "13"} <= majors
    assert {f.major for f in matrix.families.values()} >= {11, 12, 13}
    # every release has at least a CPU build on Linux x86_64 and a Python list there
    for r in matrix.releases:
        assert r.python.get("linux-x86_64"), r.version
        assert any(b.backend == "cpu" and "linux-x86_64" in b.platforms for b in matrix.builds_for(r.version)), r.version


@pytest.mark.parametrize("tag, floor", [
    ("manylinux_2_28_x86_64", "2.28"),
    ("manylinux2014_aarch64", "2.17"),
    ("manylinux1_x86_64", "2.5"),
    ("manylinux_2_17_x86_64.manylinux2014_x86_64", "2.17"),
    ("manylinux_2_27_x86_64.manylinux_2_28_x86_64", "2.27"),
    ("linux_x86_64", None),
    ("win_amd64", None),
])
def test_glibc_floor_of_wheel_tags(matrix, tag, floor):
    assert matrix.glibc_floor(tag) == floor


@pytest.mark.parametrize("typed, name_part, arch", [
    ("7900xtx", "7900 XTX", "gfx1100"),
    ("RX 7900 XTX", "7900 XTX", "gfx1100"),
    ("rtx5090", "5090", "sm_120"),
    ("RTX 4090", "4090", "sm_89"),
    ("NVIDIA GeForce RTX 4090", "4090", "sm_89"),
    ("H100", "H100", "sm_90"),
    ("A100", "A100", "sm_80"),
    ("MI300X", "MI300X", "gfx942"),
    ("GTX 1080 Ti", "1080 Ti", "sm_61"),
    ("T4", "T4", "sm_75"),
    ("V100", "V100", "sm_70"),
    ("RX 5700 XT", "5700 XT", "gfx1010"),
    ("B200", "B200", "sm_100"),
])
def test_gpu_names_people_type(matrix, typed, name_part, arch):
    g = matrix.find_gpu(typed)
    assert name_part in g.name
    assert g.arch == arch


def test_jetson_orin_is_ampere_tegra(matrix):
    assert matrix.find_gpu("jetson orin").arch == "sm_87"


def test_unknown_gpu_offers_close_matches(matrix):
    with pytest.raises(UnknownGpuError) as err:
        matrix.find_gpu("rtx 4095")
    assert any("4090" in s for s in err.value.suggestions)
    assert err.value.exit_code == 2


def test_distro_glibc(matrix):
    assert matrix.find_distro("centos7").glibc == "2.17"
    assert matrix.find_distro("Ubuntu 22.04").glibc == "2.35"
    assert matrix.find_distro("debian12").glibc == "2.36"


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    return d


def test_malformed_file_names_file_and_key(tmp_path):
    d = _copy(tmp_path)
    p = d / "cuda.toml"
    p.write_text(p.read_text().replace('driver_linux = "570.26"', 'driver_linux = 570', 1))
    with pytest.raises(DataFileError) as err:
        load_matrix(d)
    assert err.value.path.endswith("cuda.toml")
    assert "driver_linux" in err.value.key
    assert err.value.exit_code == 2


@pytest.mark.parametrize("written", ["2026-02-30", "2026-10-28T00:00:00Z", "28.10.2026", ""])
def test_a_release_date_is_a_day_of_the_calendar(tmp_path, written):
    """Freshness compares the data's days as text (no datetime at start-up), so the loader holds
    each to a real day: a date that is none is the file's error, not a date skipped unseen."""
    d = _copy(tmp_path)
    p = d / "torch-releases.toml"
    text = p.read_text()
    assert 'date = "2026-10-28"' in text
    p.write_text(text.replace('date = "2026-10-28"', f'date = "{written}"', 1))
    with pytest.raises(DataFileError) as err:
        load_matrix(d)
    assert err.value.key.endswith(".date") and "a date like '2025-06-04'" in str(err.value)


def test_an_index_check_time_is_a_day_of_the_calendar(tmp_path):
    from envcheck.matrix.load import load_text

    row = ('[[update]]\nchannel = "pypi"\npackage = "torch"\nindex_url = "https://example.invalid/simple/"\n'
           'pages = ["https://example.invalid/simple/torch/"]\nchecked = "{checked}"\n'
           'changed = "2026-11-30T10:00:00Z"\nfiles = 0\nsource = "https://example.invalid/simple/torch/"\n'
           'confidence = "official"\n')
    name = tmp_path / "generated-index-pypi-torch.toml"
    assert load_text(name, row.format(checked="2026-11-30T10:00:00Z"))["update"]
    with pytest.raises(DataFileError, match="a UTC time like"):
        load_text(name, row.format(checked="2026-11-31T10:00:00Z"))


def test_invalid_toml_is_reported_with_position(tmp_path):
    d = _copy(tmp_path)
    (d / "platforms.toml").write_text("[[distro]\nid = ")
    probs = validate(d)
    assert probs and probs[0].file == "platforms.toml"
    assert "invalid TOML" in probs[0].message and "line" in probs[0].message


def test_bad_source_form_is_rejected(tmp_path):
    d = _copy(tmp_path)
    p = d / "docker.toml"
    p.write_text(p.read_text().replace('source = "derived:', 'source = "somewhere:', 1))
    probs = validate(d)
    assert any("source" in pr.key and "expected a source: an https:// URL" in pr.message and "somewhere:" in pr.message
               for pr in probs)


def test_cross_check_catches_a_kernel_the_toolkit_cannot_build(tmp_path):
    d = _copy(tmp_path)
    p = d / "torch-builds.toml"
    text = p.read_text()
    # give a CUDA 11.8 build an sm_120 cubin: CUDA 11.8 cannot target Blackwell
    i = text.index('cuda = "11.8.0"')
    j = text.index("sm = [", i)
    text = text[:j] + 'sm = ["sm_120", ' + text[j + len("sm = ["):]
    p.write_text(text)
    probs = [str(x) for x in validate(d)]
    assert any("cannot target sm_120" in x for x in probs)


def test_cross_check_catches_build_of_unknown_release(tmp_path):
    d = _copy(tmp_path)
    p = d / "torch-builds.toml"
    text = p.read_text()
    i = text.index('torch = ["2.7.0"')
    p.write_text(text[:i] + 'torch = ["2.7.9"' + text[i + len('torch = ["2.7.0"'):])
    assert any("2.7.9 has no [[release]]" in str(x) for x in validate(d))


def test_validate_cli_exit_codes(cli, tmp_path):
    assert cli(["matrix", "validate"]).code == 0
    d = _copy(tmp_path)
    (d / "gpus-amd.toml").write_text("[[gpu]]\nname = 1\n")
    r = cli(["matrix", "validate", "--matrices", str(d), "--json"])
    assert r.code == 1
    assert r.json()["problems"][0]["file"] == "gpus-amd.toml"


def test_matrix_show_filters(cli):
    r = cli(["matrix", "show", "--torch", "2.7.0", "--variant", "cu128", "--json"])
    assert r.code == 0
    rows = r.json()["builds"]
    assert rows and all(x["torch"] == "2.7.0" and x["variant"] == "cu128" for x in rows)
    linux = [x for x in rows if "linux-x86_64" in x["platforms"]][0]
    assert "sm_120" in linux["sm"] and linux["cuda"].startswith("12.8")


def test_gpus_command(cli):
    r = cli(["gpus", "--json", "gfx1100"])
    assert r.code == 0
    names = [g["name"] for g in r.json()["gpus"]]
    assert any("7900 XTX" in n for n in names)
    assert all(g["arch"] == "gfx1100" for g in r.json()["gpus"])
    assert cli(["gpus", "--json", "no-such-gpu-zzz"]).code == 1
