"""Rendered files: the lock parses and says what verify needs; conda specs solve (py-rattler) and
never slip to a CPU build; the Dockerfile carries the compiler, the post-install steps and the
run flags."""

from __future__ import annotations

import json
import re

import pytest

from envcheck.matrix.load import tomllib
from envcheck.render import render
from envcheck.resolve import Request
from envcheck.resolve.plan import cudnn_version_int, make_plan
from tests.conftest import plan_for


def plan(matrix, request=None, **flags):
    return make_plan(plan_for(matrix, request, **flags), matrix)


def test_lock_says_what_verify_must_find(matrix):
    p = plan(matrix, gpus=["RTX 5090"], driver="570.124.06", python="3.11")
    lock = tomllib.loads(render(p, ["lock"])["envcheck.lock.toml"])
    exp = lock["expect"]
    b = p.build
    assert exp["torch_version"] == f"{p.release.version}+{b.variant}"
    assert exp["cuda"] == ".".join(b.cuda.split(".")[:2])
    assert exp["cudnn"] == b.cudnn and exp["cudnn_version"] == cudnn_version_int(b.cudnn)
    assert exp["gpu_arch"] == ["sm_120"]
    assert "sm_120" in exp["arch_list"]
    assert exp["driver_full"] and lock["machine"]["nvidia_driver"] == "570.124.06"
    assert lock["pip"]["lines"][0] == f"--index-url {p.index_url}"
    assert lock["build"]["python"] == "3.11"


@pytest.mark.parametrize("cudnn, value", [("9.7.1.26", 90701), ("8.9.2.26", 8902), ("9.10.2.21", 91002)])
def test_cudnn_version_encoding(cudnn, value):
    assert cudnn_version_int(cudnn) == value


def test_requirements_pins_with_local_labels(matrix):
    p = plan(matrix, gpus=["RTX 4090"], python="3.12", request=Request(torch=Request.parse_torch("2.7.1"),
                                                                        torch_text="2.7.1"))
    text = render(p, ["pip"])["requirements.txt"]
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert lines[0].startswith("--index-url https://download.pytorch.org/whl/cu")
    v = p.build.variant
    assert f"torch==2.7.1+{v}" in lines
    assert f"torchvision=={p.release.torchvision}+{v}" in lines
    assert "why:" in text
    # builds rejected only for another --torch (or platform/vendor) are not news (newcomer4 #10): any listed is 2.7.1's
    assert all(" 2.7.1" in ln for ln in text.splitlines() if ln.startswith("#   torch ")), text


def test_wsl_plan_carries_the_libhsa_step_everywhere(matrix):
    p = plan(matrix, gpus=["7900xtx"], wsl=True)
    files = render(p, ["pip", "conda", "docker", "lock"])
    for name, text in files.items():
        assert "libhsa-runtime64.so" in text, name
    docker = files["Dockerfile"]
    assert "--device /dev/dxg" in docker
    assert re.search(r"^RUN .*rm -f libhsa-runtime64\.so\*", docker, re.M | re.S)
    assert "pip:" in files["environment.yml"]  # no conda-forge ROCm build: pip section
    assert "-c pytorch" not in files["environment.yml"]


def test_dockerfile_for_cuda_has_compiler_and_gpu_flags(matrix):
    p = plan(matrix, gpus=["H100"], python="3.12")
    d = render(p, ["docker"])["Dockerfile"]
    assert re.search(r"^FROM python:3\.12-slim", d, re.M)
    assert "gcc g++" in d
    assert "--gpus all" in d and "--ipc=host" in d
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in d
    assert f"torch=={p.pins['torch']}" in d


def test_dockerfile_for_rocm_has_device_flags(matrix):
    d = render(plan(matrix, gpus=["MI300X"], python="3.12"), ["docker"])["Dockerfile"]
    assert "--device /dev/kfd" in d and "--device /dev/dri" in d and "--group-add video" in d


