"""The constraints every candidate is checked against — all of them, never stopping at the first.

Each ``check_*`` function reads one candidate and the :class:`Context` and appends reasons
(``severity="error"`` rejects, ``"warning"`` accepts with a caveat) and records ranking facts
with ``candidate.note(...)`` (a frozen :class:`~envcheck.resolve.types.Fit`). The facts they
apply (kernel lists, driver floors, glibc floors, WSL support)
all come from the matrix; the *rules* below are the general laws those facts obey:

* NVIDIA binary compatibility (NVIDIA, "CUDA Compatibility" and the Blackwell compatibility
  guide): a cubin built for ``sm_XY`` runs on compute capability X.Z with Z ≥ Y (same major);
  PTX for ``compute_XY`` JIT-compiles for any newer GPU, but only on a driver that fully supports
  the toolkit the PTX came from (minor-version compatibility does not cover PTX JIT).
  Arch-specific targets (``sm_90a``) run only on that exact GPU.
* PTX does not carry a build across a toolkit that predates the GPU's architecture (the arch's
  ``first_cuda``, matrices/cuda.toml): PTX JIT reaches torch's own kernels only, and the cuDNN/cuBLAS
  it bundles for its toolkit have no code for the newer architecture (NVIDIA's Blackwell compatibility
  guide: applications built with CUDA ≤ 12.7 need their libraries rebuilt for Blackwell; cuDNN's
  support matrix lists each architecture per CUDA build; pytorch/pytorch#153944: "CUDA-11.8 does not
  support Blackwell GPUs, one needs to use 12.8", a Windows cu118 build with compute_37 PTX on an
  RTX 5080; #146977, #149845). Such a build is rejected, never ranked; a same-major cubin from a
  predating toolkit still runs (binary compatibility) and ranks last.
* NVIDIA driver: full support from the toolkit's own driver; within a CUDA major, an older driver
  down to the family floor runs the build under minor-version compatibility (a warning).
* AMD: a ``gfxNNNN`` target runs only its own code object; there is no forward compatibility.
* glibc: a manylinux wheel needs glibc ≥ the floor its tag names (PEP 600 / 599).
"""

from __future__ import annotations

import re
from functools import lru_cache

from envcheck.record import field, record
from envcheck.machine.model import GpuDevice, Machine
from envcheck.matrix import Matrix
from envcheck.matrix.model import BlasGap, Build, Companion, CudnnFloor, Release, python_key, vkey
from envcheck.resolve.types import Candidate, Request

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar

OS_NAMES = {"linux": "Linux", "windows": "Windows", "macos": "macOS"}
BACKEND_NAMES = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "mps": "MPS", "cpu": "CPU"}
VENDOR_BACKEND = {"nvidia": "cuda", "amd": "rocm", "intel": "xpu", "apple": "mps"}
VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple"}
if TYPE_CHECKING:  # pragma: no cover
    T = TypeVar("T")


@record
class Context:
    """The inputs every check reads (all immutable during one resolve).

    What the checks ask of the machine for every candidate is worked out once, here:

    Attributes:
        platform: the machine's platform key (``linux-x86_64``).
        windows_driver: the NVIDIA driver is a Windows one (native Windows, or WSL2 where the host
            driver is used).
        served_gpus: :attr:`Machine.served_gpus`.

    and what they ask of the matrix for many candidates alike, once per question (:meth:`once`).
    """

    matrix: Matrix
    machine: Machine
    request: Request
    platform: str = field(init=False)
    windows_driver: bool = field(init=False)
    served_gpus: List[GpuDevice] = field(init=False)
    _answers: Dict[tuple, object] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.platform = self.machine.platform
        self.windows_driver = self.machine.os == "windows" or self.machine.wsl
        self.served_gpus = self.machine.served_gpus
        self._answers = {}

    def once(self, key: tuple, work: Callable[[], T]) -> T:
        """``work()``, worked out once per ``key`` for this resolve (its inputs never change during one)."""
        try:
            return self._answers[key]  # type: ignore[return-value]
        except KeyError:
            answer = self._answers[key] = work()
            return answer


# -- formatting helpers ---------------------------------------------------------------------

def name_of(c: Candidate) -> str:
    """``torch 2.7.0+cu128`` (``torch 2.7.0`` for PyPI builds)."""
    if c.build.channel == "pypi":
        oses = sorted({OS_NAMES.get(p.split("-")[0], p) for p in c.build.platforms})
        return f"torch {c.release.version} (the {'/'.join(oses)} wheel on PyPI)"
    if not c.build.local_label:
        return f"torch {c.release.version} ({c.build.variant}, {c.build.channel})"
    pin = c.build.pins.get("torch", "")
    if pin.startswith(f"{c.release.version}+"):  # the file's own label (AMD's +rocm7.2.1.lw.git…): as every pin says
        return f"torch {pin}"
    return f"torch {c.release.version}+{c.build.variant}"


def py_span(pys: Sequence[str]) -> str:
    """``["3.9", "3.10", "3.11", "3.13t"]`` → ``"3.9–3.11, 3.13t"``."""
    gil = sorted((p for p in pys if not p.endswith("t")), key=python_key)
    ft = sorted((p for p in pys if p.endswith("t")), key=python_key)
    parts = []
    if gil:
        parts.append(gil[0] if len(gil) == 1 else f"{gil[0]}–{gil[-1]}")
    parts.extend(ft)
    return ", ".join(parts) or "none"


@lru_cache(maxsize=1024)
def _cap(sm: str) -> Tuple[int, int, bool]:
    """``sm_86`` → (8, 6, False); ``sm_90a`` → (9, 0, True) — arch-specific; ``compute_120`` too."""
    mt = re.fullmatch(r"(?:sm|compute)_(\d+?)(\d)([af]?)", sm)
    if not mt:
        raise ValueError(sm)
    return int(mt.group(1)), int(mt.group(2)), bool(mt.group(3))


def arch_serves(
    sm: Sequence[str], ptx: Sequence[str], major: int, minor: int
) -> Tuple[List[str], List[Tuple[int, str]], List[Tuple[int, str]]]:
    """Which of a kernel list's entries run on compute capability ``major.minor``.

    Args:
        sm: cubin targets (``sm_80``, ``sm_90a``); ptx: PTX targets (``compute_90``).

    Returns:
        ``(exact, compatible, ptx)``: cubins built for exactly this capability; ``(minor, sm)``
        cubins of the same major with a lower or equal minor (not arch-specific); ``(cc, compute_XY)``
        PTX at or below the capability (JIT-compiled at first use). All empty = nothing runs.
        Shared by the resolver and ``envcheck verify``'s arch check.
    """
    exact, compatible, jit = _arch_serves(tuple(sm), tuple(ptx), major, minor)
    return list(exact), list(compatible), list(jit)


