"""A plan is a recipe: ordered, typed steps from data, the same in every output, and a script that
passes bash -n and shellcheck and stops at the first failing step.

The 7900 XTX on WSL case is issue #12's headline: the plan never said to install the ROCm runtime
inside WSL (deleting torch's libhsa then leaves none), assumed a pip on a stock Ubuntu (PEP 668),
and dropped the post-install steps from some outputs.
"""

from __future__ import annotations

import json
from pathlib import Path
import re
import shutil
import subprocess

import pytest

from envcheck.matrix.load import tomllib
from envcheck.render import FORMATS, NETWORK_FORMATS, render
from envcheck.resolve import Request
from envcheck.resolve.plan import make_plan
from tests.conftest import plan_for

MACHINES = {
    "7900xtx-wsl": dict(gpus=["7900xtx"], wsl=True),
    "7900xtx-wsl-rocm6.3": dict(gpus=["7900xtx"], wsl=True, driver="25.3.1"),
    "rtx4090-linux": dict(gpus=["RTX 4090"], driver="570.124.06", python="3.12"),
    "rtx4090-wsl": dict(gpus=["RTX 4090"], wsl=True),
    "rtx4090-windows": dict(gpus=["RTX 4090"], os="windows"),
    "mi300x": dict(gpus=["MI300X"]),
    "arc": dict(gpus=["Arc A770"]),
    "cpu-linux": dict(os="linux", python="3.11"),
    "macos": dict(os="macos", arch="aarch64"),
}
TEXT_FORMATS = [f for f in FORMATS if f != "lock"]


def _plan(matrix, flags, request=None):
    p = make_plan(plan_for(matrix, request, **dict(flags)), matrix)
    assert p is not None, flags
    return p


@pytest.mark.parametrize("name", MACHINES)
def test_every_format_carries_every_step(matrix, name):
    p = _plan(matrix, MACHINES[name])
    kinds = [s.kind for s in p.recipe]
    assert kinds[-1] == "verify" and "install" in kinds and "python" in kinds, kinds
    from envcheck.render.files import dockerfile_plan

    formats = [f for f in FORMATS if not (f == "docker" and dockerfile_plan(p).base_image is None)  # no XPU base image
               and f not in NETWORK_FORMATS]  # pylock reads the index: tests/integrations/test_pylock.py
    files = render(p, formats)
    for fmt in (f for f in TEXT_FORMATS if f in formats):
        text = next(t for n, t in files.items() if n == FORMATS[fmt][0] or (fmt == "script" and n.startswith("install.")))
        recipe = dockerfile_plan(p).recipe if fmt == "docker" else p.recipe  # a Dockerfile: its Linux container's
        missing = [s.marker for s in recipe if s.marker not in text]
        assert not missing, (fmt, missing)
    lock = tomllib.loads(files["envcheck.lock.toml"])
    assert [(s["kind"], s["key"]) for s in lock["step"]] == [(s.kind, s.key) for s in p.recipe]
    from envcheck.cli.plan import plan_json

    doc = json.loads(json.dumps(plan_json(p.resolution, p, [])))
    assert [s["key"] for s in doc["chosen"]["steps"]] == [s.key for s in p.recipe]


def test_steps_are_typed_and_ordered(matrix):
    order = ["host", "system", "python", "install", "post-install", "verify"]
    for flags in MACHINES.values():
        p = _plan(matrix, flags)
        idx = [order.index(s.kind) for s in p.recipe]
        assert idx == sorted(idx)
        for s in p.recipe:
            assert s.runs_in in ("windows", "linux", "macos") and s.shell in ("bash", "powershell", "manual")
            assert s.source, s.key


def test_wsl_host_steps_run_on_windows_and_the_rest_in_the_guest(matrix):
    p = _plan(matrix, MACHINES["7900xtx-wsl"])
    by = {s.key: s for s in p.recipe}
    assert by["amd-adrenalin-wsl"].runs_in == "windows" and by["amd-adrenalin-wsl"].shell == "manual"
    assert by["rocdxg-runtime"].runs_in == "linux" and by["rocdxg-runtime"].root
    assert not by["venv"].root and not by["pip-install"].root


def test_the_floor_of_the_route_is_the_one_its_runtime_needs(matrix):
    """ROCm 7.2.1 on WSL runs through ROCDXG, which needs Adrenalin 26.2.2+ (the data's own note);
    the plan said 26.1.1 before."""
    p = _plan(matrix, MACHINES["7900xtx-wsl"])
    assert p.build.rocm == "7.2.1"
    assert p.driver["full"] == "26.2.2"
    adrenalin = next(s for s in p.recipe if s.key == "amd-adrenalin-wsl")
    assert "26.2.2" in adrenalin.title


