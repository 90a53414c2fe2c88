"""From a Resolution to a Plan: everything the renderers need, decided once.

A :class:`Plan` pins the chosen build (torch, torchvision, torchaudio with their local version
labels), the index URL (after ``--mirror`` rewriting), the post-install steps, the driver the
machine needs, the conda and Docker choices, and what ``verify`` must find later. Renderers in
:mod:`envcheck.render` only format it.
"""

from __future__ import annotations


from envcheck.record import field, record
from envcheck.errors import UsageError
from envcheck.matrix import Matrix
from envcheck.matrix.model import BaseImage, Marker, Step, vkey
from envcheck.resolve.rules import name_of, python_run, wheel_pythons
from envcheck.resolve.types import Candidate, Resolution

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:
    from envcheck.lock import Expect
    from envcheck.resolve.recipe import RecipeStep
    from envcheck.resolve.conda import CondaChoice

DEFAULT_MIRROR_PREFIX = "https://download.pytorch.org/whl"


def parse_mirrors(values: Sequence[str]) -> List[Tuple[str, str]]:
    """``--mirror URL`` (a mirror of download.pytorch.org/whl) or ``--mirror PREFIX=URL``.

    Returns:
        ``[(prefix, replacement)]``, both without a trailing slash.

    Raises:
        UsageError: not an http(s)/file URL.
    """
    import sys

    from envcheck.edge import CREDENTIALS_HINT, check_url, split_credentials

    out = []
    for v in values:
        from urllib.parse import urlsplit  # only with a --mirror (~3 ms of imports: #9)

        if not isinstance(v, str):
            raise UsageError("--mirror: give a URL")
        prefix, _, url = v.rpartition("=") if "=" in v and v.split("=", 1)[0].startswith(("http", "file")) else ("", "", v)
        prefix = (prefix or DEFAULT_MIRROR_PREFIX).rstrip("/")
        url = url.strip().rstrip("/")
        hint = "; e.g. https://mirror.example/pytorch-whl or PREFIX=URL"
        try:
            check_url(prefix, "--mirror PREFIX")
            check_url(url, "--mirror")
        except UsageError as exc:
            raise UsageError(f"{exc}{hint}") from None
        parts = urlsplit(url)
        if parts.fragment or parts.query:
            raise UsageError(f"--mirror {url!r}: an index URL has no #fragment or ?query (paths are appended to it){hint}")
        url, had = split_credentials(url)
        if had:
            sys.stderr.write("envcheck: warning: the --mirror URL carries credentials; they are left out of every "
                             f"file and of the output (the URL is written as {url}): {CREDENTIALS_HINT}\n")
        out.append((prefix, url))
    return out


def rewrite_url(url: str, mirrors: Sequence[Tuple[str, str]]) -> str:
    """Apply the first mirror whose prefix starts ``url``."""
    for prefix, repl in mirrors:
        if url == prefix or url.startswith(prefix + "/"):
            return repl + url[len(prefix):]
    return url


def cudnn_version_int(cudnn: str) -> int:
    """``"9.7.1.26"`` → 90701, ``"8.9.2.26"`` → 8902: what ``torch.backends.cudnn.version()`` returns.

    cuDNN's ``CUDNN_VERSION`` macro is major*1000+minor*100+patch up to 8.x and
    major*10000+minor*100+patch from 9.0 (cudnn_version.h).
    """
    parts = [int(x) for x in cudnn.split(".")[:3]] + [0, 0]
    major, minor, patch = parts[:3]
    return major * (10000 if major >= 9 else 1000) + minor * 100 + patch


