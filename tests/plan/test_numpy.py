"""Every plan installs the NumPy its torch build runs with (matrices/numpy.toml), in every format.

torch does not declare numpy; torchvision requires it unbounded, so `pip install torch==2.1.2
torchvision==0.16.2` takes NumPy 2 and the torch built against NumPy 1 breaks: "A module that was
compiled using NumPy 1.x cannot be run in NumPy 2.0.0" / "Failed to initialize NumPy: _ARRAY_API
not found". A plan without torchvision got no NumPy at all: `import torch` warns "Failed to
initialize NumPy: No module named 'numpy'" (breaker F20).

The expected bounds below are what public reports say, written down here — not read from the table:

* pytorch/pytorch#132179 (rgommers): "PyTorch 2.3.0 is the first version that supports NumPy 2.0 …
  Pinning torch==2.0.1 and using the latest numpy will not work." → 1.13–2.2: ``numpy<2``.
* pytorch/pytorch#107302: "Validated pytorch 2.3.0 from …/whl/test/cu121 works for numpy==2.0.0rc1
  and numpy==1.26.4" → 2.3.0 on Linux: any NumPy.
* pytorch/pytorch#107302 / #128860: "torch==2.3.1+cu118 still does not support numpy 2" — on Windows
  → 2.3.x on Windows: ``numpy<2``.
* pytorch/pytorch#131668 "Release 2.4 windows wheels are not compatible with numpy 2.0" ("linux,
  macos are not affected"; "Fixed in rc 2.4.1"); #135013 (2.4.0 on Windows, NumPy 2.1.0) → 2.4.0 on
  Windows: ``numpy<2``; 2.4.1 on Windows: any.
* AMD's ROCm 6.x install pages: "numpy v2.0 is incompatible with the torch wheels for this version"
  → AMD's 6.3.4 set on WSL: ``numpy<2``.
"""

from __future__ import annotations

import json

import pytest

from envcheck.matrix.load import tomllib
from envcheck.render import FORMATS, NETWORK_FORMATS, render
from envcheck.resolve import Request
from envcheck.resolve.plan import make_plan
from tests.conftest import plan_for

#: (name, machine flags, --torch, the numpy requirement every output must carry) — from the reports above
CASES = [
    ("rtx3090-2.1.2-issue", dict(gpus=["RTX 3090"]), "2.1.2", "numpy<2"),
    ("cpu-2.0.1-issue132179", dict(os="linux", python="3.10"), "2.0.1", "numpy<2"),
    ("cpu-1.13.1", dict(os="linux", python="3.10"), "1.13.1", "numpy<2"),
    ("rtx4090-2.2.2", dict(gpus=["RTX 4090"], python="3.11"), "2.2.2", "numpy<2"),
    ("mac-2.2.2", dict(os="macos", arch="aarch64", python="3.11"), "2.2.2", "numpy<2"),
    ("linux-2.3.0-validated", dict(gpus=["RTX 3090"], python="3.11"), "2.3.0", "numpy"),
    ("windows-2.3.1", dict(gpus=["RTX 3090"], os="windows", python="3.11"), "2.3.1", "numpy<2"),
    ("windows-2.4.0", dict(os="windows", python="3.11"), "2.4.0", "numpy<2"),
    ("windows-2.4.1-fixed", dict(os="windows", python="3.11"), "2.4.1", "numpy"),
    ("linux-2.4.0", dict(os="linux", python="3.11"), "2.4.0", "numpy"),
    ("cpu-2.13.0", dict(os="linux", python="3.11"), "2.13.0", "numpy"),
    ("7900xtx-wsl-amd-6.3.4", dict(gpus=["7900xtx"], wsl=True, driver="25.3.1"), "2.4.0", "numpy<2"),
]


def _plan(matrix, flags, torch):
    req = Request(torch=Request.parse_torch(torch), torch_text=torch)
    p = make_plan(plan_for(matrix, req, **dict(flags)), matrix)
    assert p is not None, (flags, torch)
    return p


def _lines(text: str):
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