def test_rocm6_wsl_plans_bound_numpy_and_use_the_legacy_runtime(matrix):
    p = make_plan(
        plan_for(matrix, Request(torch=Request.parse_torch("==2.4.0"), torch_text="2.4.0"),
                 gpus=["7900xtx"], wsl=True), matrix)
    assert p is not None and p.build.rocm == "6.3.4"
    keys = [s.key for s in p.recipe]
    assert "replace-bundled-libhsa" in keys
    assert "rocm-wsl-runtime" in keys and "rocdxg-runtime" not in keys
    runtime = next(s for s in p.recipe if s.key == "rocm-wsl-runtime")
    assert "amdgpu-install -y --usecase=wsl,rocm --no-dkms" in runtime.commands
    # AMD: numpy 2 is incompatible with its 6.x wheels (matrices/numpy.toml): the install itself
    # bounds it, instead of a later step that downgrades what pip chose
    assert "'numpy<2'" in next(s for s in p.recipe if s.key == "pip-install").commands


def test_compile_adds_the_compiler_step(matrix):
    plain = _plan(matrix, MACHINES["cpu-linux"])
    comp = _plan(matrix, MACHINES["cpu-linux"], Request(compile=True))
    assert "build-tools" not in [s.key for s in plain.recipe]
    assert "build-tools" in [s.key for s in comp.recipe]


@pytest.mark.subprocess
def test_headline_format_all(cli, tmp_path):
    """Done-when of #12: every file carries the runtime, venv, libhsa, env var and verify steps."""
    out = tmp_path / "out"
    r = cli(["plan", "--gpu", "7900xtx", "--wsl", "--format", "all", "-o", str(out)])
    assert r.code == 0, r.err
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["requirements.txt", "environment.yml", "Dockerfile", "envcheck.lock.toml",
                            "pyproject.uv.toml", "install.sh", "pixi.toml", "variants.env"])  # (pylock: network)
    wanted = ["[system] rocdxg-runtime", "[python] venv", "[post-install] remove-bundled-libhsa",
              "[post-install] enable-dxg-detection", "[verify] verify"]
    for path in out.iterdir():
        text = path.read_text()
        if path.name == "envcheck.lock.toml":
            have = [f"[{s['kind']}] {s['key']}" for s in tomllib.loads(text)["step"]]
            assert all(w in have for w in wanted), have
        else:
            assert all(w in text for w in wanted), (path.name, [w for w in wanted if w not in text])
        assert "HSA_ENABLE_DXG_DETECTION" in text and "libhsa-runtime64.so" in text, path.name
    script = (out / "install.sh").read_text()
    positions = [script.index(f"# ---- {i}/") for i in range(1, 9)]
    assert positions == sorted(positions)
    order = re.findall(r"^# ---- \d+/\d+ \[([a-z-]+)\] (\S+)", script, re.M)
    assert [k for _, k in order][:2] == ["amd-adrenalin-wsl", "rocdxg-runtime"]
    assert [k for _, k in order][-1] == "verify"
    assert subprocess.run(["bash", "-n", str(out / "install.sh")]).returncode == 0


@pytest.mark.subprocess
@pytest.mark.parametrize("name", [n for n in MACHINES if n != "rtx4090-windows"])
def test_install_sh_passes_shellcheck(matrix, tmp_path, name):
    if not shutil.which("shellcheck"):
        pytest.skip("needs shellcheck (apt-get install shellcheck; .ci/run installs it)")
    script = tmp_path / "install.sh"
    script.write_text(render(_plan(matrix, MACHINES[name]), ["script"])["install.sh"])
    r = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]


def test_windows_plan_writes_install_ps1(matrix):
    files = render(_plan(matrix, MACHINES["rtx4090-windows"]), ["script"])
    assert list(files) == ["install.ps1"]
    text = files["install.ps1"]
    assert "$ErrorActionPreference = 'Stop'" in text and "vc-redist" in text and "py -3." in text