@record
class Plan:
    """A chosen build, ready to render.

    Attributes:
        resolution: the full resolver answer (every candidate and reason).
        candidate: the chosen one.
        python: the Python it targets (``"3.12"``).
        index_url: where pip gets the wheels (mirror applied); ``index_kind`` says how
            (``simple`` → ``--index-url``, ``find-links`` → ``--find-links``).
        pins: ``{"torch": "2.7.0+cu128", "torchvision": "0.22.0+cu128", "torchaudio": …}``;
            a companion absent from the matrix is missing here (and said so in ``notes``).
        requires: packages installed beside the pins by a range, not a pin: ``{"numpy": "<2"}``
            (``""`` = any version) — the NumPy the torch build runs with (``matrices/numpy.toml``).
        steps: post-install steps (matrix ``[[step]]`` rows).
        driver: ``{"vendor", "full", "floor", "side"}`` for CUDA builds, or the Adrenalin minimum
            for ROCm on WSL; empty when none applies.
        conda: the conda-forge build chosen on conda-forge's own terms (its newest ``pytorch`` the
            machine runs, not necessarily the pip release), or ``None`` (``conda_reason`` says
            why) → a pip section inside the environment.
        base_image: the Docker base image row: of the build's backend, and one whose Python is
            the plan's (``base_image_why`` says why there is none).
        container: for a Windows / macOS plan, the plan of the Linux container its Dockerfile holds
            (``container_note`` says how it was re-resolved, or why there is none).
        notes: sentences for comments (why, needs, caveats).
    """

    resolution: Resolution
    candidate: Candidate
    python: str
    index_url: str
    index_kind: str
    pins: Dict[str, str]
    requires: Dict[str, str] = field(default_factory=dict)
    steps: List[Step] = field(default_factory=list)
    driver: Dict[str, str] = field(default_factory=dict)
    driver_floor_for: str = ""  # the GPU architectures whose first driver is driver["floor"] (rules.floor_from_gpus)
    # why the machine's driver runs the build only under minor-version compatibility (the resolver's driver
    # warning), "" when it does not: the recipe's driver step then asks for the floor and says why
    driver_caveat: str = ""
    conda: Optional[CondaChoice] = None  # conda-forge on its own terms (envcheck.resolve.conda)
    conda_reason: str = ""  # why there is none (ROCm, XPU…): the environment uses pip inside conda
    # match specs the environment names beside pytorch (conda.toml [[conda_select]]): python-freethreading,
    # arm-variant=*=tegra … — environment.yml and pixi.toml both write them
    conda_select: List[str] = field(default_factory=list)
    base_image: Optional[BaseImage] = None
    base_image_why: str = ""  # why no row fits (no Dockerfile: its renderer refuses with this line)
    marker: Optional[Marker] = None
    hashes: Dict[str, List[str]] = field(default_factory=dict)  # package -> sha256 (plan --hashes)
    notes: List[str] = field(default_factory=list)
    recipe: List[RecipeStep] = field(default_factory=list)
    mirrors: List[Tuple[str, str]] = field(default_factory=list)
    matrix_index_url: str = ""  # the index URL before --mirror
    offline: str = ""  # a folder of wheels (plan --download): installs use --no-index --find-links it
    # how to make a Windows / macOS plan's Linux container plan (its Dockerfile's), re-resolved
    # (envcheck/resolve/container.py): ``container`` and ``container_note`` work it out when first read —
    # a Dockerfile reads them, a --json plan never does; None for a Linux plan (its own container)
    container_of: Optional[Callable[[], Tuple[Optional[Plan], str]]] = field(default=None, repr=False,
                                                                           compare=False)
    # the companions the user left out (``--without``): no pin, recipe step, conda/pixi dependency
    # or lock names them (one place, :func:`make_plan`)
    without: Tuple[str, ...] = ()
    # the Pythons every pinned wheel has on the machine's platform (rules.wheel_pythons): the range an
    # install file states (uv's requires-python) never reaches past them
    wheel_pythons: Tuple[str, ...] = ()
    # builds the recipe of a plan (recipe.build_recipe with the matrix and this request): conda_plan's
    recipe_of: Optional[Callable[[Plan], List[RecipeStep]]] = field(default=None, repr=False, compare=False)

    def conda_plan(self) -> Plan:
        """This plan as environment.yml and pixi.toml install it: conda-forge's own build (:attr:`conda`)
        needs the driver of ITS cuda-version, so the driver and the recipe's driver step are the conda
        choice's (newcomer6 #3); the plan itself where torch comes from pip or no driver applies."""
        choice = self.conda
        if choice is None or not choice.driver or self.recipe_of is None:
            return self
        from envcheck.record import replace

        view = replace(self, driver=dict(choice.driver), driver_caveat=choice.driver_caveat,
                       driver_floor_for=choice.driver_floor_for)
        view.recipe = self.recipe_of(view)
        return view

    def python_span(self) -> Tuple[str, str]:
        """(lowest, highest) Python of the unbroken run every pinned wheel has around the planned one
        (the planned one alone when no list on record holds it)."""
        want = self.python.rstrip("t")
        return python_run(self.wheel_pythons, self.python) or (want, want)

    @property
    def machine(self):
        return self.resolution.machine

    @property
    def container(self) -> Optional[Plan]:
        """A Windows / macOS plan's Linux container plan; ``None`` for a Linux plan (its own container)
        or when nothing fits the container (:attr:`container_note` says why)."""
        return self._container()[0]

    @property
    def container_note(self) -> str:
        """How the container plan was made, or why there is none (``""`` for a Linux plan)."""
        return self._container()[1]

    def _container(self) -> Tuple[Optional[Plan], str]:
        if self.container_of is None:
            return None, ""
        made = self.__dict__.get("_container_made")
        if made is None:
            made = self.__dict__["_container_made"] = self.container_of()
        return made

    @property
    def build(self):
        return self.candidate.build

    @property
    def release(self):
        return self.candidate.release

    @property
    def title(self) -> str:
        return name_of(self.candidate)

    def hosts(self) -> List[str]:
        """The hosts a firewall must allow for this plan's installs (none for an offline plan)."""
        from envcheck.edge import host_of

        if self.offline:
            return []
        out: List[str] = []
        if self.build.channel != "pypi":
            host = host_of(self.index_url)
            if host:
                out.append(host)
        if self.build.channel == "pypi" or self.index_kind == "find-links":
            out += ["pypi.org", "files.pythonhosted.org"]  # pip's default index serves the rest
        return list(dict.fromkeys(out))

    def mirror_report(self) -> List[str]:
        """What ``--mirror`` did not rewrite, in sentences (empty without --mirror)."""
        if not self.mirrors:
            return []
        out = []
        if self.build.channel != "pypi" and self.index_url == self.matrix_index_url:
            out.append(f"--mirror did not rewrite {self.index_url}: no mirror prefix matches it "
                       "(give --mirror PREFIX=URL for that index)")
        if self.build.channel == "pypi" or self.index_kind == "find-links":
            out.append("--mirror does not rewrite PyPI: dependencies come from pip's configured index "
                       "(PIP_INDEX_URL or pip.conf index-url pointed at your PyPI mirror)")
        return out

    def pip_lines(self) -> List[str]:
        """The requirement lines (index option first), without comments."""
        lines = [self.index_option] if self.index_option else []
        for pkg, ver in self.pins.items():
            hashes = self.hashes.get(pkg, [])
            lines.append(f"{pkg}=={ver}" + "".join(f" --hash=sha256:{h}" for h in hashes))
        return lines + self.range_requirements()

    def range_requirements(self) -> List[str]:
        """``["numpy<2"]``: what the plan installs by a range beside its pins (:attr:`requires`)."""
        return [f"{pkg}{spec}" for pkg, spec in self.requires.items()]

    def requirements(self) -> List[str]:
        """Every requirement of the one install, as pip reads it: ``torch==…``, ``torchvision==…``,
        then ``numpy<2`` (unquoted: each caller quotes for its shell or file)."""
        return [f"{k}=={v}" for k, v in self.pins.items()] + self.range_requirements()

    def pip_install_args(self, reinstall: bool = False) -> List[str]:
        """The words after the interpreter of the one install command: ``-m pip install --index-url URL
        torch==… torchvision==… numpy<2`` (verify/explain fixes quote them for the environment's shell)."""
        opt = self.index_option_name.split() + [self.index_location] if self.index_option else []
        return (["-m", "pip", "install"] + (["--force-reinstall"] if reinstall else []) + opt
                + self.requirements())

    @property
    def index_option(self) -> str:
        """``--index-url URL`` / ``--find-links URL``; empty for plain PyPI (pip's configured index)."""
        if self.offline:
            return f"--no-index --find-links {self.offline}"
        if self.build.channel == "pypi":
            return ""
        return f"{self.index_option_name} {self.index_url}"

    @property
    def index_option_name(self) -> str:
        """The option(s) before :attr:`index_location`: ``--index-url``, ``--find-links``, or
        ``--no-index --find-links`` for a downloaded plan."""
        if self.offline:
            return "--no-index --find-links"
        return "--index-url" if self.index_kind == "simple" else "--find-links"

    @property
    def index_location(self) -> str:
        """The URL or folder of :attr:`index_option` (one shell word, however it is spelled)."""
        return str(self.offline) if self.offline else self.index_url

    @property
    def env(self) -> Dict[str, str]:
        """Environment variables the build needs at run time (from its post-install steps)."""
        out: Dict[str, str] = {}
        for s in self.steps:
            out.update(s.env)
        return out

    def expect(self) -> Expect:
        """What ``envcheck verify`` must find in an environment installed from this plan."""
        from envcheck.lock import Expect

        b = self.build
        gpus = self.machine.served_gpus
        return Expect(
            torch_version=self.pins["torch"], variant=b.variant, python=self.python,
            torchvision=self.pins.get("torchvision"), torchaudio=self.pins.get("torchaudio"),
            cuda=".".join(b.cuda.split(".")[:2]) if b.cuda else None,
            cudnn=b.cudnn or None, cudnn_version=cudnn_version_int(b.cudnn) if b.cudnn else None,
            nccl=b.nccl or None,
            hip=".".join(b.rocm.split(".")[:2]) if b.rocm else None,
            arch_list=tuple(b.gfx) if b.rocm else tuple(b.sm) + tuple(b.ptx) if b.cuda else (),
            gpu_arch=tuple(sorted({g.arch for g in gpus})) if gpus else (),
            driver=dict(self.driver),
            post_install=tuple(s.key for s in self.steps),
            mps=bool(b.mps),
            numpy=self.range_requirements()[0] if "numpy" in self.requires else None,
        )

