"""What diagnose and the rule helpers read: facts, the lock, the machine, the matrix — and the
resolver, asked for the build that would fix a problem on this machine.

Nothing here does I/O; :class:`Context` is built once per diagnosis and caches resolver answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Tuple

from envcheck.machine.model import GpuDevice, Machine
from envcheck.matrix import Matrix
from envcheck.matrix.model import Build, Release, vkey
from envcheck.verify.facts import Facts, public_version, variant_of
from envcheck.lock import Lock
from envcheck.verify.machine import gfx_of, machine_from_facts, sm_of

__all__ = ["Context", "gfx_of", "sm_of", "split_arch_list", "site_of", "short_list"]

#: Characters before a rule's match kept for helpers (:attr:`Context.before`).
BEFORE = 200


def split_arch_list(arch_list: List[str]) -> Tuple[List[str], List[str]]:
    """``torch.cuda.get_arch_list()`` → (cubins ``sm_*``, PTX ``compute_*``)."""
    sm = [a for a in arch_list if re.fullmatch(r"sm_\d+[af]?", a)]
    ptx = [a for a in arch_list if re.fullmatch(r"compute_\d+[af]?", a)]
    return sm, ptx


def site_of(torch_file: Optional[str]) -> str:
    """``/venv/lib/python3.11/site-packages/torch/__init__.py`` → the site-packages folder."""
    return re.split(r"[\\/]torch[\\/]__init__\.py$", torch_file or "")[0]


def short_list(xs: List[str], limit: int = 10) -> str:
    xs = list(xs)
    if not xs:
        return "empty"
    return ", ".join(xs if len(xs) <= limit else xs[:limit] + [f"… ({len(xs)} in all)"])


@dataclass
class Context:
    """Inputs of one diagnosis.

    Attributes:
        facts: what the collector saw (or a replayed file).
        matrix: the compatibility matrix (rules, tolerances, builds, drivers).
        lock: the plan's promise, when ``--lock`` was given.
        machine: the probed machine (live runs), else the one saved in the facts, else the lock's.
        groups: named groups of the rule being rendered (set per rule).
        before: up to :data:`BEFORE` characters of the text just before the rule's match (set per
            rule; the GPU name in front of "with CUDA capability sm_120 …").
        hints: facts read from the explained text itself (``cuda_driver_max`` from "found version
            12080", ``os`` from a ``C:\\`` path, ``gpu_arch`` from "sm_120" or "gfx1103"); they rank
            below the collected facts and above the probed machine (the text may come from another
            machine: its own facts rule out builds that cannot run there).
    """

    facts: Facts
    matrix: Matrix
    lock: Optional[Lock] = None
    machine: Optional[Machine] = None
    groups: Dict[str, Optional[str]] = field(default_factory=dict)
    before: str = ""
    hints: Dict[str, str] = field(default_factory=dict)
    _plans: Dict[Any, Any] = field(default_factory=dict)
    _here: Optional[Machine] = None
    #: ``pip install`` commands written since diagnose last reset it (a fix that installs something)
    installs: int = 0

    def __post_init__(self) -> None:
        if self.machine is None and isinstance(self.facts.data.get("machine"), dict):
            from envcheck.machine.io import machine_from_dict

            self.machine = machine_from_dict(self.facts.data["machine"])
        if self.machine is None and self.lock is not None:
            self.machine = self.lock.machine

    # -- the machine the facts were collected on (the one converter) --------------------------
    @property
    def here(self) -> Machine:
        """This environment's machine: :func:`machine_from_facts` of the facts, the text's hints
        and the probed/saved machine (computed once)."""
        if self._here is None:
            self._here = machine_from_facts(self.facts, self.machine, self.hints, self.matrix)
        return self._here

    @property
    def wsl(self) -> bool:
        return self.here.wsl

    @property
    def wsl_known(self) -> bool:
        """Whether WSL or not is known (facts, the text, or a machine), not assumed."""
        return self.facts.wsl is not None or "wsl" in self.hints or self.machine is not None

    @property
    def os_known(self) -> Optional[str]:
        """The platform when known from the facts, the text or a machine; ``None`` when assumed."""
        if self.facts.os or "os" in self.hints or self.machine is not None:
            return self.os
        return None

    @property
    def glibc(self) -> Optional[str]:
        return self.here.glibc

    @property
    def os(self) -> str:
        return self.here.os

    @property
    def windows_driver(self) -> bool:
        return self.os == "windows" or self.wsl

    @property
    def python(self) -> Optional[str]:
        return self.here.python

    @property
    def variant(self) -> Optional[str]:
        """The installed build's variant; ``None`` when torch did not import and its version has no label."""
        t = self.facts.torch
        version = self.facts.torch_version
        if not t and "+" not in (version or ""):
            return None
        return variant_of(version, self.facts.torch_cuda, self.facts.torch_hip, t.get("xpu"))

    @property
    def nvidia_driver(self) -> Optional[str]:
        return self.here.nvidia_driver

    @property
    def cuda_driver_max(self) -> Optional[str]:
        return self.here.cuda_driver_max

    def driver_cuda(self) -> Optional[str]:
        """The newest CUDA the machine's NVIDIA driver runs: as reported (``cuda_driver_max``), else
        what the driver version reaches per matrices/cuda.toml (``--driver 470.82.01`` → 11.4)."""
        if self.cuda_driver_max:
            return self.cuda_driver_max
        drv = self.nvidia_driver
        return self.matrix.cuda_for_driver(drv, self.windows_driver) if drv else None

    def oldest_python(self) -> Optional[str]:
        """The oldest Python any torch release in the matrix supports (``"3.7"``)."""
        from envcheck.matrix.model import python_key

        pys = {py.rstrip("t") for r in self.matrix.releases for pys in r.python.values() for py in pys}
        return min(pys, key=python_key) if pys else None

    def gpus(self) -> List[GpuDevice]:
        """The GPUs as torch sees them; else as NVML saw them; else the one the explained text
        names; else the machine's (:func:`gpus_from_facts`)."""
        return list(self.here.gpus)

    # -- matrix lookups -----------------------------------------------------------------------
    def release(self, version: Optional[str] = None) -> Optional[Release]:
        return self.matrix.release_by_version.get(public_version(version or self.facts.torch_version))

    def build_row(self) -> Optional[Build]:
        """The matrix build row of the installed torch (release × variant), if on record."""
        rel = self.release()
        variant = self.variant
        if rel is None or not variant:
            return None
        rows = [b for b in self.matrix.builds_for(rel.version) if b.variant == variant]
        plat = self.target_machine().platform
        return next((b for b in rows if plat in b.platforms), rows[0] if rows else None)

    def driver_floors(self, cuda: str) -> Tuple[Optional[str], Optional[str]]:
        """(full support, minor-version-compatibility floor) for CUDA ``cuda`` on this machine's
        NVIDIA GPUs — the resolver's rule (:func:`envcheck.resolve.rules.driver_range`): each floor
        is at least the lowest driver that drives the GPUs."""
        from envcheck.resolve.rules import driver_range

        full, floor, _ = driver_range(self.matrix, cuda, self.windows_driver,
                                      [g for g in self.gpus() if g.vendor == "nvidia"])
        return full, floor

    def full_support_fix(self, cuda: str, full: Optional[str]) -> str:
        """"Upgrade the NVIDIA driver to ≥ FULL for full CUDA support." — unless FULL is past the last
        driver branch that drives this machine's GPU (Kepler: R470): then staying on that branch is the
        advice, since no driver gives this build full support on it."""
        from envcheck.resolve.rules import driver_branch, gpu_driver_bounds

        bounds = gpu_driver_bounds(self.matrix, [g for g in self.gpus() if g.vendor == "nvidia"], self.windows_driver)
        if full and bounds.last_branch and driver_branch(full) > int(bounds.last_branch):
            last = bounds.last_branch
            return (f"Stay on the R{last} driver branch ({last}.xx): it is the last that drives the {bounds.who}, and "
                    f"full CUDA {cuda} support needs ≥ {full}; minor-version compatibility is what this GPU gets.")
        return f"Upgrade the NVIDIA driver to ≥ {full} for full CUDA {cuda} support."

    # -- the resolver, for fixes ----------------------------------------------------------------
    def target_machine(self, gpus: Optional[List[GpuDevice]] = None, **overrides: Any) -> Machine:
        """The machine the environment runs on (:attr:`here`), with other GPUs or facts when a fix
        plans for another machine (the one an error message came from)."""
        m = self.here if gpus is None else replace(self.here, gpus=list(gpus))
        return replace(m, **overrides) if overrides else m

    def plan(self, torch: Optional[str] = None, backend: str = "auto", gpus: Optional[List[GpuDevice]] = None,
             **overrides: Any) -> Any:
        """The resolver's answer for this machine: ``(Plan or None, Resolution)``; cached."""
        key = (torch, backend, tuple((g.vendor, g.arch) for g in gpus) if gpus is not None else None,
               tuple(sorted(overrides.items())))
        if key not in self._plans:
            from envcheck.resolve import Request, resolve
            from envcheck.resolve.plan import make_plan

            req = Request(torch=Request.parse_torch(torch) if torch else None, torch_text=torch or "",
                          backend=backend)
            res = resolve(self.target_machine(gpus, **overrides), req, self.matrix)
            self._plans[key] = (make_plan(res, self.matrix), res)
        return self._plans[key]

    def numpy_requirement(self) -> Tuple[Optional[str], str]:
        """The NumPy the installed torch runs with, as a requirement (``"numpy<2"``; ``"numpy"`` = any),
        and where that comes from: the lock's ``[expect] numpy`` when the lock is for this torch, else
        the plan the resolver makes for this release and variant on this machine (matrices/numpy.toml).
        ``(None, "")`` when neither says."""
        torch = public_version(self.facts.torch_version)
        lock = self.lock
        if lock is not None and lock.expect.numpy and public_version(lock.expect.torch_version) == torch:
            return lock.expect.numpy, f"the lock {lock.path}"
        if torch and self.release(torch) and self.variant:
            plan, _ = self.plan(torch=torch, backend=self.variant)
            if plan is not None and "numpy" in plan.requires:
                return f"numpy{plan.requires['numpy']}", f"the plan for torch {plan.pins['torch']}, matrices/numpy.toml"
        return None, ""

    def numpy_outside(self) -> Optional[str]:
        """A sentence when the installed NumPy is outside :meth:`numpy_requirement`; else ``None``."""
        want, where = self.numpy_requirement()
        if want is None or not self.facts.section("packages"):
            return None
        dists = self.facts.packages("numpy")
        if not dists:  # a missing NumPy is what `import torch` itself warns about (numpy-not-available);
            return None  # a facts file may list only some packages (hand-made cases list torch alone)
        have = str(dists[0].get("version") or "")
        if satisfies(have, want) is not False:
            return None
        return f"numpy {have} is installed; torch {self.facts.torch_version} runs with {want} ({where})"

    @property
    def windows_shell(self) -> bool:
        """Whether printed commands are for PowerShell (the facts are from Windows, not WSL)."""
        return self.facts.os == "windows" or (self.facts.os is None and self.os == "windows" and not self.wsl)

    def command(self, *argv: str) -> str:
        """``argv`` as one line for this environment's shell, every word quoted (:func:`shell_command`).
        A ``pip install`` line is counted in :attr:`installs` (a fix that installs something)."""
        from envcheck.edge import shell_command

        if any(a == "pip" and b == "install" for a, b in zip(argv, argv[1:])):
            self.installs += 1
        return shell_command(list(argv), self.windows_shell)

    def py_command(self, *args: str) -> str:
        """``python ARGS…`` with this environment's interpreter, quoted for its shell."""
        return self.command(self.facts.interpreter, *args)

    def install_command(self, plan: Any, reinstall: bool = True) -> str:
        """The plan's own install line (:meth:`Plan.pip_install_args`) with this environment's interpreter."""
        return "`" + self.py_command(*plan.pip_install_args(reinstall)) + "`"

    def pip_command(self, pins: List[str], index_option: str = "", reinstall: bool = True) -> str:
        """``python -m pip install [--force-reinstall] PINS INDEX-OPTION`` in backticks, quoted."""
        words = ["-m", "pip", "install"] + (["--force-reinstall"] if reinstall else []) + list(pins)
        return "`" + self.py_command(*words, *option_words(index_option)) + "`"

    def earliest(self, res: Any, with_code: bool = False, cuda_floor: Optional[str] = None) -> Optional[Any]:
        """The oldest accepted candidate of a resolution (the first release that would work);
        ``with_code``: the oldest whose cubins run on the GPUs (the resolver's own arch fit: an
        exact or same-major cubin, not PTX JIT); ``cuda_floor``: only builds of that CUDA or newer
        (a compiler the build ships — NVRTC, Triton's ptxas — must know the GPU, not only its cubins)."""
        acc = [c for c in res.accepted if c.fit.arch_fit < 2] if with_code else res.accepted
        if cuda_floor:
            acc = [c for c in acc if c.build.cuda and vkey(c.build.cuda) >= vkey(cuda_floor)]
        return min(acc, key=lambda c: vkey(c.release.version)) if acc else None

    def compile_min_torch(self, python: str) -> Optional[str]:
        """The first release whose torch.compile supports Python ``python`` (matrix [release.compile])."""
        want = tuple(int(x) for x in python.rstrip("t").split(".")[:2])
        ok = [r.version for r in self.matrix.releases
              if r.compile_python_max and tuple(int(x) for x in r.compile_python_max.rstrip("t").split(".")[:2]) >= want]
        return min(ok, key=vkey) if ok else None


def satisfies(version: str, requirement: str) -> Optional[bool]:
    """Whether ``version`` (``"2.0.0"``) is in ``requirement``'s range (``"numpy<2"``); ``None`` when
    either cannot be read."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion, Version

    try:
        return Requirement(requirement).specifier.contains(Version(version), prereleases=True)
    except (InvalidVersion, InvalidRequirement):
        return None


def option_words(option: str) -> List[str]:
    """``"--no-index --find-links /my wheels"`` → ``["--no-index", "--find-links", "/my wheels"]``: the
    leading options, then the rest as one word (a folder may hold spaces)."""
    words, rest = [], option.strip()
    while rest.startswith("-"):
        word, _, rest = rest.partition(" ")
        words.append(word)
        rest = rest.strip()
    return words + ([rest] if rest else [])
