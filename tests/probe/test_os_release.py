"""Real os-release files of the distributions people run torch on → distro id and glibc.

Files: tests/fixtures/probe/os-release/<name> (source in the first line of each). In a replayed tree
there is no running libc, so glibc is the one the distribution ships (matrices/platforms.toml).
"""

from __future__ import annotations

import shutil

import pytest

from envcheck.probe import probe_machine
from envcheck.runner import Replay
from tests.probe.replay import FIXTURES

CASES = [
    ("centos7", "centos7", "CentOS Linux 7 (Core)", "2.17"),
    ("ubuntu20.04", "ubuntu20.04", "Ubuntu 20.04.6 LTS", "2.31"),
    ("ubuntu22.04", "ubuntu22.04", "Ubuntu 22.04.2 LTS", "2.35"),
    ("ubuntu24.04", "ubuntu24.04", "Ubuntu 24.04.3 LTS", "2.39"),
    ("debian12", "debian12", "Debian GNU/Linux 12 (bookworm)", "2.36"),
    ("rhel9", "rhel9", "Red Hat Enterprise Linux 9.6 (Plow)", "2.34"),
    ("al2023", "al2023", "Amazon Linux 2023", "2.34"),
]


@pytest.mark.parametrize("name, distro, pretty, glibc", CASES)
def test_distro_and_glibc(name, distro, pretty, glibc, tmp_path, probe_matrix):
    (tmp_path / "etc").mkdir()
    shutil.copy(FIXTURES / "os-release" / name, tmp_path / "etc" / "os-release")
    m = probe_machine(probe_matrix, root=tmp_path, runner=Replay(), docker=False, nvml=False)
    assert m.distro == distro
    assert m.distro_name == pretty
    assert m.glibc == glibc
    assert m.how["glibc"].startswith("the glibc ")
    assert "matrices/platforms.toml" in m.how["glibc"]


def test_rhel_minor_version_matches_the_major_row(tmp_path, probe_matrix):
    (tmp_path / "etc").mkdir()
    shutil.copy(FIXTURES / "os-release" / "rhel9", tmp_path / "etc" / "os-release")
    m = probe_machine(probe_matrix, root=tmp_path, runner=Replay(), docker=False, nvml=False)
    assert m.how["distro"] == "/etc/os-release ID + major of VERSION_ID (matrices/platforms.toml)"


def test_usr_lib_os_release_is_the_fallback(tmp_path, probe_matrix):
    (tmp_path / "usr/lib").mkdir(parents=True)
    shutil.copy(FIXTURES / "os-release" / "ubuntu24.04", tmp_path / "usr/lib/os-release")
    m = probe_machine(probe_matrix, root=tmp_path, runner=Replay(), docker=False, nvml=False)
    assert m.distro == "ubuntu24.04" and m.how["distro"].startswith("/usr/lib/os-release")


def test_unknown_distro_is_stated(tmp_path, probe_matrix):
    (tmp_path / "etc").mkdir()
    # Alpine's os-release, verbatim from python-distro/distro:tests/resources/distros/alpine/etc/os-release@6caf0245 (musl)
    (tmp_path / "etc/os-release").write_text(
        'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.23.2\nPRETTY_NAME="Alpine Linux v3.23"\n'
        'HOME_URL="https://alpinelinux.org/"\n'
        'BUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"\n')
    m = probe_machine(probe_matrix, root=tmp_path, runner=Replay(), docker=False, nvml=False)
    assert m.distro is None and m.glibc is None
    assert "ID='alpine' VERSION_ID='3.23.2' matches no [[distro]] row" in m.unknown["distro"]
    assert "distribution unknown to matrices/platforms.toml" in m.unknown["glibc"]