def _driver_caveat(c: Candidate) -> str:
    """The resolver's reason when it accepted the driver under minor-version compatibility only (its
    driver warning: one answer), ``""`` when the driver gives full support or is not known."""
    if c.fit.driver != "minor":
        return ""
    return next((w.message for w in c.warnings if w.code == "driver"), "CUDA minor-version compatibility")


def image_python(matrix: Matrix, row: BaseImage) -> Optional[str]:
    """The one Python an image ships (its distribution's python3, platforms.toml), or ``None`` when the
    row serves more than one (its tag names the Python, or uv installs it)."""
    if not row.distro:
        return None
    d = next((x for x in matrix.distros if x.id == row.distro), None)
    return d.python3 if d is not None else None


def python_unserved(matrix: Matrix, row: BaseImage, python: str) -> str:
    """Why the image cannot hold Python ``python`` (``"3.10"``, ``"3.13t"``), or ``""`` when it can."""
    if not python:
        return ""
    if python.endswith("t") and not row.freethreaded:
        return f"{row.image} has no free-threaded Python"
    own = image_python(matrix, row)
    if own is not None and own != python:
        return f"{row.image} ships Python {own} ({row.distro}'s python3), not {python}"
    return ""


def _base_image(matrix: Matrix, c: Candidate, wsl: bool, python: str) -> Tuple[Optional[BaseImage], str]:
    """The first ``[[base_image]]`` row of the build's backend whose Python is the plan's, or ``None`` and
    why (a Dockerfile whose image holds another Python installs wheels pip refuses)."""
    b = c.build
    kind = "rocm-wsl" if (b.wsl and wsl) else b.backend if b.backend != "mps" else "cpu"
    rows = [r for r in matrix.base_images if r.backend == kind and r.tegra == bool(b.tegra)]
    if kind == "cuda" and b.cuda:
        major = int(b.cuda.split(".")[0])
        rows = [r for r in rows if r.cuda_major in (None, major)] or rows
        if b.tegra:  # the L4T image must carry the CUDA (and cuDNN) the Jetson wheel links
            rows = [r for r in rows if r.cuda == ".".join(b.cuda.split(".")[:2])]
    if kind == "rocm-wsl" and b.rocm:
        exact = [r for r in rows if r.rocm and vkey(r.rocm) == vkey(b.rocm)]
        rows = [r for r in exact or rows if not r.rocm_min or vkey(b.rocm) >= vkey(r.rocm_min)]
    what = f"{kind} backend" + (f" on Jetson ({b.variant} for JetPack)" if b.tegra else "")
    if not rows:
        return None, f"no Docker base image on record for the {what} (matrices/docker.toml)"
    fits = [r for r in rows if not python_unserved(matrix, r, python)]
    if fits:
        return fits[0], ""
    return None, (f"no Docker base image on record with Python {python} for the {what} (matrices/docker.toml: "
                  + "; ".join(python_unserved(matrix, r, python) for r in rows) + ")")


