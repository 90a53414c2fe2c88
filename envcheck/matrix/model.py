"""Typed rows of the compatibility matrix (``matrices/*.toml``).

Every row keeps the ``source`` it came from and a ``confidence``; the meaning of each field is
documented in ``matrices/README.md``. Versions are kept as strings exactly as written in the data
(``"12.8.0"``, ``"570.124.06"``) and compared through :func:`envcheck.matrix.model.vkey`, in the
order of :class:`packaging.version.Version` (:mod:`envcheck.matrix.version`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from envcheck.matrix.version import VersionKey
from envcheck.matrix.version import parse as parse_version
from envcheck.record import field, record
from envcheck.schema import CONFIDENCE_LEVELS, PLATFORMS, VENDORS  # noqa: F401 (the vocabulary, defined once)

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Mapping, Optional, Tuple

#: The order of a plan's recipe steps (``[[recipe]] kind``, matrices/README.md "recipe.toml").
RECIPE_KINDS = ("host", "system", "python", "install", "post-install", "verify")


@lru_cache(maxsize=4096)
def vkey(text: str) -> VersionKey:
    """Parse a dotted version string (torch, CUDA, driver, glibc, macOS) for comparison, in PEP 440's
    order as packaging defines it (:mod:`envcheck.matrix.version`).

    Raises:
        ValueError: the text is not a version (e.g. ``"570.x"``).
    """
    return parse_version(text)


@lru_cache(maxsize=256)
def python_key(py: str) -> Tuple[int, int, bool]:
    """``"3.13t"`` → ``(3, 13, True)``: (major, minor, free-threaded)."""
    m = re.fullmatch(r"(\d+)\.(\d+)(t?)", py)
    if not m:
        raise ValueError(f"not a Python version like '3.12' or '3.13t': {py!r}")
    return int(m.group(1)), int(m.group(2)), bool(m.group(3))


@record(frozen=True)
class Sourced:
    """Provenance every row carries."""

    source: Tuple[str, ...] = ()
    confidence: str = "unverified"
    note: str = ""


@record(frozen=True)
class Release(Sourced):
    """One torch release: Pythons per platform, what plain PyPI serves, paired packages."""

    version: str = ""
    date: str = ""
    torchvision: str = ""
    torchaudio: str = ""
    python: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    pypi: Mapping[str, str] = field(default_factory=dict)
    pypi_tag: Mapping[str, str] = field(default_factory=dict)
    pypi_pins: Mapping[str, str] = field(default_factory=dict)
    compile_python_max: Optional[str] = None  # "" = no torch.compile in this release
    compile_free_threaded: Optional[bool] = None
    compile_windows: Optional[bool] = None


@record(frozen=True)
class Build(Sourced):
    """A build row: a variant of one or more releases on one or more platforms.

    ``sm``/``ptx`` (NVIDIA) and ``gfx`` (AMD) are the kernel list compiled into the wheel.
    """

    torch: Tuple[str, ...] = ()
    variant: str = ""
    channel: str = ""
    platforms: Tuple[str, ...] = ()
    wheel_tag: Mapping[str, str] = field(default_factory=dict)  # platform -> tag
    python: Optional[Tuple[str, ...]] = None
    cuda: Optional[str] = None
    cudnn: Optional[str] = None
    nccl: Optional[str] = None
    sm: Tuple[str, ...] = ()
    ptx: Tuple[str, ...] = ()
    rocm: Optional[str] = None
    gfx: Tuple[str, ...] = ()
    mps: bool = False
    mps_min_macos: Optional[str] = None
    wsl: bool = False
    glibc: Optional[str] = None  # glibc floor when the wheel tag states none (linux_x86_64)
    local_label: bool = True  # file versions carry +variant (False: bare "2.4.0")
    tegra: bool = False  # built for Jetson (NVIDIA JetPack wheels)
    post_install: Tuple[str, ...] = ()
    pins: Mapping[str, str] = field(default_factory=dict)
    file: str = ""  # the matrix file the row came from (for messages)
    index: int = 0  # its position there

    def version_of(self, release_version: str) -> str:
        """The version string the wheel file carries: ``2.7.0+cu128``, or bare for PyPI/unlabelled."""
        if self.channel == "pypi" or not self.local_label:
            return release_version
        return f"{release_version}+{self.variant}"

    @property
    def backend(self) -> str:
        """``cuda``, ``rocm``, ``xpu``, ``mps`` or ``cpu``: what the build drives."""
        if self.cuda:
            return "cuda"
        if self.rocm:
            return "rocm"
        if self.variant == "xpu":
            return "xpu"
        if self.mps:
            return "mps"
        return "cpu"


@record(frozen=True)
class Channel(Sourced):
    """Where wheels are served. ``index_url`` may contain ``{variant}``."""

    name: str = ""
    index_url: str = ""
    kind: str = "simple"  # "simple" (PEP 503/691 index) or "find-links"

    def url_for(self, variant: str) -> str:
        return self.index_url.replace("{variant}", variant)


@record(frozen=True)
class Toolkit(Sourced):
    """A CUDA toolkit release and the driver it shipped with (full support, PTX JIT)."""

    version: str = ""
    driver_linux: str = ""
    driver_windows: str = ""


@record(frozen=True)
class Family(Sourced):
    """Minor-version compatibility floor for one CUDA major."""

    major: int = 0
    min_minor: int = 0
    floor_linux: str = ""
    floor_windows: str = ""


@record(frozen=True)
class NvArch(Sourced):
    """An NVIDIA architecture (``sm_86``) and the CUDA toolkits that can target it."""

    sm: str = ""
    compute_capability: str = ""
    family: str = ""
    first_cuda: str = ""
    last_cuda: str = ""
    sbsa_from_cuda: str = ""  # Jetson: first CUDA whose standard aarch64 (SBSA) builds run on it
    driver_min_linux: str = ""  # lowest driver build known to drive GPUs of this arch
    driver_min_windows: str = ""
    driver_last_branch: str = ""  # last driver branch that supports the arch ("470", "580")
    targets: Tuple[str, ...] = ()  # its suffixed compile targets: arch-specific sm_90a, family-specific sm_120f


@record(frozen=True)
class Gpu(Sourced):
    """A GPU model by name: vendor and architecture."""

    name: str = ""
    vendor: str = ""
    arch: str = ""
    family: str = ""
    segment: str = ""
    memory_mib: Optional[int] = None
    aliases: Tuple[str, ...] = ()
    host_arch: str = ""  # the only CPU arch this GPU ships with (GH200, GB10, Jetson: aarch64)
    host_os: Tuple[str, ...] = ()  # the only OSes its systems run (GH200: linux — so never Windows, never WSL)


@record(frozen=True)
class XpuFamily(Sourced):
    """``[[xpu_family]]`` of gpus-other.toml: the platforms PyTorch validates an Intel GPU family on
    (``archs``: ``xpu-pvc``…): ``os`` (linux, windows) and whether WSL2 is among them."""

    archs: Tuple[str, ...] = ()
    os: Tuple[str, ...] = ()
    wsl: bool = False
    distros: Tuple[str, ...] = ()  # the Linux distributions it is validated on (platforms.toml ids; empty: not judged)


@record(frozen=True)
class RocmWslRelease(Sourced):
    """A ROCm release AMD supports on WSL, the Windows driver it needs, the GPUs it serves."""

    rocm: str = ""
    adrenalin_min: str = ""
    gfx: Tuple[str, ...] = ()
    ubuntu: Tuple[str, ...] = ()


@record(frozen=True)
class BlasGap(Sourced):
    """ROCm wheels from ``rocm_min`` on (of ``channel``) whose bundled rocBLAS ships no Tensile library for
    ``gfx`` targets that torch's own kernel list still names: the first matrix multiply aborts."""

    rocm_min: str = ""
    gfx: Tuple[str, ...] = ()
    channel: str = "pytorch"