@pytest.mark.subprocess
def test_script_stops_at_the_first_failing_step(matrix, tmp_path):
    """A CUDA plan on a machine without nvidia-smi: step 1 (the driver) fails, nothing after it
    runs (no venv is made), the exit status is non-zero and the message names the driver page."""
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has nvidia-smi")
    script = tmp_path / "install.sh"
    p = _plan(matrix, MACHINES["rtx4090-linux"])
    script.write_text(render(p, ["script"])["install.sh"])
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert r.returncode == 1
    assert f"NVIDIA Linux driver >= {p.driver['full']}" in r.stderr and "nvidia.com" in r.stderr
    assert "[system]" not in r.stdout
    assert not (tmp_path / ".venv").exists()


# ---------------------------------------------------------------------------------------------
# AMD on every route (matrices/amd-routes.toml)


def test_rdna2_on_wsl_says_native_linux(cli):
    r = cli(["plan", "--gpu", "RX 6700 XT", "--wsl"])
    assert r.code == 1
    assert "use native Linux" in r.out and "ROCm/ROCm/issues/5030" in r.out
    assert "PYTORCH_ROCM_ARCH" not in r.out  # no source build under WSL: it would still have no runtime


def test_windows_7900xtx_names_amds_windows_route_with_its_source(cli):
    r = cli(["plan", "--os", "windows", "--gpu", "7900xtx", "--json"])
    alts = r.json()["alternatives"]
    win = [a for a in alts if a.startswith("native Windows")]
    assert win and "repo.radeon.com/rocm/windows/rocm-rel-7.2.1" in win[0]
    # the exact files, SDK wheels first (the copies of AMD's page agree on them; envcheck cannot pin the SDK yet)
    assert win[0].index("rocm_sdk_core") < win[0].index("torch 2.9.1+rocm7.2.1") and "(cp312)" in win[0]
    assert "rocm.docs.amd.com" in win[0] and "installrad/windows/install-pytorch.html" in win[0]


def test_windows_rdna2_names_amds_rdna2_index_and_native_linux(cli):
    """No wheel envcheck pins serves RDNA2 on Windows, but AMD's gfx103X-all index does (torch 2.9.1-2.11.0
    +rocm7.13.0, unslothai/unsloth#7277): the plan names it — it once said no AMD build existed."""
    r = cli(["plan", "--os", "windows", "--gpu", "RX 6700 XT", "--json"])
    assert r.code == 1 and r.json()["status"] == "no_official_build"
    win = [a for a in r.json()["alternatives"] if a.startswith("native Windows")]
    assert win and "https://repo.amd.com/rocm/whl/gfx103X-all/" in win[0] and "+rocm7.13.0" in win[0]
    assert "RX 6700 XT (gfx1031)" in win[0] and "--gpu gfx1031 --os linux" in win[0]
    assert not any("rocm-rel-7.2.1" in a for a in r.json()["alternatives"])  # AMD's 7.2.1 wheels: RDNA3/4 only


def test_strix_halo_plan_names_amds_index(cli):
    r = cli(["plan", "--gpu", "gfx1151", "--json"])
    alts = r.json()["alternatives"]
    assert any("https://repo.amd.com/rocm/whl-multi-arch/" in a and '"torch[device-gfx1151]"' in a for a in alts)


def test_hsa_override_is_named_with_its_risk_never_a_step(matrix):
    res = plan_for(matrix, gpus=["RX 6700 XT"])
    named = [a for a in res.alternatives if "HSA_OVERRIDE_GFX_VERSION=10.3.0" in a]
    assert named and "unsupported by AMD" in named[0] and "risk" in named[0]
    cpu = make_plan(plan_for(matrix, Request(backend="cpu"), gpus=["RX 6700 XT"]), matrix)
    assert cpu is not None and not any("HSA_OVERRIDE" in s.commands for s in cpu.recipe)
    # not for RDNA3, which ROCm supports
    assert not any("HSA_OVERRIDE" in a for a in plan_for(matrix, gpus=["7900xtx"]).alternatives)


def test_amd_native_linux_states_host_prerequisites(matrix):
    p = _plan(matrix, MACHINES["mi300x"])
    host = next(s for s in p.recipe if s.kind == "host")
    assert "render" in host.title and "video" in host.title and "amdgpu" in host.title
    assert "usermod -a -G render,video" in host.commands


# ---------------------------------------------------------------------------------------------
# mirrors, firewalls, offline


