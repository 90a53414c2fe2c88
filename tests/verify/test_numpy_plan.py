"""verify checks the installed NumPy against the lock, or against the plan for the installed torch
(matrices/numpy.toml) — and the fix is that plan's NumPy requirement, not a rule of thumb.

Facts are recorded from a real venv (torch 2.13.0+cpu with NumPy 2.4.6) and replayed as the
environments of public reports (no torch 2.0/2.3 wheel can be had here):

* pytorch/pytorch#132179: torch 2.0.1 with the latest NumPy → "RuntimeError: Numpy is not
  available"; rgommers: "PyTorch 2.3.0 is the first version that supports NumPy 2.0".
* xai4space/meteors#20, pytorch/pytorch#107302: `import torch` warns "Failed to initialize NumPy:
  _ARRAY_API not found" under NumPy 2.0.0.
* pytorch/pytorch#128860 / #107302 ("torch==2.3.1+cu118 still does not support numpy 2" — on
  Windows): 2.3.1 on Windows breaks under NumPy 2, the same release on Linux does not.
"""

from __future__ import annotations

import copy
import json
import re
import shlex

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.subprocess  # a real venv with real torch

#: What `import torch` printed in the reports (meteors#20; the file name is torch's own source).
ARRAY_API = ("Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
             "../torch/csrc/utils/tensor_numpy.cpp:84.)")


@pytest.fixture(scope="module")
def recorded(torch_venv):
    """verify --json of the real venv: torch 2.13.0+cpu and a NumPy."""
    r = run_cli(["verify", "--python", str(torch_venv), "--checks", "import_torch", "--json"])
    doc = r.json()
    assert doc["facts"]["packages"].get("numpy"), "the test venv has NumPy"
    return doc


def as_env(doc, torch: str, numpy, warnings=(), os_name: str = "linux"):
    """The recorded facts as an environment with ``torch`` and ``numpy`` (None: not installed)."""
    d = copy.deepcopy(doc)
    f = d["facts"]
    run = f["runs"]["import_torch"]["data"]
    run["version"] = torch
    run["warnings"] = list(warnings)
    f["packages"]["torch"][0]["version"] = torch
    if numpy is None:
        f["packages"].pop("numpy", None)
    else:
        f["packages"]["numpy"][0]["version"] = numpy
    if os_name != "linux":
        f["platform"]["os"] = os_name
        f["machine"]["os"] = os_name
        for linux_only in ("glibc", "distro", "distro_name"):  # a Windows machine has none of these
            f["machine"].pop(linux_only, None)
            f["machine"].get("how", {}).pop(linux_only, None)
        f["python"]["executable"] = "C:\\env\\Scripts\\python.exe"
    return d


def verify_facts(tmp_path, doc, *extra):
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    r = run_cli(["verify", "--facts", str(path), "--json", *extra])
    return r, {c["name"]: c for c in r.json()["checks"]}


def fix_commands(fix: str):
    return [shlex.split(c) for c in re.findall(r"`([^`]+)`", fix)]


def test_the_plans_numpy_installs_a_torch_that_imports_cleanly(torch_venv, tmp_path, recorded):
    """A plan's lock for the venv's torch, then `verify --lock`: the lock names NumPy and the real
    venv matches it (torch 2.13.0 with NumPy 2: no warning at import)."""
    py = recorded["facts"]["python"]["version"].rsplit(".", 1)[0]
    r = run_cli(["plan", "--os", "linux", "--python", py, "--torch", "2.13.0", "--backend", "cpu",
                 "--without", "torchvision,torchaudio", "--format", "lock", "-o", str(tmp_path)])
    assert r.code == 0, r.err
    lock = tmp_path / "envcheck.lock.toml"
    assert 'numpy = "numpy"' in lock.read_text()
    v = run_cli(["verify", "--python", str(torch_venv), "--lock", str(lock), "--checks", "import_torch,lock", "--json"])
    checks = {c["name"]: c for c in v.json()["checks"]}
    assert checks["import_torch"]["status"] == "pass", checks["import_torch"]
    assert checks["lock"]["status"] == "pass", checks["lock"]


