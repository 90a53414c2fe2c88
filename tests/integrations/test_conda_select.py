"""What an environment names beside pytorch (matrices/conda.toml ``[[conda_select]]``), checked with
py-rattler's solver against repodata fixtures shaped like conda-forge's:

* a free-threaded plan (``--python 3.14t``) must solve to the free-threaded interpreter: conda-forge
  selects it with ``python-freethreading`` (→ ``python_abi *_cp314t``); ``python=3.14`` alone is the
  GIL build, while the lock says 3.14t (breaker3 F9). conda-forge has no free-threaded pytorch, so
  torch comes from pip inside the environment;
* a Jetson (Orin) plan must solve to the Tegra CUDA build: conda-forge's linux-aarch64 CUDA packages
  default to SBSA and a Tegra device asks with ``arm-variant=*=tegra``
  (conda-forge/conda-forge-repodata-patches-feedstock#973, prefix-dev/pixi#5657) (breaker3 F5).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.conftest import plan_for
from tests.integrations.test_conda_pixi import env_specs, pixi_specs

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

rattler = pytest.importorskip("rattler", reason="py-rattler is the conda solver these tests use")


def _channel(tmp_path, subdir, packages):
    root = tmp_path / f"channel-{subdir}"
    by_dir = {subdir: {}, "noarch": {}}
    for name, version, build, depends, number, where in packages:
        d = "noarch" if where == "noarch" else subdir
        by_dir[d][f"{name}-{version}-{build}.conda"] = {
            "name": name, "version": version, "build": build, "build_number": number, "depends": list(depends),
            "subdir": d, "timestamp": 1760000000000, **({"noarch": "generic"} if d == "noarch" else {})}
    for d, pk in by_dir.items():
        (root / d).mkdir(parents=True)
        (root / d / "repodata.json").write_text(json.dumps({"info": {"subdir": d}, "packages": pk}))
    return root


def _solve(root, subdir, specs, virtual):
    channel = rattler.Channel(str(root))
    sparse = [rattler.SparseRepoData(channel, d, str(root / d / "repodata.json")) for d in (subdir, "noarch")]
    build = rattler.BuildString("0") if hasattr(rattler, "BuildString") else "0"
    vps = [rattler.GenericVirtualPackage(rattler.PackageName(n), rattler.Version(v), build) for n, v in virtual]
    result = rattler.solve_with_sparse_repodata([rattler.MatchSpec(s) for s in specs], sparse, virtual_packages=vps)
    if asyncio.iscoroutine(result):
        result = asyncio.run(result)
    return {r.name.normalized: (str(r.version), str(r.build)) for r in result}


def _make(matrix, **flags):
    from envcheck.resolve.plan import make_plan

    return make_plan(plan_for(matrix, **flags), matrix)


#: CPython 3.14 on conda-forge: the GIL and the free-threaded builds, told apart by python_abi; the
#: GIL build is the default (higher build number), as `python=3.14` gets it
PYTHON_314 = [
    ("python_abi", "3.14", "8_cp314", [], 0, ""),
    ("python_abi", "3.14", "8_cp314t", [], 0, ""),
    ("python", "3.14.0", "h1_cp314", ["python_abi 3.14.* *_cp314"], 1, ""),
    ("python", "3.14.0", "h0_cp314t", ["python_abi 3.14.* *_cp314t"], 0, ""),
    ("python-freethreading", "3.14.0", "h0", ["python 3.14.0.*", "python_abi * *_cp314t"], 0, "noarch"),
    ("pip", "25.2", "h0", [], 0, "noarch"),
]
LINUX = [("__unix", "0"), ("__linux", "6.0"), ("__glibc", "2.35"), ("__cuda", "13.0")]


def test_free_threaded_plan_solves_to_the_free_threaded_interpreter(matrix, tmp_path):
    from envcheck.render import render

    p = _make(matrix, gpus=["RTX 4090"], python="3.14t", distro="ubuntu24.04")
    assert p.python == "3.14t"
    files = render(p, ["conda", "pixi", "lock"])
    assert 'python = "3.14t"' in files["envcheck.lock.toml"]
    env = files["environment.yml"]
    # conda-forge has no free-threaded pytorch: torch comes from pip inside the environment, said why
    assert "pytorch=" not in env and "  - pip:" in env and "no free-threaded (Python 3.14t) build" in env
    root = _channel(tmp_path, "linux-64", PYTHON_314)
    got = _solve(root, "linux-64", env_specs(env), LINUX)
    assert got["python"][1].endswith("_cp314t") and got["python_abi"][1] == "8_cp314t"
    pixi = tomllib.loads(files["pixi.toml"])
    assert pixi["pypi-dependencies"]["torch"]["version"] == f"=={p.pins['torch']}"
    got = _solve(root, "linux-64", pixi_specs(pixi), LINUX)
    assert got["python"][1].endswith("_cp314t")
    # the check has teeth: the spec the files used to write solves to the GIL interpreter
    assert _solve(root, "linux-64", ["python=3.14", "pip"], LINUX)["python"][1].endswith("_cp314")


def test_gil_plan_names_no_free_threading(matrix):
    from envcheck.render import render

    p = _make(matrix, gpus=["RTX 4090"], python="3.14", distro="ubuntu24.04")
    files = render(p, ["conda", "pixi"])
    assert "python-freethreading" not in files["environment.yml"] + files["pixi.toml"]
    assert "pytorch=2.13.0=*cuda*" in env_specs(files["environment.yml"])  # conda-forge's own build


def _aarch64_cuda():
    """conda-forge's linux-aarch64 pytorch CUDA 12.9 builds: the SBSA one (the default, higher build
    number, `arm-variant * sbsa` as the repodata patch adds it) and the Tegra one."""
    out = [("python", "3.10.14", "h0_cpython", [], 0, ""), ("python", "3.12.7", "h0_cpython", [], 0, ""),
           ("cuda-version", "12.9", "h0", [], 0, "noarch"),
           ("arm-variant", "1.2.0", "sbsa", [], 0, ""), ("arm-variant", "1.2.0", "tegra", [], 0, "")]
    for py in ("310", "312"):
        dep = [f"python >=3.{py[1:]},<3.{int(py[1:]) + 1}", "cuda-version >=12.9,<13", "__cuda"]
        out += [("pytorch", "2.13.0", f"cuda129_generic_py{py}_h1", dep + ["arm-variant * sbsa"], 201, ""),
                ("pytorch", "2.13.0", f"cuda129_generic_py{py}_h2", dep + ["arm-variant * tegra"], 200, ""),
                ("torchvision", "0.28.0", f"cuda129_py{py}_h3", ["pytorch 2.13.0 cuda*", f"python 3.{py[1:]}.*"],
                 200, "")]
    return out


def test_jetson_orin_environment_solves_to_the_tegra_build(matrix, tmp_path):
    from envcheck.render import render

    p = _make(matrix, gpus=["Jetson AGX Orin"])
    assert p.conda is not None and p.conda.row.arm_variant == "tegra"
    files = render(p, ["conda", "pixi"])
    specs = env_specs(files["environment.yml"])
    assert "arm-variant=*=tegra" in specs
    root = _channel(tmp_path, "linux-aarch64", _aarch64_cuda())
    virtual = [("__unix", "0"), ("__linux", "5.15"), ("__glibc", "2.35"), ("__cuda", "12.6")]
    got = _solve(root, "linux-aarch64", specs, virtual)
    assert got["arm-variant"][1] == "tegra" and got["pytorch"][1].endswith("_h2")
    pixi = tomllib.loads(files["pixi.toml"])
    assert pixi["dependencies"]["arm-variant"] == {"version": "*", "build": "tegra"}
    assert _solve(root, "linux-aarch64", pixi_specs(pixi), virtual)["arm-variant"][1] == "tegra"
    # the check has teeth: without the pin the solver takes the SBSA build, which does not run on Orin
    bare = [s for s in specs if not s.startswith("arm-variant")]
    assert _solve(root, "linux-aarch64", bare, virtual)["arm-variant"][1] == "sbsa"


def test_grace_hopper_names_sbsa_and_x86_names_no_arm_variant(matrix):
    from envcheck.render import render

    gh = _make(matrix, gpus=["GH200"], driver="570.124.06")  # CUDA 12.x: the SBSA/Tegra split
    assert gh.conda is not None and gh.conda.cuda_version and gh.conda.cuda_version.startswith("12.")
    assert "arm-variant=*=sbsa" in env_specs(render(gh, ["conda"])["environment.yml"])
    x86 = _make(matrix, gpus=["RTX 4090"], python="3.12")
    assert not [s for s in env_specs(render(x86, ["conda"])["environment.yml"]) if "arm-variant" in s]