@record(frozen=True)
class KernelDriver(Sourced):
    """The ROCm user space AMD tests on one line of its amdgpu kernel-mode driver (KMD): a native ROCm
    wheel bundles its ROCm's user space, and the host's kernel driver must be one AMD lists for it."""

    rocm: str = ""
    amdgpu: str = ""
    user_space: Tuple[str, ...] = ()


@record(frozen=True)
class CudnnFloor(Sourced):
    """The oldest NVIDIA architecture a cuDNN release supports, for the CUDA majors it is built for: a CUDA
    wheel bundling cuDNN ≥ ``cudnn_min`` for CUDA ``cuda`` has no cuDNN code for GPUs older than ``sm_min``
    (convolutions fail with CUDNN_STATUS_ARCH_MISMATCH), although torch's own kernel list may name them."""

    cudnn_min: str = ""
    cuda: Tuple[str, ...] = ()
    sm_min: str = ""


@record(frozen=True)
class Step(Sourced):
    """A post-install step a plan must carry (e.g. removing the bundled libhsa on WSL)."""

    key: str = ""
    description: str = ""
    shell: str = ""
    env: Mapping[str, str] = field(default_factory=dict)  # variables the runtime needs set (ENV)


@record(frozen=True)
class RecipeRow(Sourced):
    """One step of the install recipe a plan carries (matrices/recipe.toml), chosen by its ``when``.

    ``kind`` orders the recipe (host → system → python → install → post-install → verify);
    ``runs_in`` says where (``host`` = the machine's own OS outside any WSL guest, ``windows``,
    ``linux``, ``macos``); ``shell`` is ``bash``, ``powershell`` or ``manual`` (a person does it:
    a driver download); ``commands`` and ``check`` may use ``{{name}}`` placeholders.
    """

    key: str = ""
    kind: str = ""
    title: str = ""
    runs_in: str = ""
    shell: str = "bash"
    root: bool = False
    commands: str = ""
    check: str = ""
    skip_if: str = ""
    url: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    when: Mapping[str, object] = field(default_factory=dict)
    apt: Tuple[str, ...] = ()