def test_torch_2_0_1_under_numpy_2_gets_the_plans_numpy(tmp_path, recorded):
    """#132179's environment, with the warning meteors#20 shows: the fix installs numpy<2, the
    requirement of the plan for torch 2.0.1 — and says where it comes from."""
    doc = as_env(recorded, "2.0.1+cpu", "2.0.0", [ARRAY_API])
    _, checks = verify_facts(tmp_path, doc)
    imp = checks["import_torch"]
    assert imp["status"] == "warn" and imp["rule"] == "numpy-abi", imp
    assert "was built against NumPy 1 (its plan: numpy<2)" in imp["detail"], imp["detail"]
    runs = [argv[1:] for argv in fix_commands(imp["fix"]) if argv and argv[0].endswith("python")]
    assert ["-m", "pip", "install", "numpy<2"] in runs, imp["fix"]
    assert "matrices/numpy.toml" in imp["fix"]


def test_without_the_warning_the_installed_numpy_is_still_checked(tmp_path, recorded):
    """Facts whose import recorded no warning (an older collector, a silenced warning): verify still
    compares NumPy 2.0.0 with what torch 2.0.1 runs with."""
    _, checks = verify_facts(tmp_path, as_env(recorded, "2.0.1+cpu", "2.0.0"))
    imp = checks["import_torch"]
    assert imp["status"] == "warn" and "numpy 2.0.0 is installed; torch 2.0.1+cpu runs with numpy<2" in imp["detail"]
    assert "'numpy<2'" in imp["fix"]


def test_a_torch_built_for_numpy_2_passes_with_numpy_2(tmp_path, recorded):
    _, checks = verify_facts(tmp_path, as_env(recorded, "2.4.1+cpu", "2.0.0"))
    assert checks["import_torch"]["status"] == "pass", checks["import_torch"]


def test_the_same_release_differs_by_platform(tmp_path, recorded):
    """2.3.1 + NumPy 2.0.0: fine on Linux (#107302 validated 2.3.0), broken on Windows (#128860);
    the Windows fix names the Windows interpreter, its words quoted for PowerShell (single quotes)."""
    _, linux = verify_facts(tmp_path, as_env(recorded, "2.3.1+cpu", "2.0.0"))
    assert linux["import_torch"]["status"] == "pass", linux["import_torch"]
    _, win = verify_facts(tmp_path, as_env(recorded, "2.3.1+cpu", "2.0.0", os_name="windows"))
    imp = win["import_torch"]
    assert imp["status"] == "warn", imp
    assert "`C:\\env\\Scripts\\python.exe -m pip install 'numpy<2'`" in imp["fix"], imp["fix"]


def test_the_lock_names_numpy_and_verify_compares_it(tmp_path, recorded):
    """A lock from `plan --torch 2.0.1`: NumPy 2.0.0 installed is a lock failure whose fix reinstalls
    the lock's lines, numpy<2 among them; a missing NumPy is a warning."""
    py = recorded["facts"]["python"]["version"].rsplit(".", 1)[0]
    out = tmp_path / "plan"
    r = run_cli(["plan", "--os", "linux", "--python", py, "--torch", "2.0.1", "--backend", "cpu",
                 "--without", "torchvision,torchaudio", "--format", "lock", "-o", str(out)])
    assert r.code == 0, r.err
    lock = str(out / "envcheck.lock.toml")
    _, checks = verify_facts(tmp_path, as_env(recorded, "2.0.1+cpu", "2.0.0"), "--lock", lock, "--checks", "import_torch,lock")
    assert checks["lock"]["status"] == "fail", checks["lock"]
    assert "numpy: lock numpy<2, installed 2.0.0" in checks["lock"]["detail"]
    assert "'numpy<2'" in checks["lock"]["fix"] and "torch==2.0.1+cpu" in checks["lock"]["fix"]
    _, checks = verify_facts(tmp_path, as_env(recorded, "2.0.1+cpu", None), "--lock", lock, "--checks", "import_torch,lock")
    assert checks["lock"]["status"] == "warn" and "numpy: lock numpy<2, not installed" in checks["lock"]["detail"]
    assert "'numpy<2'" in checks["lock"]["fix"]
    _, checks = verify_facts(tmp_path, as_env(recorded, "2.0.1+cpu", "1.26.4"), "--lock", lock, "--checks", "import_torch,lock")
    assert checks["lock"]["status"] == "pass", checks["lock"]
    assert checks["import_torch"]["status"] == "pass", checks["import_torch"]
