"""The Machine: what envcheck plans for — from probe, from flags, or from a saved file.

One type for all three, so ``envcheck probe -o machine.toml`` on a cluster node and
``envcheck plan --machine machine.toml`` elsewhere see the same thing. Every fact may be unknown
(``None``); ``how`` records, per field, how it was learned (``"--driver flag"``, ``"nvml"``,
``"/etc/os-release"``) and ``unknown`` records why a fact could not be learned.
"""

from __future__ import annotations


from envcheck.record import asdict, field, record
from envcheck.jsontypes import JSON, JSONObject
from envcheck.schema import CPU_ARCHES, OSES  # noqa: F401 (the vocabulary, defined once)

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, Optional, Sequence


@record
class GpuDevice:
    """One GPU of the machine.

    Attributes:
        vendor: ``nvidia`` | ``amd`` | ``intel`` | ``apple``.
        name: marketing name (``"NVIDIA GeForce RTX 4090"``).
        arch: ``sm_89`` (NVIDIA compute capability 8.9), ``gfx1100`` (AMD), ``xpu-…``, ``apple-m2``.
        memory_mib: device memory in MiB, when known.
        index: device index as the driver numbers it, when probed.
        uuid: NVIDIA/AMD UUID, when probed.
        mig: NVIDIA MIG mode enabled, when probed.
        integrated: an integrated GPU (APU/iGPU); probe does not ask plans to serve these.
        serve: whether plans must serve this GPU (every named GPU is served).
        how: how this GPU was found (``"--gpu flag"``, ``"nvml"``, ``"kfd topology"``…).
    """

    vendor: str
    name: str
    arch: str
    memory_mib: Optional[int] = None
    index: Optional[int] = None
    uuid: Optional[str] = None
    mig: Optional[bool] = None
    integrated: bool = False
    serve: bool = True
    how: str = ""

    @property
    def compute_capability(self) -> Optional[tuple]:
        """``(8, 9)`` for ``sm_89``; ``None`` for non-NVIDIA."""
        if self.vendor != "nvidia" or not self.arch.startswith("sm_"):
            return None
        digits = self.arch[3:].rstrip("af")
        return int(digits[:-1]), int(digits[-1])