@record(frozen=True)
class AmdRoute(Sourced):
    """A way (or the absence of one) to run PyTorch on an AMD GPU outside the resolver's wheel rows:
    AMD's Windows wheels, AMD's multi-arch index, native Linux instead of WSL, a community override.

    ``os``/``wsl``/``gfx`` select the machines it is said for; ``kind`` is ``route``,
    ``instead`` (this setup has none: use another), or ``unsupported`` (a community workaround
    named with its risk, never a plan step); ``text`` may use ``{gpu}`` and ``{arch}``.
    """

    key: str = ""
    kind: str = "route"
    os: Tuple[str, ...] = ()
    wsl: Optional[bool] = None
    gfx: Tuple[str, ...] = ()
    text: str = ""
    url: str = ""


@record(frozen=True)
class Distro(Sourced):
    """A Linux distribution release and the glibc it ships."""

    id: str = ""
    name: str = ""
    aliases: Tuple[str, ...] = ()
    glibc: str = ""
    python3: str = ""  # the version of the distribution's python3 package ("3.10")
    os_release: Mapping[str, str] = field(default_factory=dict)


@record(frozen=True)
class RocmOs(Sourced):
    """``[[rocm_os]]`` of platforms.toml: the Linux distributions AMD supports a ROCm release on
    (``rocm``: major.minor, every patch release of it; ``distros``: platforms.toml distro ids) — where
    amdgpu-install, the recipe's kernel-driver step, has packages."""

    rocm: str = ""
    distros: Tuple[str, ...] = ()


@record(frozen=True)
class ManylinuxAlias(Sourced):
    """A legacy manylinux tag (``manylinux2014``) and its glibc floor."""

    tag: str = ""
    glibc: str = ""