def test_never_the_ended_pytorch_channel(matrix):
    for gpu in ("RTX 4090", "A100", "GTX 1080 Ti"):
        env = render(plan(matrix, gpus=[gpu], python="3.11"), ["conda"])["environment.yml"]
        assert "- pytorch\n" not in env.split("channels:")[1].split("dependencies:")[0]
        assert "pytorch-cuda" not in env


# -- conda specs against a real solver ---------------------------------------------------------

rattler = pytest.importorskip("rattler", reason="py-rattler is the conda solver these tests use")


def conda_deps(env_text):
    deps = env_text.split("dependencies:", 1)[1]
    return [ln.strip()[2:] for ln in deps.splitlines() if ln.startswith("  - ") and not ln.strip().startswith("- pip:")]


def repodata(tmp_path, torch, python, cuda):
    """A tiny conda-forge-like channel: pytorch with CUDA and CPU builds (as the feedstock names them)."""
    py = python.replace(".", "")
    pk = {}

    def add(name, version, build, depends=(), constrains=()):
        pk[f"{name}-{version}-{build}.tar.bz2"] = {
            "name": name, "version": version, "build": build, "build_number": 0,
            "depends": list(depends), "constrains": list(constrains), "subdir": "linux-64",
            "timestamp": 1735689600000}

    add("python", f"{python}.0", "h0")
    add("cuda-version", cuda, "h0", constrains=[f"__cuda >={cuda.split('.')[0]}"])
    add("pytorch", torch, f"cuda{cuda.replace('.', '')}_generic_py{py}_h1",
        [f"python >={python},<{python}.99", f"cuda-version >={cuda},<{int(cuda.split('.')[0]) + 1}", "__cuda"])
    add("pytorch", torch, f"cpu_generic_py{py}_h2", [f"python >={python},<{python}.99"])
    add("torchvision", "0.99.0", f"cuda{cuda.replace('.', '')}_py{py}_h3", [f"pytorch {torch} *cuda*"])
    add("torchvision", "0.99.0", f"cpu_py{py}_h4", [f"pytorch {torch} cpu*"])
    add("torchaudio", "2.99.0", "py_h5", [f"pytorch {torch}"])
    d = tmp_path / "channel" / "linux-64"
    d.mkdir(parents=True)
    (d / "repodata.json").write_text(json.dumps({"info": {"subdir": "linux-64"}, "packages": pk}))
    (tmp_path / "channel" / "noarch").mkdir()
    (tmp_path / "channel" / "noarch" / "repodata.json").write_text(json.dumps({"info": {"subdir": "noarch"}, "packages": {}}))
    return d / "repodata.json"


def solve(tmp_path, specs, virtual):
    import asyncio

    chan = rattler.Channel(str(tmp_path / "channel"))
    sparse = rattler.SparseRepoData(chan, "linux-64", str(tmp_path / "channel" / "linux-64" / "repodata.json"))
    build = rattler.BuildString("0") if hasattr(rattler, "BuildString") else "0"  # py-rattler API moved
    vps = [rattler.GenericVirtualPackage(rattler.PackageName(n), rattler.Version(v), build) for n, v in virtual]
    result = rattler.solve_with_sparse_repodata([rattler.MatchSpec(s) for s in specs], [sparse],
                                                virtual_packages=vps)
    if asyncio.iscoroutine(result):
        result = asyncio.run(result)
    return {r.name.normalized: str(r.build) for r in result}