def test_mirror_says_what_it_did_not_rewrite(cli):
    wsl = cli(["plan", "--gpu", "7900xtx", "--wsl", "--mirror", "https://m.example/whl", "--json"]).json()["chosen"]
    assert wsl["index_url"].startswith("https://repo.radeon.com/")  # a pytorch-index mirror does not touch AMD's
    assert any("did not rewrite https://repo.radeon.com/" in m for m in wsl["mirror_not_rewritten"])
    assert any("PyPI" in m for m in wsl["mirror_not_rewritten"])  # AMD's find-links set takes its deps from PyPI
    amd = cli(["plan", "--gpu", "7900xtx", "--wsl", "--json",
               "--mirror", "https://repo.radeon.com/rocm/manylinux=https://m.example/amd"]).json()["chosen"]
    assert amd["index_url"] == "https://m.example/amd/rocm-rel-7.2.1/"
    assert not any("did not rewrite" in m for m in amd["mirror_not_rewritten"])
    cuda = cli(["plan", "--gpu", "RTX 4090", "--mirror", "https://m.example/whl", "--json"]).json()["chosen"]
    assert cuda["index_url"].startswith("https://m.example/whl/cu") and cuda["mirror_not_rewritten"] == []
    assert cuda["hosts"] == ["m.example"]


def test_hosts_a_firewall_must_allow(cli):
    assert cli(["plan", "--gpu", "RTX 4090", "--json"]).json()["chosen"]["hosts"] == ["download.pytorch.org"]
    wsl = cli(["plan", "--gpu", "7900xtx", "--wsl", "--json"]).json()["chosen"]["hosts"]
    assert wsl == ["repo.radeon.com", "pypi.org", "files.pythonhosted.org"]


def test_download_is_linux_only_for_now(cli, tmp_path):
    r = cli(["plan", "--os", "windows", "--backend", "cpu", "--download", str(tmp_path / "d")])
    assert r.code == 2 and "--download: only Linux targets" in r.err and "Traceback" not in r.err
    assert not (tmp_path / "d").exists()


def test_download_refuses_to_replace_files_before_downloading(cli, tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "install.sh").write_text("mine")
    r = cli(["plan", "--backend", "cpu", "--os", "linux", "--download", str(d)])
    assert r.code == 2 and (d / "install.sh").read_text() == "mine"
    assert not (d / "wheels").exists()


def test_packages_pins_a_subset_everywhere(matrix, cli, tmp_path):
    r = cli(["plan", "--backend", "cpu", "--os", "linux", "--torch", "2.13.0", "--packages", "torch",
             "--format", "pip,script", "-o", str(tmp_path)])
    assert r.code == 0, r.err
    for name in ("requirements.txt", "install.sh"):
        text = (tmp_path / name).read_text()
        assert "torch==2.13.0+cpu" in text and "torchvision==" not in text, name
    bad = cli(["plan", "--backend", "cpu", "--os", "linux", "--packages", "numpy"])
    assert bad.code == 2 and "--packages numpy" in bad.err


# ---------------------------------------------------------------------------------------------
# newcomer H1: the script is self-contained (its verify step's lock travels inside it)


@pytest.mark.parametrize("name", ["cpu-linux", "rtx4090-windows", "7900xtx-wsl"])
def test_script_carries_the_lock_its_verify_step_reads(matrix, name):
    """`--format script -o DIR` wrote install.sh / install.ps1 alone, whose last step ran
    `envcheck verify --lock envcheck.lock.toml` — a file not in the set: 'cannot read: No such file'
    after a successful install. The script now carries that lock (the same plan's) and verifies
    against it, in a folder of its own for that step."""
    p = _plan(matrix, MACHINES[name])
    (fname, text), = render(p, ["script"]).items()
    lock_start = text.index("schema = 1")
    body = text[lock_start - 400:]
    assert 'torch = "' in body and p.pins["torch"] in body
    verify_at = text.index("[verify] verify")
    assert verify_at < lock_start  # inside the verify step
    if fname == "install.sh":
        assert "<<'ENVCHECK_LOCK_EOF'" in text and '\nENVCHECK_LOCK_EOF\n' in text
        assert 'cd "$LOCKDIR"' in text[lock_start:]
    else:
        assert "$LOCK = @'" in text and "\r\n'@\r\n" in text and "Push-Location $LOCKDIR" in text
    # the carried text is the plan's lock, readable as one
    from envcheck.lock import lock_document  # noqa: F401  (the module that reads it)

    carried = text[text.index("# envcheck.lock.toml"):]
    carried = carried[:carried.index("\nENVCHECK_LOCK_EOF") if fname == "install.sh" else carried.index("\r\n'@")]
    doc = tomllib.loads(carried.replace("\r\n", "\n"))
    assert doc["request"] and [s["key"] for s in doc["step"]] == [s.key for s in p.recipe]