@record(frozen=True)
class Marker(Sourced):
    """PEP 508 marker values of a platform (``sys_platform``, ``platform_machine``)."""

    platform: str = ""
    sys_platform: str = ""
    platform_machine: str = ""

    @property
    def expression(self) -> str:
        """``sys_platform == 'win32' and platform_machine == 'AMD64'``."""
        return f"sys_platform == '{self.sys_platform}' and platform_machine == '{self.platform_machine}'"


@record(frozen=True)
class JetpackGen(Sourced):
    """A JetPack generation: its L4T major, the Ubuntu it ships, the Jetson wheel channels built for it
    and, from JetPack 7, the CUDA major of the standard SBSA wheels it runs."""

    major: str = ""
    l4t: str = ""
    distro: str = ""
    channels: Tuple[str, ...] = ()
    sbsa_cuda: str = ""  # the CUDA major whose standard linux-aarch64 (SBSA) wheels this generation runs


@record(frozen=True)
class Chip(Sourced):
    """A GPU chip codename pattern (as the PCI ID database names devices) → vendor and architecture."""

    vendor: str = ""
    pattern: str = ""
    arch: str = ""
    family: str = ""
    integrated: bool = False


@record(frozen=True)
class TritonWindows(Sourced):
    """The community triton-windows release that pairs with a torch minor on Windows."""

    torch: str = ""
    triton: str = ""
    version: str = ""
    python: Tuple[str, ...] = ()
    sm_min: str = ""
    step: str = ""


@record(frozen=True)
class Companion(Sourced):
    """A torchvision/torchaudio release and the Pythons it has wheels for, per platform key
    (``any``: a py3-none-any wheel serves every Python)."""

    package: str = ""
    version: str = ""
    any: bool = False
    python: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)

    def serves(self, platform: str, python: str) -> Optional[bool]:
        """Whether a wheel exists for ``python`` on ``platform`` (``None``: the platform is not listed)."""
        if self.any:
            return True
        if platform not in self.python:
            return None if not self.python else False
        return python in self.python[platform]


@record(frozen=True)
class CpuArch(Sourced):
    """A CPU architecture: envcheck's name for it, the names people and tools use, and the
    platform-key spelling per OS (``aarch64`` on Linux, ``arm64`` on macOS/Windows)."""

    name: str = ""
    aliases: Tuple[str, ...] = ()
    platform: Mapping[str, str] = field(default_factory=dict)


@record(frozen=True)
class MacosRelease(Sourced):
    """A macOS release: version, name, Darwin major."""

    version: str = ""
    name: str = ""
    darwin: Optional[str] = None


@record(frozen=True)
class CondaForgeRow(Sourced):
    """conda-forge ``pytorch`` builds for some releases."""

    torch: Tuple[str, ...] = ()
    cuda_version: Tuple[str, ...] = ()
    platforms: Tuple[str, ...] = ()
    python: Tuple[str, ...] = ()
    arm_variant: str = ""  # e.g. "tegra" (Jetson) builds


@record(frozen=True)
class CondaSelect(Sourced):
    """``[[conda_select]]`` of conda.toml: match specs a conda environment needs beside ``pytorch``
    so that the solver picks the right build of something else — the free-threaded interpreter, the
    Tegra (Jetson) or SBSA (server ARM) CUDA variant. ``when`` keys (all must hold): ``free_threaded``
    (the plan's Python is ``3.13t``/``3.14t``), ``platform``, ``cuda`` (the conda-forge build chosen
    is a CUDA one), ``cuda_major`` (its cuda-version's major), ``arm_variant`` (that build's row: ``"tegra"``, ``""`` for the default)."""

    when: Mapping[str, object] = field(default_factory=dict)
    specs: Tuple[str, ...] = ()