@record
class Machine:
    """Everything about a machine that decides which torch build runs on it.

    Attributes:
        os: ``linux`` | ``windows`` | ``macos`` (WSL is ``linux`` with ``wsl=True``).
        arch: CPU architecture: ``x86_64`` | ``aarch64`` | ``arm64`` | ``x86`` (32-bit).
        wsl: running under WSL2 (the GPU driver is the Windows one).
        wsl_version: 1 or 2 when ``wsl``.
        tegra: an NVIDIA Jetson (Tegra) board running JetPack/L4T.
        jetpack: the JetPack release (``"6.2"``), when known.
        distro: a ``matrices/platforms.toml`` distro id (``ubuntu22.04``), when known.
        distro_name: as the OS names itself (``"Ubuntu 22.04.4 LTS"``).
        glibc: glibc version string (``"2.35"``); ``None`` off Linux or unknown.
        macos: macOS version (``"14.5"``).
        python: target CPython, ``"3.12"`` or ``"3.13t"`` (free-threaded).
        python_bits: 64 or 32.
        python_implementation: ``cpython`` (only CPython has torch wheels).
        gpus: every GPU.
        nvidia_driver: NVIDIA driver version (``"570.124.06"``; on WSL the Windows driver, ``"572.60"``).
        cuda_driver_max: highest CUDA the driver supports (``"12.8"``, nvidia-smi's "CUDA Version").
        amd_driver: AMD Windows driver (Adrenalin, ``"25.3.1"``) on WSL.
        amd_linux_driver: amdgpu kernel driver version on native Linux, when known.
        rocm: ROCm installed on the host (``"6.4.1"``), when known.
        container: running inside a container.
        docker: Docker engine facts (``reachable``, ``version``, ``nvidia_runtime``), when probed.
        plan_gpu: index into ``gpus`` of the GPU the plan is for (``--for-gpu``); ``None``: the rule
            of :attr:`served_gpus` decides.
        how: field name → how it was learned.
        unknown: field name → why it is unknown.
    """

    os: str = "linux"
    arch: str = "x86_64"
    wsl: bool = False
    wsl_version: Optional[int] = None
    tegra: bool = False
    jetpack: Optional[str] = None
    distro: Optional[str] = None
    distro_name: Optional[str] = None
    glibc: Optional[str] = None
    macos: Optional[str] = None
    python: Optional[str] = None
    python_bits: int = 64
    python_implementation: str = "cpython"
    gpus: List[GpuDevice] = field(default_factory=list)
    nvidia_driver: Optional[str] = None
    cuda_driver_max: Optional[str] = None
    amd_driver: Optional[str] = None
    amd_linux_driver: Optional[str] = None
    rocm: Optional[str] = None
    container: Optional[bool] = None
    docker: JSONObject = field(default_factory=dict)
    plan_gpu: Optional[int] = None
    how: Dict[str, str] = field(default_factory=dict)
    unknown: Dict[str, str] = field(default_factory=dict)

    @property
    def platform(self) -> str:
        """Matrix platform key: ``linux-x86_64``, ``windows-x86_64``, ``macos-arm64``, …"""
        from envcheck.machine.arch import platform_arch

        arch = platform_arch(self.os, self.arch)
        if self.python_bits == 32:
            arch = "x86"
        return f"{self.os}-{arch}"

    @property
    def served_gpus(self) -> List[GpuDevice]:
        """GPUs a plan must serve: one wheel drives one vendor's GPUs, so on a machine with several
        vendors the plan is for one of them and the others stay unused.

        With :attr:`plan_gpu` (``--for-gpu N|NAME``) the plan is for that GPU's vendor: its GPUs of
        that vendor, integrated ones only when the chosen GPU is integrated itself. Otherwise, of the
        GPUs marked ``serve`` (every named one; probe leaves out AMD/Intel iGPUs), integrated GPUs
        (``integrated``, from the GPU data's segment) count only when nothing discrete is there; of
        several vendors, the first GPU's vendor wins (``--gpu`` or probe order).
        :attr:`unserved_gpus` lists the rest.
        """
        if self.plan_gpu is not None and 0 <= self.plan_gpu < len(self.gpus):
            chosen = self.gpus[self.plan_gpu]
            mine = [g for g in self.gpus if g.vendor == chosen.vendor and (g.serve or g is chosen)]
            return mine if chosen.integrated else [g for g in mine if not g.integrated] or mine
        want = [g for g in self.gpus if g.serve]
        want = [g for g in want if not g.integrated] or want  # an iGPU beside a discrete GPU, any vendor
        if len({g.vendor for g in want}) > 1:
            want = [g for g in want if g.vendor == want[0].vendor]
        return want

    @property
    def unserved_gpus(self) -> List[GpuDevice]:
        """Named or probed GPUs the plan leaves unused (another vendor, or an integrated GPU beside a
        discrete one); probed iGPUs that were never candidates (``serve=False``) are not listed."""
        served = {id(g) for g in self.served_gpus}
        return [g for g in self.gpus if g.serve and id(g) not in served]

    def gpus_of(self, vendor: str) -> List[GpuDevice]:
        return [g for g in self.served_gpus if g.vendor == vendor]

    def describe(self) -> str:
        """One line a person reads: ``Linux x86_64 (WSL2), glibc 2.35, Python 3.12, 1× RTX 4090``."""
        osname = {"linux": "Linux", "windows": "Windows", "macos": "macOS"}.get(self.os, self.os)
        parts = [f"{osname} {self.arch}" + (" (WSL2)" if self.wsl else "") + (" (Jetson)" if self.tegra else "")]
        if self.distro_name or self.distro:
            parts.append(str(self.distro_name or self.distro))
        if self.glibc:
            parts.append(f"glibc {self.glibc}")
        if self.macos:
            parts.append(f"macOS {self.macos}")
        if self.python:
            parts.append(f"Python {self.python}" + (" (32-bit)" if self.python_bits == 32 else ""))
        elif self.python_bits == 32:
            parts.append("32-bit Python")
        parts += gpu_labels(self.gpus)
        if self.nvidia_driver:
            parts.append(f"NVIDIA driver {self.nvidia_driver}")
        elif self.cuda_driver_max:  # only the CUDA version the driver supports is known (--driver 12.8)
            parts.append(f"NVIDIA driver for CUDA ≤ {self.cuda_driver_max}")
        if self.amd_driver:
            parts.append(f"AMD Windows driver {self.amd_driver}")
        return ", ".join(parts)

    # -- serialisation ----------------------------------------------------------------------
    def to_dict(self) -> JSONObject:
        """Plain data for JSON/TOML; ``None`` values are dropped (TOML has no null)."""
        return drop_none_table(asdict(self))


def drop_none_table(table: JSONObject) -> JSONObject:
    """:func:`drop_none` of a table, typed as one."""
    return {k: drop_none(v) for k, v in table.items() if v is not None}


def drop_none(value: JSON) -> JSON:
    """Recursively drop ``None`` values (TOML has no null)."""
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none(v) for v in value if v is not None]
    return value


def gpu_labels(gpus: Sequence[GpuDevice]) -> List[str]:
    """``["2× GeForce RTX 4090 (sm_89)", "H100 (sm_90)"]``: each kind of GPU once, with its count."""
    counts: Dict[str, int] = {}
    for g in gpus:
        label = g.name if g.arch in g.name else f"{g.name} ({g.arch})"
        counts[label] = counts.get(label, 0) + 1
    return [f"{n}× {label}" if n > 1 else label for label, n in counts.items()]
