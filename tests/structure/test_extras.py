"""Optional dependencies: plan/probe/verify/explain run with packaging (+tomli, tomli-w, rich) only;
docker, requests and junitparser are extras (NVML is read without a package), and a command that needs a missing one
says in one line which extra to install (exit 2, no traceback)."""

from __future__ import annotations

import subprocess
import sys

from pathlib import Path

import pytest

BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {blocked!r}:
            raise ImportError('blocked for this test: ' + name)
sys.meta_path.insert(0, Block())
from envcheck.cli import main
sys.exit(main({argv!r}))
"""


def run_without(blocked, argv, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "ENVCHECK_DATA_DIR": str(tmp_path / "data"),
           "ENVCHECK_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", BLOCK.format(blocked=set(blocked), argv=list(argv))],
                          capture_output=True, text=True, env=env, timeout=120)


ROOT = str(Path(__file__).resolve().parents[2])
OPTIONAL = {"docker", "requests", "urllib3", "junitparser", "pynvml"}


@pytest.mark.subprocess
@pytest.mark.parametrize("argv", [
    ["plan", "--gpu", "RTX 4090", "--json"],
    ["explain", "--no-probe", "CUDA error: no kernel image is available for execution on the device"],
    ["gpus", "4090", "--json"],
])
def test_core_commands_need_no_extra(argv, tmp_path):
    r = run_without(OPTIONAL, argv, tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr and "extra" not in r.stderr


@pytest.mark.subprocess
@pytest.mark.parametrize("blocked, argv, package", [
    ({"docker"}, ["docker", "verify", "some/image"], "docker"),
    ({"requests"}, ["matrix", "update", "--dry-run"], "requests"),
    ({"argcomplete"}, ["completion", "bash"], "argcomplete"),
])
def test_a_missing_extra_is_named(blocked, argv, package, tmp_path):
    r = run_without(blocked, argv, tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.strip().splitlines() == [
        r.stderr.strip().splitlines()[0]]  # one line
    # newcomer H2: PyPI's `envcheck` is an unrelated project (github.com/dyspop/envcheck, 0.0.9), so
    # `pip install 'envcheck[docker]'` in a fresh environment installs that; name what the extra pulls
    assert f"pip install '{package}>=" in r.stderr and "Traceback" not in r.stderr
    assert "'envcheck[" not in r.stderr
    # and every extra from where this envcheck was installed (this checkout, editable)
    assert f"{ROOT}[all]'" in r.stderr


def test_extras_are_declared():
    from pathlib import Path

    from envcheck.matrix.load import tomllib

    doc = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    deps = " ".join(doc["project"]["dependencies"])
    for name in ("docker", "requests", "junitparser", "nvidia-ml-py"):
        assert name not in deps
    extras = doc["project"]["optional-dependencies"]
    assert {"docker", "update", "junit", "all"} <= set(extras)


@pytest.mark.parametrize("direct_url, want", [
    # PEP 610 records: `pip install .` from a checkout, `pip install git+…`, a downloaded archive
    ({"url": "file:///src/envcheck", "dir_info": {}}, "`git -C"),
    ({"url": "https://example.org/x/envcheck.git", "vcs_info": {"vcs": "git", "commit_id": "abc"}},
     "`pip install --upgrade 'envcheck @ git+https://example.org/x/envcheck.git'`"),
    (None, "the 'envcheck' on PyPI is an unrelated project"),
])
def test_update_hint_never_names_the_pypi_project(direct_url, want, monkeypatch, tmp_path):
    from envcheck import install_hint

    if direct_url and direct_url["url"].startswith("file://"):
        (tmp_path / ".git").mkdir()
        direct_url = {**direct_url, "url": tmp_path.as_uri()}
        want = f"`git -C '{tmp_path}' pull` then `pip install --upgrade '{tmp_path}'`"
    monkeypatch.setattr(install_hint, "_direct_url", lambda: direct_url)
    hint = install_hint.update_hint()
    assert want in hint and "install -U envcheck" not in hint


def test_extra_requirements_expand_all():
    from envcheck.install_hint import extra_requirements

    assert extra_requirements("docker") == ["docker>=6.1"]
    assert sorted(extra_requirements("all")) == ["argcomplete>=3.1", "docker>=6.1", "junitparser>=3.1", "requests>=2.28"]


def test_readme_never_installs_the_pypi_envcheck():
    """README's Dependencies block: `pip install 'envcheck[X]'` fetches PyPI's unrelated `envcheck`
    (newcomer H2); every extra the code names is installable from the checkout as the README says."""
    from envcheck.errors import EXTRAS

    readme = (Path(ROOT) / "README.md").read_text()
    assert "envcheck[" not in readme.replace("'envcheck[…]'", "")
    assert "pip install -U envcheck" not in readme
    for extra in [*EXTRAS, "all"]:
        assert f"pip install '.[{extra}]'" in readme, extra