@record(frozen=True)
class PytorchChannelRow(Sourced):
    """The ended ``-c pytorch`` conda channel: which CUDA flavours a release had."""

    torch: Tuple[str, ...] = ()
    pytorch_cuda: Tuple[str, ...] = ()
    cudatoolkit: Tuple[str, ...] = ()
    platforms: Tuple[str, ...] = ()


@record(frozen=True)
class NumpyRow(Sourced):
    """``[[numpy]]`` of ``numpy.toml``: the NumPy a torch build can run with.

    ``requires`` is the PEP 440 specifier a plan adds for numpy (``"<2"``; ``""`` = any NumPy);
    ``built_against`` the NumPy major the wheels were compiled against (``"1.x"``/``"2.x"``)."""

    torch: Tuple[str, ...] = ()
    channels: Tuple[str, ...] = ()
    platforms: Tuple[str, ...] = ()  # () = every platform
    built_against: str = ""
    requires: str = ""

    def covers(self, torch: str, channel: str, platform: str) -> bool:
        return torch in self.torch and channel in self.channels and (not self.platforms or platform in self.platforms)


@record(frozen=True)
class CondaConstraint(Sourced):
    """How a conda package gates installation (``__cuda``, ``cuda-version`` run_constrained)."""

    package: str = ""
    build: str = ""
    run: Tuple[str, ...] = ()
    host: Tuple[str, ...] = ()
    run_constrained: Tuple[str, ...] = ()


@record(frozen=True)
class VariantProvider(Sourced):
    """``[[variant_provider]]`` of ``variants.toml``: a wheel-variant provider plugin (PEP 825/850,
    drafts) — its namespace, the features it reports for a GPU's architecture and its software
    stack version, and the variables that override detection (to install for another machine)."""

    vendor: str = ""  # nvidia | amd
    namespace: str = ""
    arch_feature: str = ""  # sm_arch | gfx_arch
    version_features: Tuple[str, ...] = ()  # cuda_version_lower_bound… | rocm_version
    arch_override: str = ""  # NV_VARIANT_PROVIDER_FORCE_SM_ARCH | AMD_VARIANT_PROVIDER_GFX_ARCH
    version_override: str = ""
    version_range: Tuple[str, ...] = ()  # detected versions outside it are ignored by the provider
    pep: str = ""  # the PEP revisions read


@record(frozen=True)
class BaseImage(Sourced):
    """A Docker base image for rendered Dockerfiles."""

    backend: str = ""  # cpu | cuda | rocm | rocm-wsl | xpu
    image: str = ""
    template: str = ""
    #: "image": the image tag names the Python ({python}: python:X.Y-slim); "apt": the distribution's
    #: python3 (``distro``); "uv": uv installs the plan's Python (``uv_image`` brings uv)
    python_from: str = ""
    distro: str = ""  # platforms.toml [[distro]] id: the image's own python3 (the one Python it serves)
    freethreaded: bool = False  # serves free-threaded Pythons (3.13t)
    uv_image: str = ""  # python_from = "uv": the image uv is copied from
    apt: Tuple[str, ...] = ()  # apt packages the template installs (python3 and its venv, a compiler…)
    says: str = ""  # one sentence for the Dockerfile: what this image is and why it is the base
    tegra: bool = False  # for Jetson (tegra = true) builds only, which need the L4T CUDA userspace
    cuda: Optional[str] = None  # tegra rows: the CUDA major.minor the image's L4T userspace carries
    cuda_major: Optional[int] = None
    rocm: Optional[str] = None
    rocm_min: Optional[str] = None  # lowest ROCm published on this image's distribution
    glibc: str = ""
    run_flags: Tuple[str, ...] = ()  # `docker run` flags the container needs for the GPU
    env: Mapping[str, str] = field(default_factory=dict)  # ENV lines for the image
    prerequisites: Tuple[str, ...] = ()  # what the host needs (nvidia-container-toolkit…)