@lru_cache(maxsize=4096)
def _arch_serves(sm: Tuple[str, ...], ptx: Tuple[str, ...], major: int, minor: int) -> Tuple[
        Tuple[str, ...], Tuple[Tuple[int, str], ...], Tuple[Tuple[int, str], ...]]:
    """:func:`arch_serves` once per kernel list and capability (builds share their lists)."""
    cubins = [_cap(s) + (s,) for s in sm]
    exact = tuple(s for ma, mi, sp, s in cubins if (ma, mi) == (major, minor))
    compatible = tuple((mi, s) for ma, mi, sp, s in cubins if ma == major and mi <= minor and not sp)
    jit = tuple((ma * 10 + mi, p) for ma, mi, sp, p in (_cap(p) + (p,) for p in ptx)
                if ma * 10 + mi <= major * 10 + minor and not sp)
    return exact, compatible, jit


def _list(xs: Sequence[str], limit: int = 12) -> str:
    xs = list(xs)
    return ", ".join(xs if len(xs) <= limit else xs[:limit] + [f"… ({len(xs)} in all)"])


# -- checks ---------------------------------------------------------------------------------

def check_torch_spec(c: Candidate, ctx: Context) -> None:
    spec = ctx.request.torch
    if spec is not None and not spec.contains(c.release.version, prereleases=True):
        c.add("torch", f"torch {c.release.version} does not match --torch {ctx.request.torch_text}")


def check_platform(c: Candidate, ctx: Context) -> None:
    m = ctx.machine
    if m.python_bits == 32:
        c.add("python", f"32-bit Python: {name_of(c)} has no 32-bit wheel — PyTorch publishes 64-bit "
                        "wheels only; install a 64-bit Python")
        return
    if ctx.platform in c.build.platforms:
        return
    same_os = [p for p in c.build.platforms if p.split("-")[0] == m.os]
    if same_os:
        c.add("arch", f"{name_of(c)} is built for {', '.join(same_os)}, not {ctx.platform}")
    else:
        oses = sorted({OS_NAMES.get(p.split('-')[0], p) for p in c.build.platforms})
        c.add("os", f"{name_of(c)} is built for {' and '.join(oses)} only, not "
                    f"{OS_NAMES.get(m.os, m.os)}")


def build_pythons(c: Candidate, platform: str) -> Sequence[str]:
    """Pythons with a wheel of this build on ``platform`` (the build's list, else the release's)."""
    return pythons_of(c.release, c.build, platform)


def pythons_of(release: Release, build: Build, platform: str) -> Sequence[str]:
    """:func:`build_pythons` of a (release, build) pair."""
    if build.python is not None:
        return build.python
    return release.python.get(platform, ())


def wheel_pythons(matrix: Matrix, c: Candidate, platform: str, pins: Mapping[str, str]) -> Tuple[str, ...]:
    """The Pythons every pinned wheel of the plan has on ``platform``: the build's list, narrowed by
    each pinned companion's row in matrices/companions.toml (the rows :func:`check_companions` reads);
    a companion without a row, or without this platform, narrows nothing."""
    pys = list(build_pythons(c, platform))
    for pkg, ver in pins.items():
        row = matrix.companions.get((pkg, ver.split("+")[0])) if pkg != "torch" else None
        if row is None or row.any or platform not in row.python:
            continue
        pys = [p for p in pys if p in row.python[platform]]
    return tuple(sorted(pys, key=python_key))


def python_run(pys: Sequence[str], python: str) -> Optional[Tuple[str, str]]:
    """(lowest, highest) of the unbroken run of GIL Pythons in ``pys`` that holds ``python`` (its GIL
    version for a free-threaded one): ``["3.10", "3.11", "3.13"]``, ``"3.11"`` → ("3.10", "3.11").
    ``None`` when ``python`` is not among them."""
    gil = sorted({p for p in pys if not p.endswith("t")}, key=python_key)
    want = python.rstrip("t")
    if want not in gil:
        return None
    i = j = gil.index(want)

    def next_to(a: str, b: str) -> bool:
        ka, kb = python_key(a), python_key(b)
        return ka[0] == kb[0] and kb[1] == ka[1] + 1

    while i > 0 and next_to(gil[i - 1], gil[i]):
        i -= 1
    while j + 1 < len(gil) and next_to(gil[j], gil[j + 1]):
        j += 1
    return gil[i], gil[j]


def span_spec(low: str, high: str) -> str:
    """``("3.10", "3.14")`` → ``>=3.10,<3.15``; ``("3.12", "3.12")`` → ``==3.12.*``."""
    if low == high:
        return f"=={low}.*"
    major, minor, _ = python_key(high)
    return f">={low},<{major}.{minor + 1}"


def check_python(c: Candidate, ctx: Context) -> None:
    if c.python is None or ctx.platform not in c.build.platforms or ctx.machine.python_bits == 32:
        return
    pys = build_pythons(c, ctx.platform)
    if c.python in pys:
        before = ctx.once(("previous pythons", c.release.version), lambda: _previous_pythons(c.release, ctx))
        c.note(python_new=before is not None and c.python not in before)
        return
    if c.python.endswith("t"):
        c.add("python", f"{name_of(c)} has no free-threaded Python {c.python} wheel (it has "
                        f"{py_span(pys)})")
    else:
        c.add("python", f"{name_of(c)} has no wheel for Python {c.python} (it has {py_span(pys)})")


def _previous_pythons(release: Release, ctx: Context) -> Optional[Sequence[str]]:
    """The Pythons the release before ``release`` has on the machine's platform (``None``: no such release)."""
    prev = ctx.matrix.previous_release(release.version)
    return prev.python.get(ctx.platform, ()) if prev is not None else None


def check_glibc(c: Candidate, ctx: Context) -> None:
    m = ctx.machine
    if m.os != "linux" or ctx.platform not in c.build.platforms:
        return
    tag = c.build.wheel_tag.get(ctx.platform, "")
    floor = ctx.matrix.glibc_floor(tag) or c.build.glibc
    c.note(glibc_floor=floor)
    if floor and m.glibc and vkey(m.glibc) < vkey(floor):
        distro = f" ({m.distro_name or m.distro})" if (m.distro_name or m.distro) else ""
        built = f"are {tag} and need" if ctx.matrix.glibc_floor(tag) else f"({tag}) are built for"
        c.add("glibc", f"{name_of(c)} wheels {built} glibc ≥ {floor}; this machine has "
                       f"glibc {m.glibc}{distro}")


def check_rocm_os(c: Candidate, ctx: Context) -> None:
    """A ROCm build on a Linux distribution AMD does not support that ROCm release on (platforms.toml
    [[rocm_os]]): the recipe's kernel-driver step (amdgpu-install) has no packages there — a warning,
    which also ranks a ROCm release whose list has the distribution first."""
    m, b = ctx.machine, c.build
    if b.backend != "rocm" or not b.rocm or m.os != "linux" or m.wsl or not m.distro:
        return
    row = ctx.matrix.rocm_os.get(".".join(b.rocm.split(".")[:2]))
    if row is None or m.distro in row.distros:
        return
    c.add("os", f"AMD supports ROCm {row.rocm} on {_list(_distro_names(ctx, row.distros))}, not on "
                f"{m.distro_name or _distro_names(ctx, [m.distro])[0]}: amdgpu-install (the kernel-driver step) has no "
                "packages for it, so the GPU needs a kernel driver of its own that serves it (platforms.toml "
                "[[rocm_os]])", "warning")


