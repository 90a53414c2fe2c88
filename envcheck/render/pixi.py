"""``pixi.toml``: a pixi workspace for the plan, on conda-forge's own terms.

conda-forge ``pytorch`` with a CUDA build string and its ``cuda-version`` (the same choice as
environment.yml, :mod:`envcheck.resolve.conda`), the machine's driver and glibc as
``[system-requirements]`` (pixi turns them into the ``__cuda``/``__glibc`` virtual packages the
solver checks), and ``[pypi-dependencies]`` from the PyTorch index only where conda-forge has no
build for the GPU (ROCm, AMD on WSL, XPU) — said in the file.
"""

from __future__ import annotations

import re
from typing import Any, Dict

import tomli_w

from envcheck.render.common import title, version
from envcheck.render.files import conda_notes
from envcheck.render.recipe import recipe_comment
from envcheck.resolve.plan import Plan

__all__ = ["render_pixi", "pixi_document", "conda_subdir"]

#: conda's subdir names (conda's own convention) for envcheck's platform keys
_SUBDIR_OS = {"linux": "linux", "macos": "osx", "windows": "win"}
_SUBDIR_ARCH = {"x86_64": "64", "aarch64": "aarch64", "arm64": "arm64", "ppc64le": "ppc64le"}


def conda_subdir(platform: str) -> str:
    """``linux-x86_64`` → ``linux-64``, ``macos-arm64`` → ``osx-arm64``, ``windows-x86_64`` → ``win-64``."""
    os_, _, arch = platform.partition("-")
    if os_ == "linux" and arch == "arm64":
        arch = "aarch64"
    return f"{_SUBDIR_OS.get(os_, os_)}-{_SUBDIR_ARCH.get(arch, arch)}"


def pixi_document(plan: Plan) -> Dict[str, Any]:
    m = plan.machine
    choice = plan.conda
    name = re.sub(r"[^a-z0-9-]+", "-", (f"torch-{choice.torch}-{'cuda' + choice.cuda_version if choice.cuda_version else 'cpu'}"
                                        if choice else f"torch-{plan.pins['torch']}").lower()).strip("-")
    doc: Dict[str, Any] = {"workspace": {"name": name, "channels": ["conda-forge"],
                                         "platforms": [conda_subdir(m.platform)]}}
    system: Dict[str, Any] = {}
    deps: Dict[str, Any] = {}
    if choice is not None:
        deps["python"] = f"{choice.python}.*"
        if choice.cuda_version:
            deps["pytorch"] = {"version": f"=={choice.torch}", "build": "cuda*"}
            deps["cuda-version"] = f"{choice.cuda_version}.*"
            deps["torchvision"] = {"version": "*", "build": "cuda*"}
            system["cuda"] = choice.cuda_version.split(".")[0]
        else:
            deps["pytorch"] = {"version": f"=={choice.torch}", "build": "cpu*"} if m.os != "macos" else f"=={choice.torch}"
            deps["torchvision"] = "*"
        if "torchvision" in plan.without:  # --without torchvision: not in any file
            del deps["torchvision"]
    else:
        deps["python"] = f"{plan.python.rstrip('t')}.*" if plan.python else "*"
        pypi: Dict[str, Any] = {}
        for pkg, ver in plan.pins.items():
            entry: Dict[str, Any] = {"version": f"=={ver}"}
            if plan.build.channel != "pypi" and plan.index_kind == "simple":
                entry["index"] = plan.index_url
            pypi[pkg] = entry
        for pkg, spec in plan.requires.items():  # the NumPy this torch runs with (matrices/numpy.toml)
            pypi[pkg] = spec or "*"
        doc["pypi-dependencies"] = pypi
        if plan.build.channel != "pypi" and plan.index_kind == "find-links":
            doc["pypi-options"] = {"find-links": [{"url": plan.index_url}]}
    for spec in plan.conda_select:  # python-freethreading, arm-variant=*=tegra … (conda.toml [[conda_select]])
        name, version, build = (spec.split("=", 2) + ["", ""])[:3]
        deps[name] = {"version": version or "*", "build": build} if build else (version or "*")
    if m.os == "linux" and m.glibc:
        system["libc"] = {"family": "glibc", "version": m.glibc}
    if system:
        doc["system-requirements"] = system
    doc["dependencies"] = deps
    return doc


def render_pixi(plan: Plan) -> str:
    """``pixi.toml`` text: ``pixi install`` in its folder (``pixi run python -c 'import torch'``); the driver
    it asks for is its own build's (:meth:`Plan.conda_plan`), not the pip plan's."""
    plan = plan.conda_plan()
    head = [f"# {title(plan)}",
            f"# Written by envcheck {version()} (`envcheck plan --format pixi`). Install: pixi install",
            *conda_notes(plan)]
    if plan.conda is not None and plan.conda.cuda_version:
        head.append("# [system-requirements] cuda/libc become the __cuda/__glibc virtual packages pixi solves with "
                    "(pixi ≥ 0.71 also reads them from [workspace] platforms)")
    head.append("# With pixi, the [python] and [install] steps are `pixi install`; run the other steps as the recipe says:")
    head.append(recipe_comment(plan, venv=False))
    return "\n".join(head) + "\n" + tomli_w.dumps(pixi_document(plan))