def test_conda_cuda_spec_solves_to_a_cuda_build_and_never_slips_to_cpu(matrix, tmp_path):
    p = plan(matrix, gpus=["RTX 4090"], python="3.12", request=Request(torch=Request.parse_torch("2.7.0"),
                                                                        torch_text="2.7.0"))
    env = render(p, ["conda"])["environment.yml"]
    specs = conda_deps(env)
    assert any(s.startswith("pytorch=") and s.endswith("=*cuda*") for s in specs)
    cuda = next(s.split("=")[1] for s in specs if s.startswith("cuda-version="))
    repodata(tmp_path, p.release.version, p.python, cuda)
    got = solve(tmp_path, specs, [("__cuda", cuda), ("__glibc", "2.35"), ("__unix", "0"), ("__linux", "6.0")])
    assert got["pytorch"].startswith("cuda") and got["torchvision"].startswith("cuda")
    # no driver (__cuda absent): the solver must fail, not quietly pick the CPU build (case C17)
    from rattler.exceptions import SolverError

    with pytest.raises(SolverError):
        solve(tmp_path, specs, [("__glibc", "2.35"), ("__unix", "0"), ("__linux", "6.0")])


def test_conda_cpu_spec_solves_to_the_cpu_build(matrix, tmp_path):
    p = plan(matrix, python="3.12", request=Request(backend="cpu", torch=Request.parse_torch("2.7.0"),
                                                     torch_text="2.7.0"))
    specs = conda_deps(render(p, ["conda"])["environment.yml"])
    repodata(tmp_path, p.release.version, p.python, "12.6")
    got = solve(tmp_path, specs, [("__glibc", "2.35"), ("__unix", "0"), ("__linux", "6.0")])
    assert got["pytorch"].startswith("cpu")


@pytest.mark.parametrize("key, value, line", [
    ("CUDA_HOME", "/usr/local/cuda", "CUDA_HOME=/usr/local/cuda"),
    ("_X1", "a,b:c/d=e@f+g%h-i_j.k", "_X1=a,b:c/d=e@f+g%h-i_j.k"),
    ("HSA_OVERRIDE_GFX_VERSION", "", "HSA_OVERRIDE_GFX_VERSION="),
    ("PYTORCH_ALLOC_CONF", "expandable_segments:True garbage_collection_threshold:0.6",
     'PYTORCH_ALLOC_CONF="expandable_segments:True garbage_collection_threshold:0.6"'),
    ("P", 'a"b\\c$d', 'P="a\\"b\\\\c\\$d"'),
    ("P", "café", 'P="café"'),
])
def test_dockerfile_env_lines(key, value, line):
    from envcheck.render.files import docker_env

    assert docker_env(key, value) == line


@pytest.mark.parametrize("key, value", [
    ("1CUDA", "x"), ("CUDA-HOME", "x"), ("CUDA HOME", "x"), ("", "x"), ("É", "x"), ("A\n", "x"),
    ("A", "x\ny"), ("A", "x\u2028y"),
])
def test_dockerfile_env_refuses_what_is_not_a_variable_or_one_line(key, value):
    from envcheck.errors import UsageError
    from envcheck.render.files import docker_env

    with pytest.raises(UsageError):
        docker_env(key, value)


def test_names_and_tags_keep_only_their_characters(matrix):
    """The conda environment's name keeps [A-Za-z0-9_.-], the image tag also ':' and '/'; every other
    character (the '+' of a local version label) becomes '-'."""
    from envcheck.render.files import _dashed, _NAME_CHARS, _TAG_CHARS

    assert _dashed("torch-2.13.0+cu130 é/x:y", _NAME_CHARS) == "torch-2.13.0-cu130---x-y"
    assert _dashed("envcheck/torch:2.13.0+cu130 é", _TAG_CHARS) == "envcheck/torch:2.13.0-cu130--"
    p = plan(matrix, gpus=["RTX 4090"], driver="570.124.06", python="3.12")
    files = render(p, ["conda", "docker"])
    assert re.search(r"^name: torch-[A-Za-z0-9_.-]+$", files["environment.yml"], re.M)
    assert re.search(r"-t envcheck/torch:[A-Za-z0-9_.:/-]+", files["Dockerfile"])
    assert "\n\n\n" not in files["Dockerfile"]