def _distro_names(ctx: Context, ids: Sequence[str]) -> List[str]:
    names = {d.id: d.name for d in ctx.matrix.distros}
    return list(dict.fromkeys(names.get(i, i) for i in ids))


def check_macos(c: Candidate, ctx: Context) -> None:
    m = ctx.machine
    if m.os != "macos" or ctx.platform not in c.build.platforms:
        return
    tag = c.build.wheel_tag.get(ctx.platform, "")
    floor = ctx.matrix.macos_floor(tag)
    c.note(macos_floor=floor)
    if floor and m.macos and vkey(m.macos) < vkey(floor):
        c.add("macos", f"{name_of(c)} wheels are {tag} and need macOS ≥ {floor}; this Mac runs "
                       f"{m.macos}")
    apple = m.gpus_of("apple") + m.gpus_of("amd")  # MPS serves both on macOS
    mps_min = c.build.mps_min_macos
    if c.build.mps and apple and mps_min and m.macos and vkey(m.macos) < vkey(mps_min):
        if ctx.request.backend == "cpu":
            return
        c.add("macos", f"MPS (the Apple GPU backend) in {name_of(c)} needs macOS ≥ {mps_min}; this "
                       f"Mac runs {m.macos}, so torch would use the CPU only")


def check_backend_request(c: Candidate, ctx: Context) -> None:
    want = ctx.request.backend
    b = c.build
    if want == "auto":
        return
    ok = {
        "cpu": b.backend in ("cpu", "mps"),
        "mps": b.mps,
        "xpu": b.variant == "xpu",
        "cuda": b.backend == "cuda",
        "rocm": b.backend == "rocm",
    }.get(want)
    if ok is None:  # an exact variant: cu128, rocm6.3 (rocm6.4 also matches rocm6.4.1)
        ok = b.variant == want or b.variant.startswith(want + ".")
    if not ok:
        c.add("backend", f"--backend {want}: this is the {b.variant} build "
                         f"({BACKEND_NAMES.get(b.backend, b.backend)})")


def check_wsl(c: Candidate, ctx: Context) -> None:
    m = ctx.machine
    b = c.build
    if not m.wsl:
        if b.wsl and m.os == "linux":
            c.add("wsl", f"{name_of(c)} is AMD's wheel set for ROCm on WSL; on native Linux the "
                         "ROCm builds from download.pytorch.org are the supported ones")
        return
    if b.backend == "rocm" and not b.wsl:
        c.add("wsl", f"{name_of(c)} (download.pytorch.org) does not run under WSL: it bundles its own "
                     "libhsa-runtime64.so, which cannot reach the GPU through /dev/dxg; AMD publishes "
                     "WSL wheels (repo.radeon.com) for that")
        return
    if b.wsl and b.rocm:
        rel = ctx.matrix.rocm_wsl_release(b.rocm)
        if rel is None:
            c.add("wsl", f"no ROCm-on-WSL support is on record for ROCm {b.rocm}")
            return
        c.note(wsl_release=rel)
        for g in m.gpus_of("amd"):
            if g.arch not in rel.gfx:
                c.add("wsl", f"ROCm {rel.rocm} on WSL supports {_list(rel.gfx)}; not {g.arch} "
                             f"({g.name})")
        if rel.adrenalin_min and m.amd_driver and vkey(m.amd_driver) < vkey(rel.adrenalin_min):
            c.add("driver", f"AMD Windows driver {m.amd_driver} is older than {rel.adrenalin_min}, "
                            f"the Adrenalin release ROCm {rel.rocm} on WSL needs")


def check_tegra(c: Candidate, ctx: Context) -> None:
    """Jetson (Tegra) boards run NVIDIA's JetPack builds; from a GPU's ``sbsa_from_cuda`` on
    (Thor: CUDA 13) the standard aarch64 CUDA builds too. JetPack builds run nowhere else."""
    m, b = ctx.machine, c.build
    if not m.tegra:
        if b.tegra:
            c.add("tegra", f"{name_of(c)} is NVIDIA's JetPack build: it runs only on a Jetson")
        return
    if b.tegra:
        built = ctx.matrix.jetpack_of_channel(b.channel)
        have = ctx.matrix.jetpack_of_machine(m.jetpack, m.distro)
        if built and have and built.major != have.major:
            c.add("tegra", f"{name_of(c)} is built for JetPack {built.major} (L4T R{built.l4t}, "
                           f"{built.distro}); this Jetson runs JetPack {have.major} (L4T R{have.l4t})")
        return
    if b.backend != "cuda":
        return
    for g in m.gpus_of("nvidia"):
        row = ctx.matrix.nv_arch(g.arch)
        start = row.sbsa_from_cuda if row else ""
        if not start:
            c.add("tegra", f"the {g.name} (Jetson, {g.arch}) runs only NVIDIA's JetPack builds; "
                           f"{name_of(c)} is built for desktop/server GPUs")
        elif b.cuda and vkey(b.cuda) < vkey(start):
            c.add("tegra", f"the {g.name} (Jetson) runs standard aarch64 CUDA builds only from CUDA "
                           f"{start}; {name_of(c)} is CUDA {b.cuda}")


def driver_floors(c: Candidate, ctx: Context) -> Tuple[Optional[str], Optional[str]]:
    """(toolkit driver = full support, minor-version-compatibility floor) for a CUDA build.

    Either may be ``None`` when the matrix has no row (the caller says so).
    """
    return cuda_driver_floors(ctx.matrix, c.build.cuda or "", ctx.windows_driver)


def cuda_driver_floors(matrix: Matrix, cuda: str, windows: bool) -> Tuple[Optional[str], Optional[str]]:
    """(full-support driver, minor-version-compatibility floor) for CUDA ``cuda`` (``"12.8.1"`` or
    ``"12.8"``) on a Linux or Windows driver (WSL uses the Windows one); ``None`` where the
    matrix (cuda.toml) has no row. Full support starts at the first driver of the build's CUDA
    major.minor (its GA toolkit driver, :meth:`Matrix.first_toolkit`), not at the driver an update
    release bundles: minor-version compatibility is for a driver of an older major.minor (cuda.toml).
    Shared by the resolver and ``envcheck verify``."""
    tk = matrix.first_toolkit(cuda) if cuda else None
    fam = matrix.family(cuda) if cuda else None
    full = (tk.driver_windows if windows else tk.driver_linux) if tk else None
    floor = (fam.floor_windows if windows else fam.floor_linux) if fam else None
    return full or None, floor or None