@pytest.mark.subprocess
def test_install_sh_written_alone_runs_to_a_passing_verify(tmp_path):
    """The newcomer's reproduction, for real: `plan --format script -o scr/` then `bash scr/install.sh`
    with envcheck on PATH ran every step and stopped at verify ('envcheck.lock.toml: cannot read').
    Here the environment is a real venv with torch 2.13.0+cpu (tests/verify's fixture way), so the
    steps before verify are 'already done' and verify runs for real against the carried lock — also
    when an unrelated envcheck.lock.toml sits beside the script."""
    import os
    import sys

    from tests.verify.conftest import given_or_new_torch_venv

    venv = given_or_new_torch_venv(tmp_path / "venv")
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    out = tmp_path / "scr"
    from tests.conftest import run_cli

    r = run_cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", py, "--os", "linux",
                 "--packages", "torch", "--format", "script", "-o", str(out)])
    assert r.code == 0, r.err
    assert sorted(x.name for x in out.iterdir()) == ["install.sh"]
    (out / "envcheck.lock.toml").write_text("schema = 1\n[request]\ntorch = '9.9.9'\n")  # not this plan's
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), "VENV": str(venv),
           "ENVCHECK_VERIFY_TIER": "quick", "ENVCHECK_NO_CONFIG": "1"}
    for k in ("PIP_FIND_LINKS", "PIP_CONFIG_FILE", "PIP_INDEX_URL"):
        if k in os.environ:
            env[k] = os.environ[k]
    res = subprocess.run(["bash", str(out / "install.sh")], capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "cannot read" not in res.stderr
    assert re.search(r"\block\b.*pass|PASS.*lock", res.stdout + res.stderr, re.I | re.S), res.stdout[-3000:]
    assert "==> done: every step passed" in res.stdout


# ---------------------------------------------------------------------------------------------
# newcomer H6 / M14 / M10: a Dockerfile is always a Linux container


@pytest.mark.subprocess
@pytest.mark.parametrize("name,backend", [("rtx4090-windows", "cuda"), ("macos", "cpu"),
                                          ("arc-windows", "cpu"), ("cpu-linux", "cpu")])
def test_dockerfile_is_a_linux_container_of_the_resolvers_answer(matrix, name, backend):
    """A Windows plan's Dockerfile carried the PowerShell verify step in a Linux image (`/bin/sh:
    Syntax error: "{" unexpected`); a macOS plan's installed PyPI's Linux (CUDA) wheel with no index.
    The Dockerfile now holds the plan re-resolved for a Linux container: NVIDIA on Windows through
    Docker Desktop's WSL 2 route (a CUDA build), every other GPU of Windows / macOS the CPU build, said
    in the file; its steps are Linux steps; $VENV is defined; the lock it verifies against is in it."""
    flags = dict(MACHINES.get(name) or dict(gpus=["Arc A770"], os="windows"))
    p = _plan(matrix, flags)
    text = render(p, ["docker"])["Dockerfile"]
    assert "-windows]" not in text and "Get-Command" not in text and "Scripts\\python.exe" not in text
    pip_line = next(ln for ln in text.splitlines() if ln.startswith("RUN python -m pip install"))
    assert "--index-url https://download.pytorch.org/whl/" in pip_line  # never PyPI's default (CUDA) Linux wheel
    variant = re.search(r"torch==[\d.]+\+(\w+)", pip_line).group(1)
    assert (variant == "cpu") == (backend == "cpu"), pip_line
    if p.machine.os != "linux":
        assert "A Dockerfile is a Linux container" in text and "matrices/docker.toml" in text
    assert re.search(r"^ENV VENV=/opt/venv ", text, re.M)
    assert "printf '%s\\n'" in text and "> /opt/envcheck/envcheck.lock.toml" in text
    verify = text[text.index("# [verify] verify"):]
    assert verify.startswith("# [verify] verify:") and "RUN cd /opt/envcheck" in verify
    r = subprocess.run(["sh", "-n", "-c", verify.split("RUN ", 1)[1].split("\nLABEL", 1)[0].replace("\\\n", "")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------------------------------------
# newcomer M7 / M8 / M9: the steps follow the distribution, check the version they name, and keep
# the run-time environment


MORE = {"v100-centos7": dict(gpus=["V100"], distro="centos7"), "cpu-rocky9": dict(os="linux", distro="rocky9"),
        "cpu-sles": dict(os="linux", distro="sles15sp6"), "cpu-ubuntu": dict(os="linux", distro="ubuntu24.04")}


@pytest.mark.subprocess
@pytest.mark.parametrize("name,key", [("v100-centos7", "python-venv-rpm"), ("cpu-rocky9", "python-venv-rpm"),
                                      ("cpu-sles", "python-distro-other"), ("cpu-ubuntu", "python-venv-apt")])
def test_system_step_follows_the_distribution(matrix, tmp_path, name, key):
    """`--distro centos7` got `apt-get install python3.12` behind a guard that stops with no usable
    hint. The system step now comes from the distribution's row: dnf or uv on the RHEL family (with
    the reason CentOS 7 has none), a checked manual step where no route is on record, apt only on
    Debian/Ubuntu (or no distribution given) — and a release without the Python package says uv."""
    p = _plan(matrix, MORE[name])
    system = [s for s in p.recipe if s.kind == "system"]
    assert [s.key for s in system] == [key], [s.key for s in system]
    script = render(p, ["script"])["install.sh"]
    assert ("apt-get" in script) == (key == "python-venv-apt")
    if key != "python-venv-apt":
        assert "uv" in system[0].check + system[0].commands + system[0].skip_if
    else:
        assert "install uv" in system[0].commands  # a Python this release does not package
    (tmp_path / "install.sh").write_text(script)
    assert subprocess.run(["bash", "-n", str(tmp_path / "install.sh")]).returncode == 0
    if shutil.which("shellcheck"):
        r = subprocess.run(["shellcheck", str(tmp_path / "install.sh")], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-2000:]


@pytest.mark.subprocess
@pytest.mark.parametrize("reported,passes", [("550.54.15", False), ("floor", True), ("999.12.01", True)])
def test_driver_step_compares_the_version_it_names(matrix, tmp_path, reported, passes):
    """The driver step's check was `nvidia-smi`: any driver passed it as done. nvidia-smi is replayed
    (the one fake: a GPU) answering --query-gpu=driver_version with a recorded version; the step
    passes only at or above the floor it names (560.28.03, the CUDA 12.6 GA driver, for this cu126 plan)."""
    p = _plan(matrix, MACHINES["rtx4090-linux"])
    floor = p.driver["full"]
    assert floor == "560.28.03", p.driver
    reported = floor if reported == "floor" else reported
    bindir = tmp_path / "bin"
    bindir.mkdir()
    smi = bindir / "nvidia-smi"
    smi.write_text(f'#!/bin/sh\ncase "$*" in *driver_version*) echo "{reported}";; *) echo "NVIDIA-SMI {reported}";; esac\n')
    smi.chmod(0o755)
    script = tmp_path / "install.sh"
    script.write_text(render(p, ["script"])["install.sh"])
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp_path), "VENV": str(tmp_path / "nope")})
    out = r.stdout + r.stderr
    if passes:
        assert "checked: v=" in r.stdout, out[-2000:]
    else:
        assert r.returncode == 1 and f"NVIDIA Linux driver >= {floor}" in r.stderr, out[-2000:]
        assert "[system]" not in r.stdout


