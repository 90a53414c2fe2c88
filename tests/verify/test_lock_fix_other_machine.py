"""verify --lock: the fix of an environment that is not the lock's, in the order a person does it
(newcomer4 #8).

The newcomer verified a Python 3.11 CPU venv on plain Linux against the 7900 XTX WSL lock (Python
3.12, repo.radeon.com wheels, two post-install steps). The fix's first command force-reinstalled the
cp312 wheels into the 3.11 interpreter, only then said the lock was for 3.12, never said the lock
was another machine's (WSL), and left out the lock's post-install steps (without them the WSL torch
cannot see the GPU). Against a CPU lock, a venv missing torchvision and NumPy was told to install
torchvision only. The locks here are real ones from `envcheck plan`; the facts are those such a venv
records (Python 3.11, torch 2.13.0+cpu, no torchvision, no numpy).
"""

from __future__ import annotations

import pytest

from envcheck.lock import load_lock
from envcheck.verify.diagnose import diagnose
from envcheck.verify.facts import facts_from_dict
from tests.conftest import run_cli


def cpu_venv_facts(wsl=False):
    """What `verify --save-facts` records for a Python 3.11 venv with torch 2.13.0+cpu and nothing else."""
    return facts_from_dict({
        "schema": 1, "python": {"version": "3.11.7", "executable": "/tv/bin/python"},
        "platform": {"os": "linux", "arch": "x86_64", "glibc": "2.36", "wsl": wsl},
        "packages": {"torch": [{"version": "2.13.0+cpu"}]},
        "runs": {"import_torch": {"outcome": "ok", "data": {"version": "2.13.0+cpu", "cuda": None, "hip": None,
                                                            "file": "/tv/site/torch/__init__.py"}},
                 "cuda_build": {"outcome": "ok", "data": {"cuda": None, "hip": None, "errors": {}, "arch_list": [],
                                                          "devices": [], "driver": {}}}}})


@pytest.fixture(scope="module")
def lock_of(tmp_path_factory):
    made = {}

    def plan(*flags):
        if flags not in made:
            d = tmp_path_factory.mktemp("lock")
            r = run_cli(["plan", *flags, "--format", "lock", "-o", str(d)])
            assert r.code == 0, r.err
            made[flags] = load_lock(d / "envcheck.lock.toml")
        return made[flags]
    return plan


def lock_check(matrix, facts, lock):
    (c,) = diagnose(facts, lock, None, matrix, ["lock"])
    assert c.status == "fail", c
    return c


def test_another_machines_lock_says_so_first_then_python_install_post_install(matrix, lock_of):
    lock = lock_of("--gpu", "7900xtx", "--wsl")
    assert lock.machine.wsl and lock.expect.python == "3.12" and lock.expect.post_install
    fix = lock_check(matrix, cpu_venv_facts(), lock).fix
    order = [fix.find(s) for s in ("another machine (Linux x86_64 (WSL2); this one: Linux x86_64)",
                                   "Python 3.12", "-m pip install torch==2.9.1+rocm7.2.1",
                                   "post-install steps, in order: remove-bundled-libhsa, enable-dxg-detection")]
    assert -1 not in order and order == sorted(order), fix
    # the cp312 wheels are never offered to this 3.11 interpreter
    assert "/tv/bin/python -m pip" not in fix


def test_the_same_machine_with_another_python_starts_with_the_python(matrix, lock_of):
    lock = lock_of("--gpu", "7900xtx", "--wsl")
    fix = lock_check(matrix, cpu_venv_facts(wsl=True), lock).fix
    assert fix.startswith("Make an environment with Python 3.12 (the lock's wheels are for 3.12; this interpreter "
                          "is 3.11)"), fix
    assert "another machine" not in fix and "/tv/bin/python -m pip" not in fix
    assert fix.index("pip install") < fix.index("remove-bundled-libhsa")


def test_a_lock_of_this_python_reinstalls_into_this_interpreter(matrix, lock_of):
    lock = lock_of("--backend", "cpu", "--os", "linux", "--torch", "2.14.1", "--python", "3.11")
    fix = lock_check(matrix, cpu_venv_facts(), lock).fix
    assert fix.startswith("Reinstall what the lock pins: `/tv/bin/python -m pip install --force-reinstall "
                          "torch==2.14.1+cpu torchvision=="), fix
    assert "Python" not in fix.split("`")[0] and "post-install" not in fix and "another machine" not in fix


def test_missing_packages_are_all_installed_numpy_too(matrix, lock_of):
    lock = lock_of("--backend", "cpu", "--os", "linux", "--torch", "2.13.0", "--python", "3.11")
    c = lock_check(matrix, cpu_venv_facts(), lock)
    assert "torchvision: lock 0.28.0+cpu, not installed" in c.detail and "numpy: lock numpy, not installed" in c.detail
    assert c.fix == ("Install what the lock pins: `/tv/bin/python -m pip install torchvision==0.28.0+cpu numpy "
                     "--index-url https://download.pytorch.org/whl/cpu`."), c.fix


def gpu_venv_facts(name, capability):
    """A Python 3.11 venv with torch 2.14.1+cu130 that sees one NVIDIA GPU."""
    return facts_from_dict({
        "schema": 1, "python": {"version": "3.11.7", "executable": "/tv/bin/python"},
        "platform": {"os": "linux", "arch": "x86_64", "glibc": "2.36", "wsl": False},
        "packages": {"torch": [{"version": "2.14.1+cu130"}]},
        "runs": {"import_torch": {"outcome": "ok", "data": {"version": "2.14.1+cu130", "cuda": "13.0", "hip": None,
                                                            "file": "/tv/site/torch/__init__.py"}},
                 "cuda_build": {"outcome": "ok", "data": {"cuda": "13.0", "hip": None, "errors": {},
                                                          "arch_list": ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"],
                                                          "devices": [{"name": name, "capability": capability}],
                                                          "driver": {}}}}})


def test_a_lock_for_another_gpu_names_both_gpus_as_the_reason(matrix, lock_of):
    """newcomer5 #9: same OS and CPU, another GPU: the lock's [machine] GPU and the one torch sees are named."""
    lock = lock_of("--gpu", "RTX 4090", "--torch", "2.13.0", "--python", "3.11")
    c = lock_check(matrix, gpu_venv_facts("NVIDIA H100 80GB HBM3", [9, 0]), lock)
    assert c.detail.startswith(f"differs from {lock.path}, which was made for another machine (Linux x86_64, "
                               "GeForce RTX 4090 (sm_89); this one: Linux x86_64, NVIDIA H100 80GB HBM3 (sm_90)) — "
                               "that is why its pins are not this machine's: torch: lock 2.13.0+"), c.detail


def test_a_lock_for_the_same_gpu_does_not_blame_the_machine(matrix, lock_of):
    lock = lock_of("--gpu", "RTX 4090", "--torch", "2.13.0", "--python", "3.11")
    c = lock_check(matrix, gpu_venv_facts("NVIDIA GeForce RTX 4090", [8, 9]), lock)
    assert "another machine" not in c.detail + c.fix and c.detail.startswith(f"differs from {lock.path}: "), c