@record(frozen=True)
class ContainerRoute(Sourced):
    """How a GPU of a non-Linux host reaches a Linux container (``[[container_route]]``, docker.toml).

    A Dockerfile is always a Linux container; a Windows or macOS plan's Dockerfile is rendered from
    the plan re-resolved for that container: with the GPUs a route passes through (``vendor``),
    as a WSL 2 guest when ``wsl`` (the Windows driver serves it), and without any GPU (the CPU
    build) when no route is on record.
    """

    host_os: str = ""  # windows | macos
    vendor: Tuple[str, ...] = ()  # the GPU vendors it passes through
    wsl: bool = False  # the container runs as a WSL 2 guest (Docker Desktop's WSL 2 backend)
    says: str = ""  # one sentence for the Dockerfile


@record(frozen=True)
class CiTarget(Sourced):
    """A CI image target (nox ``images`` session)."""

    name: str = ""
    args: Tuple[str, ...] = ()
    description: str = ""


@record(frozen=True)
class IndexUpdate(Sourced):
    """``[[update]]`` of a ``generated-index-<channel>-<package>.toml``: when and from where
    ``envcheck matrix update`` last read a package's files (one row per file).

    ``checked``/``changed`` are UTC times (``2025-07-09T14:13:16Z``): the last run, and the last run
    that changed the file list. ``since`` is the oldest release kept; ``files`` the number of files.
    """

    channel: str = ""
    package: str = ""
    index_url: str = ""
    pages: Tuple[str, ...] = ()
    checked: str = ""
    changed: str = ""
    since: str = ""
    files: int = 0


@record(frozen=True)
class IndexWheels(Sourced):
    """``[[wheels]]`` of a generated index file: the wheel files of one release x variant that one
    sub-index serves, as the index listed them.

    ``variant`` is the local version label (``cu128``, ``cpu.cxx11.abi``) or ``""`` for files without
    one; ``subindex`` the folder under the index that serves them (``cu128`` for
    ``https://download.pytorch.org/whl/cu128/``; ``""`` when files live elsewhere, as on PyPI).
    Each of ``files`` is ``"<wheel file name>#sha256=<hex>"`` (no fragment when the index gave no
    hash); ``uploaded`` the earliest upload date (``2025-06-04``) when the index tells it.
    """

    channel: str = ""
    package: str = ""
    version: str = ""
    variant: str = ""
    subindex: str = ""
    uploaded: str = ""
    files: Tuple[str, ...] = ()
    yanked: Tuple[str, ...] = ()


@record(frozen=True)
class Diagnosis(Sourced):
    """A known error message and what it means (``matrices/diagnoses.toml``).

    ``pattern`` is a Python regular expression searched in an error text (a check's exception and
    stderr, or text pasted into ``envcheck explain``); ``cause`` and ``fix`` are templates whose
    ``{name}`` fields are the pattern's named groups or facts helpers of
    :mod:`envcheck.verify.rules`. ``checks`` limits the rule to those verify checks (empty: any);
    ``wsl`` limits it to WSL (true) or to everything else (false); ``os`` to one platform
    (``windows``, ``linux``, ``macos``) when the platform is known. ``example`` is a real message
    the pattern must match (tests hold every rule to it). ``evidence`` says, for the family table,
    what shows the problem: the words of the message, and the verify facts that show it too.
    """

    id: str = ""
    checks: Tuple[str, ...] = ()
    pattern: str = ""
    wsl: Optional[bool] = None
    os: str = ""
    cause: str = ""
    fix: str = ""
    example: str = ""
    evidence: str = ""


@record(frozen=True)
class Limit(Sourced):
    """A named threshold a verify finding compares a fact against (``[[limit]]`` in diagnoses.toml):
    ``shm_small_mib = 1024`` — below it a container's /dev/shm is reported as too small."""

    name: str = ""
    value: float = 0.0
    unit: str = ""


@record(frozen=True)
class Tolerance(Sourced):
    """The largest relative error (Frobenius norm, vs a float64 reference) a verify check accepts."""

    check: str = ""
    dtype: str = ""
    rel_error: float = 0.0

