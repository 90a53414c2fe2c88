"""conda-forge on its own terms: which conda-forge ``pytorch`` build this machine runs.

The pip plan may choose a release or build conda-forge never shipped (a newer torch, cu132). The
conda route is then not forced onto pip: it gets the newest conda-forge ``pytorch`` (from
``matrices/conda.toml``, read off the feedstock's recipe and CI variants) whose CUDA build the
machine runs, and the ``cuda-version`` to pin:

* the CUDA build's ``cuda-version`` X.Y must be runnable by the driver — the driver at or above the
  CUDA X family's minor-version-compatibility floor (``cuda.toml``), or, with only the driver's
  highest CUDA known, the same major or newer (``cuda-version``'s ``__cuda >=X`` gate, as conda
  itself checks it);
* X.Y must be able to target every NVIDIA GPU served (``first_cuda``/``last_cuda`` of its
  architecture in ``gpus-nvidia.toml``) — the feedstock builds for every architecture its CUDA
  targets, which conda-forge does not list per build (an assumption the file states);
* the Python of the plan, the platform (the ``tegra`` variant for Jetson), and ``--torch``.

Where conda-forge has no build for the GPU at all — ROCm, AMD on WSL, Intel XPU — the answer is
``None`` with the reason, and the environment installs torch with pip inside it (said in the file).
"""

from __future__ import annotations



from envcheck.record import field, record
from envcheck.matrix.model import CondaForgeRow, vkey

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Optional, Tuple

__all__ = ["CondaChoice", "choose_conda", "select_specs"]


@record(frozen=True)
class CondaChoice:
    """A conda-forge build: ``pytorch={torch}`` with ``cuda-version={cuda_version}`` (``None`` for the
    CPU build), for ``python``; ``why`` says how it was picked."""

    row: CondaForgeRow
    torch: str
    cuda_version: Optional[str]
    python: str
    why: str
    assumptions: Tuple[str, ...] = ()
    # the NVIDIA driver this build needs, in the pip plan's shape (``{"vendor", "side", "full", "floor"}``,
    # :func:`conda_driver`), and the caveat when the machine's driver runs it only under minor-version
    # compatibility: environment.yml's and pixi.toml's driver step read these, not the pip plan's
    driver: Dict[str, str] = field(default_factory=dict, hash=False)
    driver_caveat: str = ""
    driver_floor_for: str = ""  # the GPU architectures whose first driver is driver["floor"] (rules.floor_from_gpus)


def _runs(matrix, machine, cv: str) -> Tuple[bool, str]:
    """Whether the machine's driver runs CUDA ``cv`` builds, and what that rests on."""
    from envcheck.resolve.rules import cuda_driver_floors

    windows = machine.os == "windows" or machine.wsl
    if machine.nvidia_driver:
        full, floor = cuda_driver_floors(matrix, cv, windows)
        need = floor or full
        if need is None:
            return False, f"no driver minimum on record for CUDA {cv}"
        return vkey(machine.nvidia_driver) >= vkey(need), f"driver {machine.nvidia_driver} ≥ {need}"
    if machine.cuda_driver_max:
        ok = vkey(machine.cuda_driver_max).release[0] >= vkey(cv).release[0]
        return ok, f"the driver's CUDA {machine.cuda_driver_max} (cuda-version's __cuda >= major gate)"
    return True, "driver not given: assumed to run it (give --driver to check)"


def conda_driver(matrix, machine, cv: str) -> Tuple[Dict[str, str], str, str]:
    """(driver, caveat, the GPUs the floor is from) for a ``cuda-version`` ``cv`` build on ``machine``: the driver range the resolver's
    rule gives CUDA ``cv`` on these GPUs (:func:`envcheck.resolve.rules.driver_range`: full support from
    the first CUDA ``cv`` driver, the family floor under minor-version compatibility), and the caveat
    when the machine's driver is below full support. None on a Jetson: its driver is its JetPack's, as
    the resolver's check_driver says."""
    from envcheck.resolve.rules import driver_range, floor_from_gpus

    if getattr(machine, "tegra", False):
        return {}, "", ""
    windows = machine.os == "windows" or machine.wsl
    gpus = machine.gpus_of("nvidia")
    full, floor, _ = driver_range(matrix, cv, windows, gpus)
    floor_for = floor_from_gpus(matrix, cv, windows, gpus)
    side = "windows" if windows else "linux"
    driver = {k: v for k, v in (("vendor", "nvidia"), ("side", side), ("full", full), ("floor", floor)) if v}
    drv, mx = machine.nvidia_driver, machine.cuda_driver_max
    below = (drv and full and vkey(drv) < vkey(full)) or (not drv and mx and vkey(mx) < vkey(cv))
    if not below or not floor:
        return driver, "", floor_for
    have = f"{side.capitalize()} driver {drv}" if drv else f"the driver (CUDA ≤ {mx})"
    older = f" is older than {full}, the first CUDA {cv} driver;" if drv else ""
    return driver, (f"{have}{older} it runs cuda-version {cv} under CUDA {cv.split('.')[0]}.x minor-version "
                    f"compatibility (≥ {floor}): limited features, no PTX JIT"), floor_for


