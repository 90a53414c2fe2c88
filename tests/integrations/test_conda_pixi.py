"""conda and pixi on conda-forge's own terms, checked with py-rattler's solver against a repodata
fixture shaped like conda-forge's (pytorch CUDA builds `cuda<XY>_*` that need __cuda, CPU builds
`cpu_*`, cuda-version gating the driver's CUDA major), with the machine's virtual packages."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.conftest import plan_for

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

rattler = pytest.importorskip("rattler", reason="py-rattler is the conda solver these tests use")
from rattler.exceptions import SolverError  # noqa: E402

#: what the fixture channel serves: conda-forge's torch 2.12.1 and 2.13.0 for Python 3.12, CUDA 12.9
#: and 13.0 builds (matrices/conda.toml lists these for linux-64) and a CPU build of each
TORCH = ("2.12.1", "2.13.0")
CUDA = ("12.9", "13.0")


def channel(tmp_path):
    root = tmp_path / "channel"
    if root.exists():
        return root
    pk = {}

    def add(name, version, build, depends=(), constrains=(), number=0):
        pk[f"{name}-{version}-{build}.conda"] = {
            "name": name, "version": version, "build": build, "build_number": number, "depends": list(depends),
            "constrains": list(constrains), "subdir": "linux-64", "timestamp": 1760000000000}

    add("python", "3.12.7", "h0_cpython")
    add("python", "3.11.10", "h0_cpython")
    for cv in CUDA:
        add("cuda-version", cv, "h0", constrains=[f"__cuda >={cv.split('.')[0]}"])
    for t in TORCH:
        for cv in CUDA:
            tag = cv.replace(".", "")
            add("pytorch", t, f"cuda{tag}_generic_py312_h1", ["python >=3.12,<3.13", f"cuda-version >={cv},<{int(float(cv)) + 1}",
                                                               "__cuda", "__glibc >=2.28"], number=200)
            add("torchvision", "0.28.0" if t == "2.13.0" else "0.27.1", f"cuda{tag}_py312_h3",
                [f"pytorch {t} cuda*", "python >=3.12,<3.13"], number=200)
        add("pytorch", t, "cpu_generic_py312_h2", ["python >=3.12,<3.13", "__glibc >=2.28"])
        add("torchvision", "0.28.0" if t == "2.13.0" else "0.27.1", "cpu_py312_h4", [f"pytorch {t} cpu*"])
    (root / "linux-64").mkdir(parents=True)
    (root / "linux-64" / "repodata.json").write_text(json.dumps({"info": {"subdir": "linux-64"}, "packages": pk}))
    (root / "noarch").mkdir()
    (root / "noarch" / "repodata.json").write_text(json.dumps({"info": {"subdir": "noarch"}, "packages": {}}))
    return root


def solve(root, specs, virtual):
    sparse = rattler.SparseRepoData(rattler.Channel(str(root)), "linux-64", str(root / "linux-64" / "repodata.json"))
    build = rattler.BuildString("0") if hasattr(rattler, "BuildString") else "0"  # py-rattler API moved
    vps = [rattler.GenericVirtualPackage(rattler.PackageName(n), rattler.Version(v), build) for n, v in virtual]
    result = rattler.solve_with_sparse_repodata([rattler.MatchSpec(s) for s in specs], [sparse], virtual_packages=vps)
    if asyncio.iscoroutine(result):
        result = asyncio.run(result)
    return {r.name.normalized: (str(r.version), str(r.build)) for r in result}


def make(matrix, **flags):
    from envcheck.resolve.plan import make_plan

    return make_plan(plan_for(matrix, **flags), matrix)


def env_specs(text):
    deps = text.split("dependencies:", 1)[1]
    return [ln.strip()[2:] for ln in deps.splitlines() if ln.startswith("  - ") and not ln.strip().startswith("- pip")]


def pixi_specs(doc):
    """[dependencies] as conda match specs, as pixi reads them."""
    out = []
    for name, v in doc["dependencies"].items():
        if isinstance(v, str):
            out.append(f"{name} {v}")
        else:
            out.append(f"{name} {v.get('version', '*')} {v['build']}" if "build" in v else f"{name} {v['version']}")
    return out


def pixi_virtual(doc):
    """[system-requirements] → the virtual packages pixi solves with."""
    sr = doc.get("system-requirements", {})
    out = [("__unix", "0"), ("__linux", "6.0")]
    if "cuda" in sr:
        out.append(("__cuda", sr["cuda"]))
    libc = sr.get("libc", {})
    out.append(("__glibc", libc.get("version", "2.28")))
    return out


def test_pip_release_not_on_conda_forge_gets_conda_forge_cuda_build(matrix, tmp_path):
    """The case of the issue: the pip plan picks a torch conda-forge never shipped; the conda route
    takes conda-forge's newest CUDA build the driver runs instead of pip inside conda."""
    from envcheck.render import render

    p = make(matrix, gpus=["RTX 4090"], driver="580.65.06", python="3.12", distro="ubuntu22.04")
    assert p.release.version not in {v for r in matrix.conda_forge for v in r.torch}  # pip's choice: not on conda-forge
    env = render(p, ["conda"])["environment.yml"]
    assert "pip:" not in env
    specs = env_specs(env)
    assert "pytorch=2.13.0=*cuda*" in specs and "cuda-version=13.0" in specs
    got = solve(channel(tmp_path), specs, [("__cuda", "13.0"), ("__glibc", "2.35"), ("__unix", "0"), ("__linux", "6.0")])
    assert got["pytorch"][0] == "2.13.0" and got["pytorch"][1].startswith("cuda130")
    assert got["torchvision"][1].startswith("cuda")