def driver_branch(version: str) -> int:
    """The driver branch a build belongs to: ``470`` for 470.256.02 and for Windows' 472.12
    (a branch's Windows builds number past it; see the ``driver_last_branch`` notes in cuda.toml)."""
    return (vkey(version).release[0] // 10) * 10


@record(frozen=True)
class GpuDriverBounds:
    """What the GPUs themselves ask of an NVIDIA driver (matrices/cuda.toml ``[[arch]]``).

    Attributes:
        low: the lowest driver build known to drive every GPU (``driver_min_*``), or ``None``.
        last_branch: the last driver branch that drives all of them (``driver_last_branch``: "470"
            for Kepler, "580" for Maxwell/Pascal/Volta), or ``None`` while all are still supported.
        who: the GPU the last branch comes from, for messages (``Tesla K80 (Kepler)``).
    """

    low: Optional[str] = None
    last_branch: Optional[str] = None
    who: str = ""


def gpu_driver_bounds(matrix: Matrix, gpus: Sequence[GpuDevice], windows: bool) -> GpuDriverBounds:
    """The driver range the NVIDIA GPUs in ``gpus`` allow (the highest floor, the lowest last branch)."""
    low: Optional[str] = None
    last: Optional[str] = None
    who = ""
    for g in gpus:
        row = matrix.nv_arch(g.arch) if g.vendor == "nvidia" else None
        if row is None:
            continue
        floor = row.driver_min_windows if windows else row.driver_min_linux
        if floor and (low is None or vkey(floor) > vkey(low)):
            low = floor
        if row.driver_last_branch and (last is None or int(row.driver_last_branch) < int(last)):
            last = row.driver_last_branch
            who = f"{g.name[:-1]}, {row.family})" if g.name.endswith(")") else f"{g.name} ({row.family})"
    return GpuDriverBounds(low=low, last_branch=last, who=who)


def driver_range(matrix: Matrix, cuda: str, windows: bool,
                 gpus: Sequence[GpuDevice] = ()) -> Tuple[Optional[str], Optional[str], GpuDriverBounds]:
    """(full-support driver, minor-version-compatibility floor, the GPUs' bounds) for a CUDA build on
    these GPUs: each floor is the higher of the CUDA one and the GPUs' (a 525 driver runs CUDA 12.8
    under minor-version compatibility, but drives no Blackwell GPU). One rule for plan, verify, explain."""
    full, floor = cuda_driver_floors(matrix, cuda, windows)
    bounds = gpu_driver_bounds(matrix, gpus, windows)
    if bounds.low:
        if full and vkey(full) < vkey(bounds.low):
            full = bounds.low
        if floor and vkey(floor) < vkey(bounds.low):
            floor = bounds.low
    return full, floor, bounds


def floor_from_gpus(matrix: Matrix, cuda: str, windows: bool, gpus: Sequence[GpuDevice]) -> str:
    """``"sm_120"``: the architectures whose first driver (cuda.toml [[arch]] ``driver_min_*``) is the
    minor-version-compatibility floor because it is above CUDA's own; ``""`` when CUDA's floor stands.
    Messages say so instead of calling 570.86.10 'the minor-version-compatibility floor' (newcomer4 #10)."""
    _, cuda_floor = cuda_driver_floors(matrix, cuda, windows)
    bounds = gpu_driver_bounds(matrix, gpus, windows)
    if not bounds.low or (cuda_floor and vkey(cuda_floor) >= vkey(bounds.low)):
        return ""
    archs = [g.arch for g in gpus for row in [matrix.nv_arch(g.arch) if g.vendor == "nvidia" else None]
             if row is not None and (row.driver_min_windows if windows else row.driver_min_linux) == bounds.low]
    return ", ".join(dict.fromkeys(archs))


def check_driver(c: Candidate, ctx: Context) -> None:
    """NVIDIA driver vs the CUDA the build was made with and the GPUs it must drive; records
    ``fit.driver``, the floors, and the last driver branch when the GPUs' caps the range."""
    b = c.build
    m = ctx.machine
    if b.backend != "cuda" or not b.cuda or b.tegra or m.tegra:
        # A Jetson's driver is its JetPack's (the L4T BSP: Thor's JetPack 7 reports 580.00), not on the
        # desktop/data-center scale; which JetPack a build needs is check_gpus' (sbsa_from_cuda) and
        # the tegra rule's (the build's JetPack generation)
        return
    cuda = b.cuda
    full, floor, bounds = ctx.once(("driver range", cuda), lambda: driver_range(
        ctx.matrix, cuda, ctx.windows_driver, [g for g in ctx.served_gpus if g.vendor == "nvidia"]))
    c.note(driver_full=full, driver_floor=floor)
    cuda_mm = ".".join(b.cuda.split(".")[:2])
    major = b.cuda.split(".")[0]
    drv = m.nvidia_driver
    side = "Windows" if ctx.windows_driver else "Linux"
    last = bounds.last_branch
    if last and (full or floor) and driver_branch(full or floor or "0") > int(last):
        # full support needs a driver past the GPU's last branch: only minor-version compatibility
        # (a floor on that branch) can run this build — or nothing can
        c.note(driver_last_branch=last)
        if floor and full and driver_branch(floor) <= int(last):
            if drv is None and not m.cuda_driver_max:
                c.note(driver="minor")
                c.add("driver", f"the {bounds.who} is driven only up to the R{last} driver branch: stay on "
                                f"{last}.xx (≥ {floor}) — {name_of(c)} then runs under CUDA {major}.x "
                                f"minor-version compatibility (limited features, no PTX JIT); full support "
                                f"needs ≥ {full}, past that branch", "warning")
                return
        else:
            c.note(driver="fail")
            c.add("driver", f"{name_of(c)} needs an NVIDIA {side} driver ≥ {floor or full} (CUDA {cuda_mm}), "
                            f"but the {bounds.who} is driven only up to the R{last} driver branch")
            return
    if drv is None and m.cuda_driver_max:
        mx = vkey(m.cuda_driver_max)
        if vkey(cuda_mm) <= mx:
            c.note(driver="full")
        elif floor and mx.release[0] == vkey(cuda_mm).release[0]:
            c.note(driver="minor")
            c.add("driver", f"the driver supports CUDA ≤ {m.cuda_driver_max}; CUDA {cuda_mm} runs "
                            "under minor-version compatibility (limited features, no PTX JIT)",
                  "warning")
        else:
            c.note(driver="fail")
            c.add("driver", f"the driver supports CUDA ≤ {m.cuda_driver_max}; {name_of(c)} needs "
                            f"CUDA {cuda_mm}" + (f" (driver ≥ {floor})" if floor else ""))
        return
    if drv is None:
        c.note(driver="unknown")
        return
    if bounds.low and vkey(drv) < vkey(bounds.low):
        # the driver cannot drive the GPU at all (check_gpus says so); measure it against CUDA's own floors
        full, floor = cuda_driver_floors(ctx.matrix, b.cuda, ctx.windows_driver)
        if (floor and vkey(drv) >= vkey(floor)) or (not floor and full and vkey(drv) >= vkey(full)):
            c.note(driver="fail")
            return
    if full is None and floor and vkey(drv) >= vkey(floor):
        c.note(driver="full")  # NVIDIA lists no toolkit driver here (Windows, CUDA ≥ 13.0)
        return
    if full is None and floor is None:
        c.note(driver="unknown")
        c.add("unverified", f"no driver minimum on record for CUDA {b.cuda}", "warning")
        return
    if full and vkey(drv) >= vkey(full):
        c.note(driver="full")
    elif floor and vkey(drv) >= vkey(floor):
        c.note(driver="minor")
        c.add("driver", f"{side} driver {drv} is older than {full}, the first CUDA {cuda_mm} driver; "
                        f"it runs this CUDA {b.cuda} build under CUDA {major}.x minor-version compatibility "
                        f"(≥ {floor}): limited features, no PTX JIT", "warning")
    else:
        c.note(driver="fail")
        if floor:
            tail = f"; CUDA {cuda_mm} is fully supported from {full}" if full else ""
            c.add("driver", f"{side} driver {drv} is too old for CUDA {cuda_mm}: any CUDA {major}.x "
                            f"build needs ≥ {floor} (minor-version compatibility floor){tail}")
        else:
            c.add("driver", f"{side} driver {drv} is too old for CUDA {cuda_mm}: it needs ≥ {full} "
                            f"(CUDA {major}.x has no minor-version compatibility)")


def _nvidia_arch(c: Candidate, ctx: Context, g: GpuDevice) -> None:
    b = c.build
    cap = g.compute_capability
    if cap is None or ctx.matrix.nv_arch(g.arch) is None:
        c.add("gpu-arch", f"{g.arch} ({g.name}) is not an NVIDIA architecture envcheck knows "
                          "(matrices/cuda.toml [[arch]])")
        return
    major, minor = cap
    if not b.sm and not b.ptx:
        c.add("unverified", f"{name_of(c)} has no sourced kernel list yet: envcheck does not guess "
                            f"whether it serves {g.arch} (`envcheck matrix status` lists such gaps)")
        return
    exact, compatible, ptx = arch_serves(b.sm, b.ptx, major, minor)
    arch_row = ctx.matrix.nv_arch(g.arch)
    fit = c.fit.arch_fit
    if exact:
        c.note(arch_fit=max(fit, 0))
        return
    if compatible:
        c.note(arch_fit=max(fit, 1))
        best = max(compatible)[1]
        if arch_row and arch_row.first_cuda and b.cuda and vkey(b.cuda) < vkey(arch_row.first_cuda):
            c.note(arch_predates=True)
            c.add("gpu-arch", f"{name_of(c)} was built with CUDA {b.cuda}, before {g.arch} existed "
                              f"(CUDA ≥ {arch_row.first_cuda}): the {g.name} runs its {best} cubins "
                              "(binary compatible within a major), with no code tuned for it",
                  "warning")
        return
    if ptx:
        c.note(arch_fit=max(fit, 2))
        src = max(ptx)[1]
        if arch_row and arch_row.first_cuda and b.cuda and vkey(b.cuda) < vkey(arch_row.first_cuda):
            # PTX JIT reaches only torch's own kernels: the cuDNN/cuBLAS the build bundles for its
            # toolkit carry no code for an architecture that toolkit predates (see the module docstring)
            c.add("gpu-arch", f"{name_of(c)} has no {g.arch} cubin and was built with CUDA {b.cuda}, before "
                              f"{g.arch} ({g.name}) existed: its {src} PTX would JIT only torch's own kernels, "
                              f"while the cuDNN/cuBLAS it bundles for CUDA {b.cuda} have no code for {g.arch}; "
                              f"{g.arch} needs a build made with CUDA ≥ {arch_row.first_cuda}")
            return
        if c.fit.driver == "minor":
            full = c.fit.driver_full
            c.add("driver", f"only PTX ({src}) serves {g.arch} ({g.name}) in {name_of(c)}, and PTX "
                            f"JIT needs the full CUDA {b.cuda} driver (≥ {full}); minor-version "
                            "compatibility does not cover PTX JIT")
            return
        c.add("gpu-arch", f"{name_of(c)} has no {g.arch} cubin: the {g.name} JIT-compiles its {src} "
                          "PTX at first use (slow first start)", "warning")
        return
    cubins = [_cap(sm) + (sm,) for sm in b.sm]  # nothing runs: say why
    oldest = min(cubins)[3] if cubins else None
    if oldest and (major, minor) < min(cubins)[:2]:
        why = f"{g.arch} is older than the oldest arch it carries ({oldest})"
    else:
        why = "cubins run only on the same major with an equal or higher minor, PTX only forward"
    has = _list(b.sm) + (f" + PTX {_list(b.ptx)}" if b.ptx else "")
    hint = ""
    if arch_row and arch_row.first_cuda and b.cuda and vkey(b.cuda) < vkey(arch_row.first_cuda):
        hint = f"; {g.arch} needs a build made with CUDA ≥ {arch_row.first_cuda}"
    c.add("gpu-arch", f"{name_of(c)} carries {has}; nothing in it runs on {g.arch} ({g.name}, "
                      f"compute capability {major}.{minor}): {why}{hint}")


@record(frozen=True)
class DriverProblem:
    """Why the machine's NVIDIA driver cannot drive a GPU at all.

    Attributes:
        kind: ``too_old`` (the branch predates the architecture) or ``too_new`` (the
            architecture moved to a legacy branch this driver is past).
        message: the sentence for the user.
        branch: for ``too_new``, the last driver branch that drives the GPU.
    """

    kind: str
    message: str
    branch: Optional[str] = None


def gpu_driver_problem(ctx: Context, g: GpuDevice) -> Optional[DriverProblem]:
    """Why the machine's NVIDIA driver cannot drive ``g`` at all, or ``None``.

    The range is the architecture's (matrices/cuda.toml ``driver_min_*``, ``driver_last_branch``):
    NVIDIA adds an architecture in one driver branch and moves it to a legacy branch later. A
    branch spans its Windows builds too (their numbers run past the branch number; see the
    ``driver_last_branch`` notes in cuda.toml), so branch = major rounded down to the ten.
    """
    drv = ctx.machine.nvidia_driver
    row = ctx.matrix.nv_arch(g.arch)
    if row is None or ctx.machine.tegra:
        return None
    side = "Windows" if ctx.windows_driver else "Linux"
    low = row.driver_min_windows if ctx.windows_driver else row.driver_min_linux
    mx = ctx.machine.cuda_driver_max
    if not drv and mx and low:
        # only the CUDA version the driver supports is known ("found version 12040"): that driver is
        # older than the toolkit driver of the next CUDA release, so it cannot drive a GPU whose first
        # driver is at or past that one
        newer = [t for t in ctx.matrix.toolkits if vkey(".".join(t.version.split(".")[:2])) > vkey(mx)]
        nxt = next((d for t in newer for d in [t.driver_windows if ctx.windows_driver else t.driver_linux] if d), None)
        if nxt and vkey(low) >= vkey(nxt):
            return DriverProblem("too_old", f"a {side} driver that supports CUDA ≤ {mx} (older than {nxt}, the "
                                            f"CUDA {newer[0].version} toolkit driver) cannot drive the {g.name}: "
                                            f"{row.family} ({g.arch}) is supported from {low}")
    if not drv:
        return None
    if low and vkey(drv) < vkey(low):
        return DriverProblem("too_old", f"{side} driver {drv} cannot drive the {g.name}: {row.family} "
                                        f"({g.arch}) is supported from {low}")
    last = row.driver_last_branch
    if last and (vkey(drv).release[0] // 10) * 10 > int(last):
        return DriverProblem("too_new", f"{side} driver {drv} no longer drives the {g.name}: R{last} is the "
                                        f"last driver branch for {row.family} ({g.arch}); install an R{last} "
                                        "driver", branch=str(last))
    return None


def _nvidia_driver_for_gpu(c: Candidate, ctx: Context, g: GpuDevice) -> None:
    if c.build.tegra:
        return
    problem = ctx.once(("driver problem", id(g)), lambda: gpu_driver_problem(ctx, g))
    if problem:
        c.add("driver", problem.message)


def _mps_serves(b: Build, ctx: Context) -> bool:
    """An MPS build on a Mac whose GPUs are all Apple's or AMD's: MPS runs on Apple silicon and, on
    Intel Macs, on Metal-capable AMD GPUs (Apple's "Accelerated PyTorch training on Mac" page);
    PyTorch's last macOS x86_64 wheels are 2.2.x (the data says so)."""
    return ctx.machine.os == "macos" and b.mps and all(g.vendor in ("apple", "amd") for g in ctx.served_gpus)


def _cpu_only(b: Build, ctx: Context) -> bool:
    """A build that runs on the CPU alone here (an MPS build without an Apple GPU too)."""
    return b.backend == "cpu" or (b.backend == "mps" and not ctx.machine.gpus_of("apple"))


def check_gpu_backend(c: Candidate, ctx: Context) -> None:
    """The build's backend must be the one the served GPUs' vendor needs (a CUDA build for NVIDIA GPUs…),
    and a GPU build needs a GPU to serve. The served GPUs are one vendor's (:attr:`Machine.served_gpus`);
    :func:`check_gpus`, right after, checks each GPU against a build whose backend drives it."""
    b = c.build
    gpus = ctx.served_gpus
    if not gpus:
        if b.backend in ("cuda", "rocm", "xpu") and ctx.request.backend == "auto":
            vendor = {"cuda": "NVIDIA", "rocm": "AMD", "xpu": "Intel"}[b.backend]
            kind = BACKEND_NAMES[b.backend]
            article = "an" if kind[0] in "AEIOUX" else "a"
            c.add("backend", f"{article} {kind} build, but the machine has no {vendor} "
                             f"GPU; the CPU build is smaller (name the GPU with --gpu, or ask for "
                             f"this build with --backend {b.variant})")
        return
    if _mps_serves(b, ctx):
        return
    if _cpu_only(b, ctx):
        names = ", ".join(dict.fromkeys(g.name for g in gpus))
        verb = "stays" if len(set(g.name for g in gpus)) == 1 else "stay"
        if ctx.request.backend == "cpu":
            c.add("backend", f"CPU build: the {names} {verb} unused (--backend cpu)", "warning")
        else:
            c.add("backend", f"CPU-only build: it would leave the {names} unused (pass --backend cpu "
                             "to plan a CPU install anyway)")
        return
    for g in gpus:
        need = VENDOR_BACKEND.get(g.vendor)
        if b.backend != need:
            kind = BACKEND_NAMES.get(b.backend, b.backend)
            article = "an" if kind[0] in "AEIOUX" else "a"
            c.add("backend", f"{article} {kind} build cannot drive the "
                             f"{g.name} ({VENDOR_NAMES.get(g.vendor, g.vendor)}, needs "
                             f"{BACKEND_NAMES.get(need or '', need)})")


def check_gpus(c: Candidate, ctx: Context) -> None:
    """Every GPU the machine asks to be served must be served by this build: its code for the GPU's
    architecture, the driver for it (a build whose backend does not drive the GPUs: :func:`check_gpu_backend`)."""
    b = c.build
    gpus = ctx.served_gpus
    if not gpus:
        return
    if _mps_serves(b, ctx):
        c.note(arch_fit=0)
        return
    if _cpu_only(b, ctx):  # check_gpu_backend's reason
        return
    for g in gpus:
        if b.backend != VENDOR_BACKEND.get(g.vendor):  # check_gpu_backend's reason
            continue
        if g.vendor == "nvidia":
            _nvidia_driver_for_gpu(c, ctx, g)
            _nvidia_arch(c, ctx, g)
            if (floor := cudnn_floor(ctx.matrix, b, g.arch)) is not None:
                c.add("gpu-arch", f"{name_of(c)} bundles cuDNN {b.cudnn}, which supports {floor.sm_min} and newer "
                                  f"for CUDA {(b.cuda or '').split('.')[0]}: no cuDNN code for {g.arch} ({g.name}), so "
                                  f"convolutions fail (CUDNN_STATUS_ARCH_MISMATCH; matrices/cuda.toml [[cudnn_floor]])")
        elif g.vendor == "amd":
            if not b.gfx:
                c.add("unverified", f"{name_of(c)} has no sourced gfx target list yet: envcheck does "
                                    f"not guess whether it serves {g.arch}")
            elif g.arch not in b.gfx:
                c.add("gpu-arch", f"{name_of(c)} carries code for {_list(b.gfx)}; none for {g.arch} "
                                  f"({g.name}) — an AMD target runs only code built for it")
            elif (gap := blas_gap(ctx.matrix, b, g.arch)) is not None:
                c.add("gpu-arch", f"{name_of(c)} lists {g.arch} but the rocBLAS it bundles (ROCm {gap.rocm_min}+) has "
                                  f"no Tensile library for it: the first matrix multiply on the {g.name} aborts "
                                  f"('rocBLAS error: Cannot read TensileLibrary.dat … for GPU arch : {g.arch}'; "
                                  f"{', '.join(gap.source[:2])})")
            else:
                c.note(arch_fit=max(c.fit.arch_fit, 0))
        elif g.vendor == "intel" and not g.arch.startswith("xpu-"):
            c.add("gpu-arch", f"the {g.name} ({g.arch}) is not an Intel GPU PyTorch's XPU builds support (Arc, "
                              "Data Center GPU Max, Core Ultra graphics)")
        elif g.vendor == "intel":
            _xpu_platform(c, ctx, g)


def _xpu_platform(c: Candidate, ctx: Context, g: GpuDevice) -> None:
    """An Intel GPU family PyTorch validates on some platforms only (gpus-other.toml [[xpu_family]]):
    the Data Center GPU Max on Linux, not on Windows or under WSL2."""
    fam = ctx.matrix.xpu_families.get(g.arch)
    if fam is None:
        return
    m = ctx.machine
    where = " and ".join(OS_NAMES.get(o, o) for o in fam.os) + (" (WSL2 too)" if fam.wsl else "")
    if m.os not in fam.os:
        c.add("os", f"PyTorch's XPU guide validates the {g.name} on {where} only, not on "
                    f"{OS_NAMES.get(m.os, m.os)} (matrices/gpus-other.toml [[xpu_family]])")
    elif m.wsl and not fam.wsl:
        c.add("wsl", f"PyTorch's XPU guide validates the {g.name} on native {where} only, not under WSL2 "
                     "(matrices/gpus-other.toml [[xpu_family]])")
    elif m.os == "linux" and not m.wsl and m.distro and fam.distros and m.distro not in fam.distros:
        c.add("os", f"PyTorch's XPU guide validates the {g.name} on {_list(_distro_names(ctx, fam.distros))}, not on "
                    f"{m.distro_name or _distro_names(ctx, [m.distro])[0]}: Intel's GPU driver packages (the recipe's "
                    "first step) may not exist for it (matrices/gpus-other.toml [[xpu_family]])", "warning")


def cudnn_floor(matrix: Matrix, b: Build, sm: str) -> Optional[CudnnFloor]:
    """The cuda.toml row saying the cuDNN ``b`` bundles has no code for architecture ``sm`` (None: no such
    row); verify's arch_compat asks the same of an installed build."""
    if not (b.cudnn and b.cuda and sm.startswith("sm_")):
        return None
    for f in matrix.cudnn_floors:  # the architecture first: for nearly every GPU the only test
        if _cap(sm) < _cap(f.sm_min) and b.cuda.split(".")[0] in f.cuda and vkey(b.cudnn) >= vkey(f.cudnn_min):
            return f
    return None


def blas_gap(matrix: Matrix, b: Build, gfx: str) -> Optional[BlasGap]:
    """The rocm-libs.toml row saying ``b``'s bundled rocBLAS lacks ``gfx`` (None: no such row); verify's
    arch_compat asks the same of an installed build."""
    if not b.rocm:
        return None
    return next((x for x in matrix.blas_gaps if gfx in x.gfx and b.channel == x.channel
                 and vkey(b.rocm) >= vkey(x.rocm_min)), None)


def check_compile(c: Candidate, ctx: Context) -> None:
    """torch.compile (Dynamo) support for the candidate's Python, free-threading and OS."""
    r = c.release
    mx = r.compile_python_max
    if not c.python or mx is None:
        return
    why = ""
    if mx == "":
        c.note(compile=False)
        if ctx.request.compile:  # a release before torch.compile: news only to whoever asked for it
            c.add("compile", f"torch {r.version} has no torch.compile (it arrived in 2.0)")
        return
    if python_key(c.python)[:2] > python_key(mx)[:2]:
        why = (f"torch.compile in torch {r.version} supports Python ≤ {mx}; on {c.python} it raises "
               f"\"Dynamo is not supported on Python {c.python.rstrip('t')}+\"")
    elif c.python.endswith("t") and r.compile_free_threaded is False:
        why = f"torch.compile in torch {r.version} rejects free-threaded Python ({c.python})"
    elif ctx.machine.os == "windows" and r.compile_windows is False:
        why = f"torch.compile in torch {r.version} does not support Windows"
    if why:
        c.note(compile=False)
        c.add("compile", why, "error" if ctx.request.compile else "warning")
        return
    if ctx.machine.os == "windows" and ctx.request.compile and c.build.backend == "cuda" and mx:
        _triton_windows(c, ctx)


def _triton_windows(c: Candidate, ctx: Context) -> None:
    """torch.compile on a Windows GPU needs Triton, which PyTorch does not publish for Windows: the
    community triton-windows package (matrices/triton-windows.toml) serves the torch minors on record."""
    minor = ".".join(c.release.version.split(".")[:2])
    row = ctx.matrix.triton_windows.get(minor)
    if row is None or (c.python or "") not in row.python:
        why = (f"no triton-windows release for torch {minor} is on record" if row is None else
               f"triton-windows {row.version} has no wheel for Python {c.python} (it has {py_span(row.python)})")
        c.add("compile", f"torch.compile on a Windows GPU needs Triton, which PyTorch does not publish for "
                         f"Windows; {why} (matrices/triton-windows.toml)")
        return
    low = _cap(row.sm_min)[:2]
    for g in ctx.machine.gpus_of("nvidia"):
        cap = g.compute_capability
        if cap and tuple(cap) < low:
            c.add("compile", f"triton-windows {row.triton} (torch {minor}) supports GPUs from {row.sm_min}; the "
                             f"{g.name} is {g.arch} (its README: Turing only up to Triton 3.2, Pascal never)")
            return
    c.note(triton_windows=row)
    c.add("compile", f"torch.compile on Windows: PyTorch publishes no Triton for Windows, so the plan adds the "
                     f"community package triton-windows {row.version} (Triton {row.triton}, which its README pairs "
                     f"with torch {minor}) — community-maintained, not an official PyTorch build", "warning")


def companion_version(c: Candidate, pkg: str) -> str:
    """The public version of the ``pkg`` release that pairs with the candidate ("" = none on record)."""
    pin = c.build.pins.get(pkg) or getattr(c.release, pkg) or ""
    return pin.split("+")[0]


def check_companions(c: Candidate, ctx: Context) -> None:
    """torchvision/torchaudio have their own Python lists: a companion without a wheel for this
    Python on this platform is left unpinned (a warning), and ranking prefers a Python all serve."""
    if c.python is None or ctx.platform not in c.build.platforms:
        return
    missing = []
    for pkg, version, row in ctx.once(("companions", id(c.release), id(c.build)), lambda: _companion_rows(c, ctx)):
        if row.serves(ctx.platform, c.python) is not False:
            continue
        missing.append(pkg)
        has = py_span(row.python.get(ctx.platform, ()))
        c.add("companion", f"{pkg} {version} has no wheel for Python {c.python} on {ctx.platform} (it has "
                           f"{has}): left unpinned — a Python all three serve avoids that", "warning")
    if missing:
        c.note(companions_missing=tuple(missing))


def _companion_rows(c: Candidate, ctx: Context) -> List[Tuple[str, str, Companion]]:
    """(package, version, matrices/companions.toml row) of the companions paired with ``c``'s build."""
    out = []
    for pkg in ("torchvision", "torchaudio"):
        version = companion_version(c, pkg)
        row = ctx.matrix.companions.get((pkg, version)) if version else None
        if row is not None:
            out.append((pkg, version, row))
    return out


def check_unverified(c: Candidate, ctx: Context) -> None:
    for row, what in ((c.build, "build facts"), (c.release, "release facts")):
        if row.confidence == "unverified":
            note = row.note.split("; ")[0] if row.note else ""
            note = f" ({note[:160]}…)" if len(note) > 160 else (f" ({note})" if note else "")
            c.add("unverified", f"some {what} of {name_of(c)} are not confirmed by a primary "
                                f"source{note}; `envcheck matrix show --torch {c.release.version} "
                                f"--variant {c.build.variant}` shows them", "warning")


#: The order matters only where a check reads another's ``fit`` (gpus reads driver).
CHECKS: List[Callable[[Candidate, Context], None]] = [
    check_torch_spec,
    check_platform,
    check_python,
    check_glibc,
    check_rocm_os,
    check_macos,
    check_backend_request,
    check_wsl,
    check_tegra,
    check_driver,
    check_gpu_backend,
    check_gpus,
    check_compile,
    check_companions,
    check_unverified,
]

#: The checks that read the candidate's Python, and the ``fit`` fields they record. Every other check
#: is a function of the release, the build and the context alone, reads only ``fit`` fields that such
#: checks record (gpus reads driver) and records none of these fields — so :func:`run_checks` works
#: those out once per (release, build) and hands their findings to each of its Pythons. These read no
#: ``fit`` field, and of the build only what :func:`python_inputs` names.
PER_PYTHON = (check_python, check_compile, check_companions)
PER_PYTHON_FIT = frozenset({"python_new", "compile", "triton_windows", "companions_missing"})


def python_inputs(c: Candidate, ctx: Context) -> tuple:
    """What the checks of :data:`PER_PYTHON` read of ``c`` besides its Python (the context is the same
    for all): the release; whether the build is made for the machine's platform, the Pythons it has
    there, its companions' versions and, on Windows, whether it is a CUDA build (check_compile's
    triton-windows step). The builds of a release mostly agree on these, so :func:`run_checks` works
    out their per-Python findings once per (inputs, Python)."""
    b = c.build
    return (id(c.release), ctx.platform in b.platforms, tuple(build_pythons(c, ctx.platform)),
            (companion_version(c, "torchvision"), companion_version(c, "torchaudio")),
            ctx.machine.os == "windows" and b.backend == "cuda")


#: The checks that decide most rejections and read no ``fit`` field, cheapest first: the torch spec,
#: the platform, the backend asked for and the one the GPUs need, WSL and Jetson. One of them finding
#: an error rejects a build whatever the others find, so :func:`run_checks` tries them first and
#: leaves the full findings of a build they reject to when they are read (:meth:`Candidate.defer`).
#: None reads the Python: they run once per (release, build).
QUICK = (check_torch_spec, check_platform, check_backend_request, check_gpu_backend, check_wsl, check_tegra)


def run_checks(cands: Sequence[Candidate], ctx: Context) -> None:
    """Every check of :data:`CHECKS`, in order, on every candidate — the same reasons, warnings and
    ``fit`` as running them one by one, but each piece of work once, and only when needed:

    * a build one of the :data:`QUICK` checks rejects is rejected; its candidates' findings are worked
      out when first read (``plan --json`` reads all; a plan written with ``-o`` a few);
    * a machine whose Python is not given has a candidate per Python of each build (~1,500
      candidates, ~300 builds): the checks that do not read the Python run once per (release, build),
      the ones that do once per (their inputs, Python), and each candidate gets the findings of both.
    """
    findings = _Findings(ctx)
    release = build = None
    rejected = False
    for c in cands:
        if c.build is not build or c.release is not release:  # the candidates of a build mostly come together
            release, build = c.release, c.build
            rejected = findings.rejected_early(c)
        if rejected:
            c.defer(findings.complete)
        else:
            findings.complete(c)


class _Findings:
    """What one resolve's checks found, each piece of work once (see :func:`run_checks`)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.order = _order(CHECKS)
        self.builds: dict = {}  # (release, build) -> (steps, facts, python key, Pythons): see _build_findings
        self.inputs: dict = {}  # python_inputs -> a short key standing for them
        self.pythons: dict = {}  # (python key, Python, …) -> (findings per check, facts): see _python_findings

    def rejected_early(self, c: Candidate) -> bool:
        """Does one of the :data:`QUICK` checks reject ``c``'s (release, build)?"""
        probe = Candidate(c.release, c.build, c.python)
        for check in QUICK:
            check(probe, self.ctx)
            if probe.reasons:
                return True
        return False

    def complete(self, c: Candidate) -> None:
        """Record on ``c`` what every check finds, in order."""
        ctx = self.ctx
        found = self.builds.get((id(c.release), id(c.build)))
        if found is None:
            found = self.builds[id(c.release), id(c.build)] = _build_findings(c, self.order, ctx, self.inputs)
        steps, facts, key, has = found
        # a build without the candidate's Python: check_python's reason names the build, so no sharing
        same = (key, c.python) if c.python is None or c.python in has else (key, c.python, id(c.build))
        per_python = self.pythons.get(same)
        if per_python is None:
            per_python = self.pythons[same] = _python_findings(c, ctx)
        added, in_all, py_facts = per_python
        if steps is None:  # the build's own checks found nothing: the per-Python findings alone (most builds)
            reasons, warnings = in_all
        else:
            reasons, warnings = [], []
            for step in steps:
                r, w = step if step.__class__ is tuple else added.get(step, _NOTHING)
                reasons += r
                warnings += w
        c.take(reasons, warnings, {**facts, **py_facts} if facts and py_facts else facts or py_facts)


_NOTHING: tuple = ((), ())  # a per-Python check that found nothing


def _order(checks: Sequence[Callable[[Candidate, Context], None]]) -> list:
    """``checks`` as runs of the checks that do not read the Python (tuples) between the ones that do."""
    order: list = []
    for check in checks:
        if check in PER_PYTHON:
            order.append(check)
        elif order and order[-1].__class__ is tuple:
            order[-1] += (check,)
        else:
            order.append((check,))
    return order


def _build_findings(c: Candidate, order: list, ctx: Context, inputs: dict) -> tuple:
    """What the checks that do not read the Python find for ``c``'s (release, build): the steps every
    candidate of the build takes (a per-Python check, or the (reasons, warnings) a run of the others
    added; ``None`` when the others added nothing), the ``fit`` facts the others noted, a short key
    standing for the build's :func:`python_inputs` (numbered in ``inputs``) and its Pythons."""
    probe = Candidate(c.release, c.build, c.python)  # the build's findings, apart from any candidate's
    steps: list = []
    own = False
    for item in order:
        if item.__class__ is not tuple:
            steps.append(item)
            continue
        nr, nw = len(probe.reasons), len(probe.warnings)
        for check in item:
            check(probe, ctx)
        if len(probe.reasons) > nr or len(probe.warnings) > nw:
            steps.append((probe.reasons[nr:], probe.warnings[nw:]))
            own = True
    facts = probe.noted
    if facts.keys() & PER_PYTHON_FIT:
        culprit = Candidate(c.release, c.build, c.python)
        for check in (check for item in order if item.__class__ is tuple for check in item):
            check(culprit, ctx)
            if culprit.noted.keys() & PER_PYTHON_FIT:
                raise AssertionError(f"{check.__name__} records {sorted(culprit.noted.keys() & PER_PYTHON_FIT)}, "
                                     "which a per-Python check records too: add it to PER_PYTHON")
    given = python_inputs(c, ctx)
    key = inputs.setdefault(given, len(inputs))
    return (steps if own else None), facts, key, frozenset(given[2])


def _python_findings(c: Candidate, ctx: Context) -> tuple:
    """What each check of :data:`PER_PYTHON` finds for ``c``: ``{check: (reasons, warnings)}``, all of
    them in order ``(reasons, warnings)``, and the ``fit`` facts they noted."""
    probe = Candidate(c.release, c.build, c.python)
    added = {}
    for check in PER_PYTHON:
        nr, nw = len(probe.reasons), len(probe.warnings)
        check(probe, ctx)
        if len(probe.reasons) > nr or len(probe.warnings) > nw:
            added[check] = (probe.reasons[nr:], probe.warnings[nw:])
    return added, (probe.reasons, probe.warnings), probe.noted