def _targets(matrix, machine, cv: str) -> bool:
    for g in machine.gpus_of("nvidia"):
        arch = matrix.nv_arch(g.arch) if g.arch else None
        if arch is None:
            continue
        if arch.first_cuda and vkey(cv) < vkey(arch.first_cuda):
            return False
        if arch.last_cuda and vkey(cv) > vkey(arch.last_cuda):
            return False
    return True


def choose_conda(matrix, machine, request, backend: str, python: str, prefer: str = "") -> Tuple[Optional[CondaChoice], str]:
    """The conda-forge build for ``machine`` (the pip plan chose ``backend``: cuda, cpu, mps, rocm, xpu).

    Args:
        python: the Python the user asked for (must match); ``prefer``: the pip plan's Python, used
            when the row has it (else the row's newest).

    Returns:
        ``(choice, "")``, or ``(None, reason)`` where conda-forge has nothing that fits.
    """
    if backend in ("rocm", "xpu") or (machine.wsl and machine.gpus_of("amd")):
        what = "ROCm" if backend == "rocm" or machine.gpus_of("amd") else "Intel XPU"
        return None, f"conda-forge has no {what} build of pytorch"
    cuda = backend == "cuda"
    platform = machine.platform
    tegra = bool(getattr(machine, "tegra", False))
    rows: List[CondaForgeRow] = [r for r in matrix.conda_forge if platform in r.platforms
                                 and (r.arm_variant == "tegra") == (tegra and cuda)]
    best: Optional[CondaChoice] = None
    skipped: List[str] = []
    for row in rows:
        # exact: a free-threaded Python (3.14t) needs a cp314t build, never the GIL one of 3.14
        pys = [p for p in row.python if not python or p == python]
        if not pys:
            continue
        py = python if python else (prefer if prefer in row.python else max(row.python, key=vkey))
        for version in row.torch:
            if request is not None and request.torch is not None and not request.torch.contains(version, prereleases=True):
                continue
            if best is not None and vkey(version) <= vkey(best.torch):
                continue
            if not cuda:
                best = CondaChoice(row, version, None, py, f"the newest conda-forge pytorch for {platform} (CPU build)")
                continue
            fits = []
            for cv in sorted(row.cuda_version, key=vkey, reverse=True):
                ok, basis = _runs(matrix, machine, cv)
                if not ok:
                    skipped.append(f"{version} cuda {cv}: {basis}")
                elif not _targets(matrix, machine, cv):
                    skipped.append(f"{version} cuda {cv}: cannot target the GPU's architecture")
                else:
                    fits.append((cv, basis))
            if fits:
                cv, basis = fits[0]
                assume = ("conda-forge lists no kernel architectures per build: assumed every architecture "
                          f"CUDA {cv} targets",)
                driver, caveat, floor_for = conda_driver(matrix, machine, cv)
                best = CondaChoice(row, version, cv, py, f"the newest conda-forge pytorch with a CUDA build this "
                                   f"machine runs: cuda-version {cv} ({basis})", assume, driver, caveat, floor_for)
    if best is None:
        if python.endswith("t") and not any(python in r.python for r in rows):
            why = (f"conda-forge has no free-threaded (Python {python}) build of pytorch (matrices/conda.toml); "
                   "the free-threaded interpreter comes from conda-forge")
        elif cuda:
            why = "no conda-forge CUDA build of pytorch fits" + (f" ({'; '.join(skipped[:3])})" if skipped else "")
        else:
            why = f"conda-forge has no pytorch for {platform}" + (f" and Python {python}" if python else "")
        if request is not None and request.torch is not None:
            why += f" within --torch {request.torch_text}"
        return None, why
    return best, ""


def select_specs(matrix, machine, choice: Optional[CondaChoice], python: str) -> List[str]:
    """The match specs an environment names beside pytorch (``[[conda_select]]`` of conda.toml):
    ``python-freethreading`` for a free-threaded Python, the ``arm-variant`` of a linux-aarch64 CUDA
    build (Tegra for a Jetson, SBSA otherwise), … — whether pytorch comes from conda-forge (``choice``)
    or from pip inside the environment (``None``)."""
    facts = {
        "free_threaded": python.endswith("t"),
        "platform": machine.platform,
        "cuda": bool(choice is not None and choice.cuda_version),
        "cuda_major": int(choice.cuda_version.split(".")[0]) if choice is not None and choice.cuda_version else None,
        "arm_variant": choice.row.arm_variant if choice is not None else None,
    }
    out: List[str] = []
    for row in matrix.conda_selects:
        if all(facts.get(k) == v for k, v in row.when.items()):
            out += [s for s in row.specs if s not in out]
    return out