def make_plan(res: Resolution, matrix: Matrix, mirrors: Sequence[Tuple[str, str]] = (),
              hashes: bool = False, without: Sequence[str] = ()) -> Optional[Plan]:
    """The plan for the chosen candidate of ``res`` (``None`` when nothing was accepted).

    Args:
        hashes: pin every wheel of the chosen build for the target platform and Python with its
            sha256 (from ``envcheck matrix update`` data).
        without: companions to leave out (``--without torchvision``): applied here, before the
            recipe, hashes, conda choice and container plan are made from the pins, so that no
            output format can install one (said in the notes).

    Raises:
        IndexDataMissing: ``hashes`` asked for, but the index data lacks those files (exit 1).
    """
    c = res.chosen
    if c is None:
        return None
    b, r = c.build, c.release
    ch = matrix.channel(b.channel)
    from envcheck.edge import check_url, split_credentials

    original_url = ch.url_for(b.variant)
    # the URL lands in shell commands and every file: it must be a plain http(s)/file URL (a
    # --matrices folder or a lock is outside input too), and never carry credentials
    index_url = split_credentials(check_url(rewrite_url(original_url, mirrors), "index URL"))[0]
    notes: List[str] = []

    label = b.version_of
    pins: Dict[str, str] = {"torch": b.pins.get("torch", label(r.version))}
    left_out = tuple(sorted(set(without)))
    for pkg in ("torchvision", "torchaudio"):
        if pkg in left_out:
            continue
        if pkg in c.fit.companions_missing:
            notes.append(f"{pkg}: no wheel for Python {c.python} on {res.machine.platform} (matrices/companions.toml); "
                         "not pinned")
        elif pkg in b.pins:
            pins[pkg] = b.pins[pkg]
        elif b.tegra and ch.kind != "simple":  # NVIDIA's JetPack wheel folders (find-links) carry torch only
            notes.append(f"{pkg}: NVIDIA's JetPack folder publishes torch only (torch-builds-jetson.toml); not "
                         "pinned (build it from source or take it from the Jetson AI Lab index)")
        elif getattr(r, pkg):
            pins[pkg] = label(getattr(r, pkg))
        elif b.channel == "nightly":
            notes.append(f"{pkg}: install the nightly of the same date from the same index "
                         f"(`pip install --pre {pkg} --index-url {index_url}`); not pinned")
        else:
            notes.append(f"{pkg}: no release pairs with torch {r.version} on record; not pinned")
    if left_out:
        notes.append("left out on request (--without): " + ", ".join(left_out))
    requires: Dict[str, str] = {}
    np_row = matrix.numpy_for(r.version, b.channel, res.machine.platform)
    if np_row is not None:  # torch never requires numpy itself, yet uses it when present
        requires["numpy"] = np_row.requires
    else:
        notes.append(f"numpy: no row in matrices/numpy.toml says which NumPy torch {r.version} from {b.channel} "
                     "runs with; not added (pip picks one when a companion needs it)")
    steps = [matrix.steps[k] for k in b.post_install if k in matrix.steps]
    tw = c.fit.triton_windows
    if tw is not None and tw.step in matrix.steps:
        steps.append(matrix.steps[tw.step])
    driver: Dict[str, str] = {}
    floor_for = ""
    if b.backend == "cuda" and not b.tegra and (c.fit.driver_full or c.fit.driver_floor):
        full, floor = c.fit.driver_full, c.fit.driver_floor
        side = "windows" if (res.machine.os == "windows" or res.machine.wsl) else "linux"
        driver = {k: v for k, v in (("vendor", "nvidia"), ("side", side), ("full", full), ("floor", floor),
                                    ("last_branch", c.fit.driver_last_branch)) if v}
        from envcheck.resolve.rules import floor_from_gpus

        floor_for = floor_from_gpus(matrix, b.cuda or "", side == "windows",
                                    [g for g in res.machine.served_gpus if g.vendor == "nvidia"])
    rel = c.fit.wsl_release
    if rel is not None and rel.adrenalin_min:
        driver = {"vendor": "amd", "side": "windows", "full": rel.adrenalin_min}
    python = c.python or ""
    digests: Dict[str, List[str]] = {}
    if hashes:
        from envcheck.matrix.index.hashes import wheel_hashes

        companions = {k: v for k, v in pins.items() if k != "torch"}
        digests = wheel_hashes(matrix, r.version, b.variant, companions, res.machine.platform,
                               c.python or "", b.channel)
    from envcheck.resolve.conda import choose_conda, select_specs

    conda = choose_conda(matrix, res.machine, res.request, b.backend, res.machine.python or "", c.python or "")
    image = _base_image(matrix, c, res.machine.wsl, python)
    plan = Plan(
        resolution=res,
        candidate=c,
        python=python,
        index_url=index_url,
        index_kind=ch.kind,
        pins=pins,
        requires=requires,
        steps=steps,
        driver=driver,
        driver_floor_for=floor_for,
        driver_caveat=_driver_caveat(c),
        conda=conda[0],
        conda_reason=conda[1],
        conda_select=select_specs(matrix, res.machine, conda[0], python),
        base_image=image[0],
        base_image_why=image[1],
        marker=matrix.markers.get(res.machine.platform),
        hashes=digests,
        notes=notes,
        mirrors=list(mirrors),
        without=left_out,
        wheel_pythons=wheel_pythons(matrix, c, res.machine.platform, pins),
    )
    plan.matrix_index_url = original_url
    from envcheck.resolve.recipe import build_recipe

    plan.recipe = build_recipe(plan, matrix, res.request.compile, steps)
    plan.recipe_of = lambda p: build_recipe(p, matrix, res.request.compile, steps)
    if res.machine.os != "linux":  # a Dockerfile is a Linux container: its own plan, made when asked for
        from envcheck.resolve.container import container_plan

        plan.container_of = lambda: container_plan(res, matrix, mirrors, left_out)
    return plan