@pytest.mark.parametrize("name,flags,torch,want", CASES, ids=[c[0] for c in CASES])
def test_every_output_carries_the_numpy_the_torch_build_runs_with(matrix, name, flags, torch, want):
    p = _plan(matrix, flags, torch)
    assert p.release.version == torch
    quoted = f"'{want}'" if "<" in want else want  # a shell word: < must be quoted
    formats = [f for f in FORMATS if f not in NETWORK_FORMATS and f != "variants"]
    files = render(p, formats)
    # requirements.txt: its own line
    assert want in _lines(files["requirements.txt"]), files["requirements.txt"]
    # the lock: what verify compares, and the pip lines it reinstalls from
    lock = tomllib.loads(files["envcheck.lock.toml"])
    assert lock["expect"]["numpy"] == want
    assert want in lock["pip"]["lines"]
    install = next(s for s in lock["step"] if s["kind"] == "install")
    assert install["commands"].split()[-1] == quoted, install["commands"]
    # the install script (bash on Linux, PowerShell on Windows) runs that same line
    script = next(t for n, t in files.items() if n.startswith("install."))
    assert any(ln.endswith(" " + quoted) and "pip install" in ln for ln in _lines(script)), name
    # uv's project file: a dependency
    uv = tomllib.loads(files["pyproject.uv.toml"])
    assert want in uv["project"]["dependencies"]
    # the Dockerfile (its Linux container's plan — for Windows, the container's own torch build)
    from envcheck.render.files import dockerfile_plan

    if "Dockerfile" in files:
        cp = dockerfile_plan(p)
        runs = [ln for ln in files["Dockerfile"].splitlines() if ln.startswith("RUN ") and "pip install" in ln]
        want_c = f"numpy{cp.requires['numpy']}" if "numpy" in cp.requires else None
        assert want_c is not None and runs and runs[0].split()[-1] == (f"'{want_c}'" if "<" in want_c else want_c)
    # conda: pip inside the environment carries it; conda-forge's own pytorch carries its numpy pin itself
    env = files["environment.yml"]
    if p.conda is None:
        assert f"- {want}" in env.replace("'", "").replace('"', ""), env
    # pixi (pip route): a pypi dependency
    pixi = tomllib.loads(files["pixi.toml"])
    if p.conda is None:
        assert pixi["pypi-dependencies"]["numpy"] == (want[len("numpy"):] or "*")


def test_the_issue_command_pins_numpy_below_2(cli):
    """The report: `plan --gpu "RTX 3090" --torch 2.1.2 --format pip` let pip install NumPy 2."""
    r = cli(["plan", "--gpu", "RTX 3090", "--torch", "2.1.2", "--format", "pip"])
    assert r.code == 0, r.err
    reqs = _lines(r.out)
    assert reqs[-4:] == ["torch==2.1.2+cu121", "torchvision==0.16.2+cu121", "torchaudio==2.1.2+cu121", "numpy<2"]


def test_a_torch_only_plan_still_gets_numpy(cli):
    """Without torchvision nothing pulled NumPy in (F20): `import torch` warned at every start."""
    r = cli(["plan", "--os", "linux", "--python", "3.11", "--torch", "2.13.0", "--backend", "cpu",
             "--without", "torchvision,torchaudio", "--json"])
    assert r.code == 0, r.err
    chosen = r.json()["chosen"]
    assert chosen["requires"] == {"numpy": ""} and chosen["pip"][-1] == "numpy"
    assert chosen["expect"]["numpy"] == "numpy"
    r = cli(["plan", "--os", "windows", "--python", "3.11", "--torch", "2.3.1", "--backend", "cpu",
             "--without", "torchvision,torchaudio", "--json"])
    assert r.json()["chosen"]["pip"][-1] == "numpy<2"


def test_packages_torch_leaves_the_range_out_and_says_so(cli, tmp_path):
    r = cli(["plan", "--os", "linux", "--python", "3.11", "--torch", "2.1.2", "--backend", "cpu",
             "--packages", "torch", "--format", "pip", "-o", str(tmp_path)])
    assert r.code == 0, r.err
    text = (tmp_path / "requirements.txt").read_text()
    assert "numpy<2" not in _lines(text) and "numpy<2 left out" in text


def test_a_build_no_row_covers_gets_no_numpy_line_and_says_why(matrix):
    """AMD's 7.x sets: their NumPy was not read (numpy.toml has no row) — no guess."""
    p = _plan(matrix, dict(gpus=["7900xtx"], wsl=True), "2.9.1")
    assert p.build.channel.startswith("repo.radeon.com/rocm-rel-7")
    assert "numpy" not in p.requires and not any(ln.startswith("numpy") for ln in p.pip_lines())
    assert any("numpy: no row in matrices/numpy.toml" in n for n in p.notes)


def test_every_release_of_pytorchs_channels_has_its_numpy_on_record(matrix):
    """The class: every torch release × platform PyTorch serves (its index and PyPI) has a row."""
    missing = [(v, b.channel, pl) for b in matrix.builds if b.channel in ("pytorch", "pypi")
               for v in b.torch for pl in b.platforms if matrix.numpy_for(v, b.channel, pl) is None]
    assert not missing, missing[:10]
    built_v1 = {v for b in matrix.builds if b.channel == "pytorch" for v in b.torch
                if matrix.numpy_for(v, "pytorch", "linux-x86_64").requires == "<2"}
    assert "2.2.2" in built_v1 and "2.3.0" not in built_v1


def test_plan_json_says_requires_in_its_schema(cli):
    schema = json.loads((__import__("pathlib").Path(__file__).resolve().parents[2] / "schemas"
                         / "envcheck.plan.v1.json").read_text())
    chosen = schema["properties"]["chosen"]["oneOf"][1]["properties"]
    assert chosen["requires"]["type"] == "object"