def test_windows_driver_check_compares_the_version(matrix):
    p = _plan(matrix, MACHINES["rtx4090-windows"])
    text = render(p, ["script"])["install.ps1"]
    floor = p.driver.get("full") or p.driver["floor"]
    assert f"-lt [version]'{floor}'" in text and "--query-gpu=driver_version" in text


@pytest.mark.subprocess
def test_run_time_environment_is_kept_in_the_venv(matrix, tmp_path):
    """ROCm on WSL (ROCDXG) needs HSA_ENABLE_DXG_DETECTION=1 when torch runs; install.sh exported it
    for its own steps only, so the next shell had no GPU. The script now adds it to the venv's
    activate script (once, on re-runs too) and says so; the plan text says it too."""
    import sys

    p = _plan(matrix, MACHINES["7900xtx-wsl"])
    env = dict(p.env) or {k: v for s in p.recipe for k, v in s.env.items()}
    assert env == {"HSA_ENABLE_DXG_DETECTION": "1"}, env
    script = render(p, ["script"])["install.sh"]
    block = script[script.index("# the variables torch needs at run time"):script.index("printf '\\n==> done")]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    runner = tmp_path / "persist.sh"
    runner.write_text("set -euo pipefail\nnote() { printf 'note: %s\\n' \"$1\"; }\n" + block)
    for _ in range(2):  # idempotent
        r = subprocess.run(["bash", str(runner)], capture_output=True, text=True, env={"VENV": str(venv), "PATH": "/usr/bin:/bin"})
        assert r.returncode == 0, r.stderr
    assert (venv / "bin" / "activate").read_text().count("export HSA_ENABLE_DXG_DETECTION=1") == 1
    got = subprocess.run(["bash", "-c", f". {venv}/bin/activate && printf %s \"$HSA_ENABLE_DXG_DETECTION\""],
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert got.stdout == "1"
    from tests.conftest import run_cli

    res = run_cli(["plan", "--gpu", "7900xtx", "--wsl"])
    assert "run time: torch needs HSA_ENABLE_DXG_DETECTION=1" in res.out


@pytest.mark.parametrize("name,key", [("v100-centos7", "build-tools-rpm"), ("cpu-sles", "build-tools-other"),
                                      ("cpu-ubuntu", "build-tools")])
def test_compiler_step_follows_the_distribution(matrix, name, key):
    """The --compile step installed build-essential with apt-get on every distribution."""
    p = _plan(matrix, MORE[name], Request(compile=True))
    keys = [s.key for s in p.recipe if s.key.startswith("build-tools")]
    assert keys == [key], keys
    assert ("apt-get" in render(p, ["script"])["install.sh"]) == (name == "cpu-ubuntu")


def pasted_lines(text):
    """What a person pastes from printed steps: each ``$ `` line, and each ``( … )`` block whole (a
    step that would exit or move the shell runs in a subshell: newcomer5 #3)."""
    out, depth = [], 0
    for ln in text.splitlines():
        s = ln.strip()
        if s == "(" or (depth and s):
            depth += (s == "(") - (s == ")")
            out.append(s)
        elif s.startswith("$ "):
            out.append(s[2:])
    return out


@pytest.mark.subprocess
def test_the_printed_steps_paste_into_a_shell_as_they_are(cli, tmp_path):
    """newcomer3 #12: the terminal recipe made "$VENV" and then ran `python -m pip install …` with VENV
    never defined and no activation: pasted, it installed into whatever python was on PATH (on Debian
    the system one, which PEP 668 refuses). The printed form now starts with what install.sh and the
    Dockerfile set (VENV, its bin first on PATH); pasted into a fresh bash, the venv step makes the
    venv in ./.venv and the install step's `python` is that venv's (a real venv, a real bash)."""
    if shutil.which("python3.11") is None:
        pytest.skip("python3.11 not on PATH")
    r = cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--without", "torchvision"])
    assert r.code == 0, r.err
    text = r.out
    first = text[text.index("   0. first"):text.index("   1. [")]
    assert '$ VENV="${VENV:-$PWD/.venv}"' in first and '$ export PATH="$VENV/bin:$PATH"' in first
    from envcheck.render.recipe import BASH_PATH

    script = cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--format", "script"]).out
    assert BASH_PATH in script  # the same line as install.sh's header
    steps = re.split(r"\n +\d+\. \[", text[text.index("   0. first"):])
    by_kind = {s.split("]", 1)[0]: s for s in steps[1:]}
    pasted = pasted_lines(steps[0] + "\n" + by_kind["python"])
    install = [ln.strip()[2:] for ln in by_kind["install"].splitlines() if ln.strip().startswith("$ ")]
    assert len(install) == 1 and install[0].startswith("python -m pip install ")
    # the verify step reads envcheck.lock.toml, which only -o writes: the printed form says so
    assert "(it reads envcheck.lock.toml from the folder you run it in: -o DIR writes it there)" in by_kind["verify"]
    written = cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "-o", str(tmp_path / "o")])
    assert "-o DIR writes it there" not in written.out and "o/envcheck.lock.toml" in written.out
    # what the install step runs, minus the download: the python and pip it would use
    probe = install[0].split(" install ", 1)[0] + " --version && python -c 'import sys; print(sys.prefix)'"
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("VENV", "VIRTUAL_ENV")}
    p = subprocess.run(["bash", "-c", "\n".join(pasted + [probe])], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    venv = tmp_path / ".venv"
    assert (venv / "bin" / "python").exists()
    assert f"from {venv}/lib/python3.11/site-packages/pip" in p.stdout, p.stdout
    assert p.stdout.strip().splitlines()[-1] == str(venv)


@pytest.mark.subprocess
@pytest.mark.parametrize("fmt,name", [("pip", "requirements.txt"), ("uv", "pyproject.uv.toml"), ("variants", "variants.env")])
def test_the_commented_steps_paste_into_a_shell_as_they_are(cli, tmp_path, fmt, name):
    """newcomer3 #12 (rest, hnew3's left item): the recipe written as comments in every file had no
    step 0, so its `python -m pip install …` followed by hand installed outside the venv. The comment
    now carries the same step 0 as the printed form (render/recipe.FIRST_STEP, pasteable_env); its
    lines and the venv step, pasted into a fresh bash, make ./.venv and put its python first."""
    if shutil.which("python3.11") is None:
        pytest.skip("python3.11 not on PATH")
    out = tmp_path / "o"
    r = cli(["plan", "--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--format", fmt, "-o", str(out)])
    assert r.code == 0, r.err
    text = (out / name).read_text()
    block = text[text.index("#   0 first, in the shell"):]
    steps = re.split(r"\n#   \d+/\d+ \[", block)
    assert '#       $ VENV="${VENV:-$PWD/.venv}"' in steps[0] and '#       $ export PATH="$VENV/bin:$PATH"' in steps[0]
    by_kind = {s.split("]", 1)[0]: s for s in steps[1:]}
    pasted = pasted_lines("\n".join(ln[1:] for ln in (steps[0] + "\n" + by_kind["python"]).splitlines()
                                     if ln.startswith("#       ")))
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("VENV", "VIRTUAL_ENV")}
    work = tmp_path / "w"
    work.mkdir()
    p = subprocess.run(["bash", "-c", "\n".join(pasted + ["python -c 'import sys; print(sys.prefix)'"])], cwd=work,
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().splitlines()[-1] == str(work / ".venv")


# A plan that relies on CUDA minor-version compatibility (newcomer4 F1): the resolver accepted an
# old driver (R470) for a cu118 build whose toolkit driver is 520.61.05 (NVIDIA's CUDA compatibility
# guide: CUDA 11.x runs from 450.80.02; pytorch/pytorch#82913: PyTorch's binary smoke test validates
# minor-version compatibility on 470.82.01; Slicer/light-the-torch#111: for pre-compiled binaries the
# CUDA 11.x floor, not the toolkit's bundled driver, is the one that counts). The recipe's driver
# step must ask for the floor the resolver used, with its caveat, so install.sh runs on that machine.
MINOR_COMPAT = {
    "rtx3050-laptop-470": {"gpus": ["RTX 3050 Laptop"], "distro": "ubuntu20.04", "driver": "470.182.03"},
    "v100-centos7-470": {"gpus": ["V100"], "distro": "centos7", "driver": "470.82.01"},
}


@pytest.mark.subprocess
@pytest.mark.parametrize("name", MINOR_COMPAT)
def test_minor_compat_plan_recipe_accepts_the_driver_it_was_made_for(matrix, tmp_path, name):
    flags = MINOR_COMPAT[name]
    p = _plan(matrix, flags)
    assert p.candidate.fit.driver == "minor", p.candidate.fit
    full, floor = p.driver["full"], p.driver["floor"]
    assert full == "520.61.05" and floor and floor != full, p.driver
    step = next(s for s in p.recipe if s.key == "nvidia-driver")
    assert f">= {floor} " in step.title and f">= {full}" not in step.title, step.title
    assert "minor-version compatibility" in step.title and flags["driver"] in step.title, step.title
    assert f"'{floor}'" in step.check and full not in step.check, step.check
    files = render(p, [f for f in FORMATS if f not in NETWORK_FORMATS and f != "docker"])
    for fname, text in files.items():  # every output file names the same step
        assert f"driver >= {full}" not in text, fname
    bindir = tmp_path / "bin"
    bindir.mkdir()
    smi = bindir / "nvidia-smi"
    script = tmp_path / "install.sh"
    script.write_text(render(p, ["script"])["install.sh"])
    for reported, passes in ((flags["driver"], True), ("450.51.06", False)):
        smi.write_text(f'#!/bin/sh\ncase "$*" in *driver_version*) echo "{reported}";; *) echo "NVIDIA-SMI {reported}";; esac\n')
        smi.chmod(0o755)
        r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                           env={"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp_path), "VENV": str(tmp_path / "nope")})
        out = r.stdout + r.stderr
        if passes:
            assert "checked: v=" in r.stdout and "not done yet" not in r.stderr, out[-2000:]
        else:
            assert r.returncode == 1 and f"NVIDIA Linux driver >= {floor}" in r.stderr, out[-2000:]