def test_an_older_driver_gets_the_cuda_build_it_runs(matrix, tmp_path):
    from envcheck.render import render

    p = make(matrix, gpus=["RTX 4090"], driver="550.54.14", python="3.12")  # CUDA 12.4 driver: no CUDA 13
    specs = env_specs(render(p, ["conda"])["environment.yml"])
    assert "cuda-version=12.9" in specs  # 12.x minor-version compatibility
    got = solve(channel(tmp_path), specs, [("__cuda", "12.4"), ("__glibc", "2.35"), ("__unix", "0"), ("__linux", "6.0")])
    assert got["pytorch"][1].startswith("cuda129") and got["cuda-version"][0] == "12.9"
    # the 13.0 spec of a newer driver does not solve on this machine: the gate is real
    with pytest.raises(SolverError):
        solve(channel(tmp_path), ["python=3.12", "pytorch=2.13.0=*cuda*", "cuda-version=13.0"],
              [("__cuda", "12.4"), ("__glibc", "2.35"), ("__unix", "0"), ("__linux", "6.0")])


def test_pixi_toml_solves_with_its_system_requirements(matrix, tmp_path):
    from envcheck.render.pixi import render_pixi

    p = make(matrix, gpus=["RTX 4090"], driver="580.65.06", python="3.12", distro="ubuntu22.04")
    doc = tomllib.loads(render_pixi(p))
    assert doc["workspace"]["platforms"] == ["linux-64"] and doc["workspace"]["channels"] == ["conda-forge"]
    assert doc["system-requirements"] == {"cuda": "13", "libc": {"family": "glibc", "version": "2.35"}}
    assert "pypi-dependencies" not in doc
    got = solve(channel(tmp_path), pixi_specs(doc), pixi_virtual(doc))
    assert got["pytorch"] == ("2.13.0", "cuda130_generic_py312_h1")
    # without a driver (no __cuda) it must fail, never slip to the CPU build
    with pytest.raises(SolverError):
        solve(channel(tmp_path), pixi_specs(doc), [v for v in pixi_virtual(doc) if v[0] != "__cuda"])


def test_pixi_cpu_and_glibc_floor(matrix, tmp_path):
    from envcheck.render.pixi import render_pixi

    doc = tomllib.loads(render_pixi(make(matrix, python="3.12", os="linux", distro="debian12",
                                         request=_cpu())))
    got = solve(channel(tmp_path), pixi_specs(doc), pixi_virtual(doc))
    assert got["pytorch"][1].startswith("cpu")
    old = tomllib.loads(render_pixi(make(matrix, python="3.12", os="linux", distro="centos7", request=_cpu())))
    with pytest.raises(SolverError):  # glibc 2.17 < the builds' 2.28
        solve(channel(tmp_path), pixi_specs(old), pixi_virtual(old))


def _cpu():
    from envcheck.resolve import Request

    return Request(backend="cpu")


@pytest.mark.parametrize("flags,why", [(dict(gpus=["7900xtx"], wsl=True), "ROCm"),
                                       (dict(gpus=["MI300X"], python="3.12"), "ROCm")])
def test_pip_inside_conda_only_where_conda_forge_has_nothing(matrix, flags, why):
    from envcheck.render import render
    from envcheck.render.pixi import render_pixi

    p = make(matrix, **flags)
    env = render(p, ["conda"])["environment.yml"]
    assert f"pip inside conda: conda-forge has no {why} build" in env and "  - pip:" in env
    doc = tomllib.loads(render_pixi(p))
    assert doc["pypi-dependencies"]["torch"]["version"] == f"=={p.pins['torch']}"
    assert "pytorch" not in doc["dependencies"]


def test_plan_format_pixi_from_the_cli(cli):
    r = cli(["plan", "--gpu", "RTX 4090", "--driver", "580.65.06", "--python", "3.12", "--format", "pixi"])
    assert r.code == 0, r.err
    doc = tomllib.loads(r.out)
    assert doc["dependencies"]["pytorch"] == {"version": "==2.13.0", "build": "cuda*"}
