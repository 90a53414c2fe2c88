"""The compatibility matrix: every fact envcheck decides from, loaded from ``matrices/``.

Use :func:`load_matrix` (cached per folder). Lookups that need judgement — which CUDA toolkit row a
build's ``cuda`` names, the glibc floor of a wheel tag, which GPU a typed name means — live on
:class:`Matrix` so the resolver stays a pure function of its inputs.
"""

from __future__ import annotations

import collections.abc
import os
import re
import sys
from functools import cached_property, lru_cache

from envcheck.errors import DataFileError, UnknownGpuError, UsageError
from envcheck.jsontypes import cast
from envcheck.matrix import model as m
from envcheck.matrix.model import vkey

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path
    from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

    from envcheck.matrix.index.data import IndexData
# Paths are strings on a plan's way (os.path): pathlib's import, with the urllib.parse and ipaddress
# it pulls in, is ~5 ms of every start (#9). The functions that hand a folder to other modules
# (resource_dir, default_matrix_dir, Matrix.directory) still give a Path, made when asked.

__all__ = ["Matrix", "load_matrix", "default_matrix_dir", "normalize_gpu_name"]

_PKG = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def resource_path(name: str) -> str:
    """A data folder shipped with envcheck (``matrices``, ``dockerfiles``, ``conda``), as a string.

    Installed wheels carry them inside the package (``envcheck/_data/<name>``); a source checkout
    has them at the repository root.
    """
    inside = os.path.join(_PKG, "_data", name)
    return inside if os.path.isdir(inside) else os.path.join(os.path.dirname(_PKG), name)


def resource_dir(name: str) -> Path:
    """:func:`resource_path` as a :class:`pathlib.Path`."""
    from pathlib import Path

    return Path(resource_path(name))


def _default_matrix_path() -> str:
    env = os.environ.get("ENVCHECK_MATRICES")
    return env if env else resource_path("matrices")


def default_matrix_dir() -> Path:
    """``$ENVCHECK_MATRICES`` if set, else the matrices shipped with envcheck."""
    from pathlib import Path

    return Path(_default_matrix_path())


# Patterns only some lookups use are kept as text, compiled (and cached by ``re``) on first use.
#: a PCI vendor:device id as lspci prints it ("10de:2504"), or as Windows names the device in its hardware ids
#: and Device Manager ("PCI\\VEN_10DE&DEV_2504&SUBSYS_881D1043&REV_A1"); case-insensitive
_PCI_ID = r"\b(10de|1002|8086):([0-9a-fA-F]{4})\b|\bVEN_(10de|1002|8086)&DEV_([0-9a-f]{4})(?![0-9a-f])"
_PCI_VENDOR = {"10de": "nvidia", "1002": "amd", "8086": "intel"}
#: vendor and brand words people and tools put before a chip codename ("NVIDIA GeForce GK104", "AMD Navi 31",
#: lspci's "Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [...]")
_VENDOR_PREFIX = (r"^(?:(?:nvidia(?: corporation)?|advanced micro devices,? inc\.? \[amd/ati\]|amd|ati"
                  r"|geforce|tesla|quadro|radeon)\s+)+")  # case-insensitive
#: what the PCI database appends to a codename for a variant of the chip: GM200GL, TU106M, GA104GLM; Vega 10 XL/XT/XTX
_CODENAME_SUFFIX = r"(?:[A-Z]{0,3}| X[LT]X?)"


def _bracket_names(device: str) -> List[str]:
    """``"Ellesmere [Radeon RX 470/480/570/580]"`` → ``["Radeon RX 470", "Radeon RX 480", …]``."""
    _, _, bracket = device.partition("[")
    parts = [p.strip() for p in bracket.rstrip("]").split("/") if p.strip()]
    if not parts:
        return []
    # the series words before the first model number ("Radeon RX " of "Radeon RX 6650 XT / 6700S / 6800S")
    series = re.match(r"(.*?\s)(?=\S*\d)", parts[0])
    prefix = series.group(1) if series else (parts[0].rsplit(" ", 1)[0] + " " if " " in parts[0] else "")
    return [parts[0]] + [p if " " in p and not p[0].isdigit() else prefix + p for p in parts[1:]]


_VENDOR_WORDS = re.compile(r"\b(nvidia|geforce|amd|radeon|intel|apple|graphics)\b")


def normalize_gpu_name(text: str) -> str:
    """``"NVIDIA GeForce RTX 4090"`` → ``"rtx4090"``: lower case, vendor words and spaces removed."""
    t = _VENDOR_WORDS.sub(" ", text.lower().replace("(tm)", "").replace("(r)", ""))
    return re.sub(r"[^a-z0-9]", "", t)


#: the series word before a model number ("rtx4090" → "4090"), for names without it
_STRIP_PREFIX = r"^(rtx|gtx|rx|tesla|quadro|instinct|arc)(?=\w)"
#: a memory size after the model ("h10080gb" → "h100")
_MEMORY_SUFFIX = r"\d+gb.*$"

#: what tools print around a model name, taken off one piece at a time when the whole text is unknown:
#: the list prefix of `torch.utils.collect_env` / `nvidia-smi -L` ("GPU 0: NVIDIA GH200 480GB"), the gfx
#: target collect_env appends on ROCm ("AMD Instinct MI300X (gfx942:sramecc+:xnack-)"), and trailing
#: memory, form factor and kind words ("Intel(R) Arc(TM) 140V GPU (16GB)", "NVIDIA B300 SXM6 AC",
#: "AMD Instinct MI300X OAM", rocminfo's "AMD Instinct MI300A Accelerator" and "Radeon RX 580 Series",
#: "Tesla V100 32GB"); case-insensitive, text compiled on first use (only an unknown name needs them)
_LISTING_PREFIX = r"^\s*gpu\s*\d+\s*:\s*"
_TARGET_SUFFIX = r"\s*\((gfx[0-9a-f]{3,4})(?::[^)]*)?\)\s*$"
_APU_GPU = r"\s+w/\s+"  # "<CPU> w/ <GPU>": an AMD APU's model name (lscpu, /proc/cpuinfo)
_TRAILING_WORD = (r"[\s_-]+\(?(?:\d+\s*gb|gpu|accelerator|series|sxm\d*|pcie|oam|nvl|hbm\d*e?|ac"
                  r"|processor|\d+-core)\)?\s*$")  # lscpu's "AMD Ryzen 7 7700X 8-Core Processor" too


def printed_forms(text: str) -> List[str]:
    """The shorter names inside a GPU name as a tool prints it, longest first: ``"AMD Instinct MI250X/MI250
    (gfx90a:sramecc+:xnack-)"`` → ``["AMD Instinct MI250X/MI250", "AMD Instinct MI250X"]``. Only words that
    never tell two models apart are taken off (never "Laptop", "Ti", "SUPER"…); ``A/B`` (amdgpu.ids names
    one device for two products) keeps ``A``. An APU as lscpu and /proc/cpuinfo print it, ``"AMD Ryzen 7
    7840HS w/ Radeon 780M Graphics"``, is its GPU, the part after ``w/``."""
    out: List[str] = []
    t = re.sub(_TARGET_SUFFIX, "", re.sub(_LISTING_PREFIX, "", text, flags=re.I), flags=re.I).strip()
    t = re.split(_APU_GPU, t, maxsplit=1, flags=re.I)[-1].strip()
    while normalize_gpu_name(t):
        out.append(t)
        if "/" in t and "[" not in t:  # a PCI database name ("Navi 21 [RX 6800/6800 XT]") is another path
            out.append(t.split("/")[0].strip())
        shorter = re.sub(_TRAILING_WORD, "", t, flags=re.I).strip()
        if shorter == t:
            break
        t = shorter
    return [f for f in dict.fromkeys(out) if f != text]


def printed_target(text: str) -> Optional[str]:
    """The gfx target collect_env prints after an AMD GPU's name (``"… (gfx906:sramecc+:xnack-)"``), if any."""
    if "(" not in text:  # (the suffix is in parentheses: most names need no pattern compiled)
        return None
    mt = re.search(_TARGET_SUFFIX, text, re.I)
    return mt.group(1).lower() if mt else None


class Matrix:
    """All matrix rows, indexed for the resolver.

    Attributes (all read-only by convention):
        releases: torch releases, newest first.
        builds: every build row (each may cover several releases).
        channels, toolkits, families, archs, gpus, rocm_wsl, steps, distros, manylinux,
        conda_forge, pytorch_channel, base_images, ci_targets, container_routes: see matrices/README.md.
        index_updates, index_wheels: the generated index rows (``generated-index-*.toml``); query
            them through :meth:`index_data`.
        directory: the folder the rows were read from.
    """

    def __init__(self, directory: str | os.PathLike[str], files: Mapping[str, Mapping[str, list]],
                 gpu_keys: Optional[Dict[str, int]] = None):
        """``files``: rows by file and table name (:func:`envcheck.matrix.load.load_dir`); ``gpu_keys``:
        :meth:`gpu_key_positions` of these rows when known (the cache keeps it), else made on first use."""
        self._directory = os.fspath(directory)
        self.files = files

        rows = self._rows
        self.releases: List[m.Release] = sorted(
            rows("release", "torch-releases"), key=lambda r: vkey(r.version), reverse=True
        )
        self.release_by_version: Dict[str, m.Release] = {r.version: r for r in self.releases}
        self.builds: List[m.Build] = rows("build")
        self.channels: Dict[str, m.Channel] = {c.name: c for c in rows("channel")}
        self.toolkits: List[m.Toolkit] = sorted(rows("toolkit"), key=lambda t: vkey(t.version))
        self.families: Dict[int, m.Family] = {f.major: f for f in rows("family")}
        self.archs: Dict[str, m.NvArch] = {a.sm: a for a in rows("arch")}
        self.gpus: List[m.Gpu] = rows("gpu")
        self.recipe: List[m.RecipeRow] = rows("recipe")
        self.manylinux: Dict[str, m.ManylinuxAlias] = {a.tag: a for a in rows("manylinux")}
        self.markers: Dict[str, m.Marker] = {x.platform: x for x in rows("marker")}
        self.companions: Dict[Tuple[str, str], m.Companion] = {(x.package, x.version): x for x in rows("companion")}
        self.cudnn_floors: List[m.CudnnFloor] = rows("cudnn_floor")
        self._pci: Optional[Tuple[Dict[str, str], Dict[str, Tuple[str, str]]]] = None
        self.numpy_rows: List[m.NumpyRow] = rows("numpy")
        self.conda_forge: List[m.CondaForgeRow] = rows("conda_forge")
        self.conda_selects: List[m.CondaSelect] = rows("conda_select")
        self.base_images: List[m.BaseImage] = rows("base_image")
        self.index_updates: List[m.IndexUpdate] = rows("update", "generated-index")
        self.index_wheels: List[m.IndexWheels] = rows("wheels", "generated-index")
        self._index_data: Optional[IndexData] = None
        self._builds_by_release: Dict[str, List[m.Build]] = {}
        for b in self.builds:
            for v in b.torch:
                self._builds_by_release.setdefault(v, []).append(b)
        self._gpu_index: Optional[Dict[str, m.Gpu]] = (
            None if gpu_keys is None else {k: self.gpus[i] for k, i in gpu_keys.items()})
        #: answers of the lookups the resolver asks for every candidate ((method, argument) → row);
        #: the rows never change after loading
        self._memo: Dict[Tuple[str, str], object] = {}

    def _rows(self, table: str, file_prefix: str = "") -> list:
        """The rows of every ``table`` table, in file order (of the files whose name starts with
        ``file_prefix``); a cached table is rebuilt into rows only when read here."""
        out: list = []
        for fname, tables in self.files.items():
            if fname.startswith(file_prefix) and table in tables:
                out.extend(tables[table])
        return out

    # -- tables only some plans read (AMD, WSL, Jetson, Intel, containers): made on first use ----------
    @cached_property
    def xpu_families(self) -> Dict[str, m.XpuFamily]:
        return {a: f for f in self._rows("xpu_family") for a in f.archs}

    @cached_property
    def rocm_wsl(self) -> List[m.RocmWslRelease]:
        return self._rows("release", "rocm-wsl")

    @cached_property
    def steps(self) -> Dict[str, m.Step]:
        return {s.key: s for s in self._rows("step")}

    @cached_property
    def amd_routes(self) -> List[m.AmdRoute]:
        return self._rows("route", "amd-routes")

    @cached_property
    def distros(self) -> List[m.Distro]:
        return self._rows("distro")

    @cached_property
    def rocm_os(self) -> Dict[str, m.RocmOs]:
        return {x.rocm: x for x in self._rows("rocm_os")}

    @cached_property
    def triton_windows(self) -> Dict[str, m.TritonWindows]:
        return {x.torch: x for x in self._rows("triton_windows")}

    @cached_property
    def chips(self) -> List[m.Chip]:
        return self._rows("chip")

    @cached_property
    def blas_gaps(self) -> List[m.BlasGap]:
        return self._rows("blas_gap")

    @cached_property
    def kernel_drivers(self) -> List[m.KernelDriver]:
        return self._rows("kernel_driver")

    @cached_property
    def jetpacks(self) -> List[m.JetpackGen]:
        return self._rows("jetpack")

    @cached_property
    def pytorch_channel(self) -> List[m.PytorchChannelRow]:
        return self._rows("pytorch_channel")

    @cached_property
    def variant_providers(self) -> Dict[str, m.VariantProvider]:
        return {x.vendor: x for x in self._rows("variant_provider")}

    @cached_property
    def ci_targets(self) -> List[m.CiTarget]:
        return self._rows("ci_target")

    @cached_property
    def container_routes(self) -> List[m.ContainerRoute]:
        return self._rows("container_route")

    # -- torch -----------------------------------------------------------------------------
    def builds_for(self, version: str) -> List[m.Build]:
        """Every build row that covers torch ``version`` (order as in the files)."""
        return self._builds_by_release.get(version, [])

    def numpy_for(self, torch: str, channel: str, platform: str) -> Optional[m.NumpyRow]:
        """The ``numpy.toml`` row for torch ``torch`` from ``channel`` on ``platform``: the first
        that covers all three (file order), or ``None`` when none does."""
        return next((r for r in self.numpy_rows if r.covers(torch, channel, platform)), None)

    def channel(self, name: str) -> m.Channel:
        """The channel row ``name``.

        Raises:
            DataFileError: no such channel (a cross-reference the validator also checks).
        """
        try:
            return self.channels[name]
        except KeyError:
            raise DataFileError(self.directory, f"channel {name!r}", "no [[channel]] row") from None

    # -- CUDA --------------------------------------------------------------------------------
    def toolkit(self, cuda: str) -> Optional[m.Toolkit]:
        """The toolkit row for a build's ``cuda`` (``"12.8.0"``); for a bare ``"12.8"`` the GA row."""
        key = ("toolkit", cuda)
        if key not in self._memo:
            self._memo[key] = self._toolkit(cuda)
        return cast("Optional[m.Toolkit]", self._memo[key])

    def _toolkit(self, cuda: str) -> Optional[m.Toolkit]:
        want = vkey(cuda)
        for t in self.toolkits:
            if vkey(t.version) == want:
                return t
        mm = want.release[:2]
        same = [t for t in self.toolkits if vkey(t.version).release[:2] == mm]
        return same[0] if same else None

    def first_toolkit(self, cuda: str) -> Optional[m.Toolkit]:
        """The first toolkit row of ``cuda``'s major.minor (``"13.0.2"`` -> the 13.0 GA row): its driver is
        the first to support that CUDA major.minor, which is all a driver's and a runtime's CUDA version
        encode (``1000*major + 10*minor``), so it fully supports every update of that minor (cuda.toml)."""
        mm = vkey(cuda).release[:2]
        return next((t for t in self.toolkits if vkey(t.version).release[:2] == mm), None)

    def cuda_for_driver(self, driver: str, windows: bool) -> Optional[str]:
        """The newest CUDA (``"12.8"``) whose toolkit driver (cuda.toml, the Linux or Windows column)
        ``driver`` reaches: the CUDA the driver fully supports, as far as the rows say."""
        best = None
        for tk in self.toolkits:
            need = tk.driver_windows if windows else tk.driver_linux
            if need and vkey(driver) >= vkey(need) and (best is None or vkey(tk.version) > vkey(best)):
                best = tk.version
        return ".".join(best.split(".")[:2]) if best else None

    def family(self, cuda: str) -> Optional[m.Family]:
        """The minor-version-compatibility family row that covers CUDA ``cuda``, if any."""
        v = vkey(cuda).release
        fam = self.families.get(v[0])
        if fam and (len(v) < 2 or v[1] >= fam.min_minor):
            return fam
        return None

    def nv_arch(self, sm: str) -> Optional[m.NvArch]:
        return self.archs.get(sm)

    # -- platform facts ---------------------------------------------------------------------
    def glibc_floor(self, wheel_tag: str) -> Optional[str]:
        """glibc a Linux wheel needs: from a PEP 600 tag's name, or a legacy alias row.

        ``None`` for tags that state no floor (``linux_x86_64``) or non-Linux tags.
        """
        key = ("glibc_floor", wheel_tag)
        if key not in self._memo:
            self._memo[key] = self._glibc_floor(wheel_tag)
        return cast("Optional[str]", self._memo[key])

    def _glibc_floor(self, wheel_tag: str) -> Optional[str]:
        floors = []
        for tag in wheel_tag.split("."):  # a compressed tag set needs only its lowest floor
            mt = re.match(r"manylinux_(\d+)_(\d+)_", tag)
            if mt:
                floors.append(f"{mt.group(1)}.{mt.group(2)}")
            alias = self.manylinux.get(re.sub(r"_(x86_64|aarch64|i686|ppc64le|s390x)$", "", tag))
            if alias:
                floors.append(alias.glibc)
        return min(floors, key=vkey) if floors else None

    @staticmethod
    def macos_floor(wheel_tag: str) -> Optional[str]:
        """``macosx_14_0_arm64`` → ``"14.0"``."""
        mt = re.match(r"macosx_(\d+)_(\d+)_", wheel_tag)
        return f"{mt.group(1)}.{mt.group(2)}" if mt else None

    def find_distro(self, query: str) -> m.Distro:
        """A distro by id, name or alias (``centos7``, ``Ubuntu 22.04``, ``jammy``).

        Raises:
            UsageError: unknown distro, with close matches.
        """
        key = re.sub(r"[^a-z0-9.]", "", query.lower())
        index: Dict[str, m.Distro] = {}
        for d in self.distros:
            for n in (d.id, d.name, *d.aliases):
                index.setdefault(re.sub(r"[^a-z0-9.]", "", n.lower()), d)
        if key in index:
            return index[key]
        import difflib  # only for an unknown name: not on every run's import path

        close = difflib.get_close_matches(key, list(index), n=4, cutoff=0.6)
        names = list(dict.fromkeys(index[c].id for c in close))
        hint = f"; did you mean: {', '.join(names)}" if names else ""
        raise UsageError(
            f"unknown distro {query!r}{hint}\n  known: "
            + ", ".join(d.id for d in self.distros)
            + "\n  or give the glibc directly: --glibc 2.28"
        )

    def distro_for_os_release(self, fields: Dict[str, str]) -> Optional[m.Distro]:
        """The distro row whose ``os_release`` ID/VERSION_ID match ``/etc/os-release`` fields."""
        for d in self.distros:
            want = d.os_release
            if want and all(fields.get(k, "").strip('"') == v for k, v in want.items()):
                return d
        return None

    # -- GPUs --------------------------------------------------------------------------------
    def _gpu_keys(self) -> Dict[str, m.Gpu]:
        if self._gpu_index is None:
            exact: Dict[str, m.Gpu] = {}
            loose: Dict[str, List[m.Gpu]] = {}
            for g in self.gpus:
                for n in (g.name, *g.aliases):
                    exact.setdefault(normalize_gpu_name(n), g)
                k = re.sub(_STRIP_PREFIX, "", normalize_gpu_name(g.name))
                loose.setdefault(k, []).append(g)
            for k, gs in loose.items():
                if k and len({g.name for g in gs}) == 1:
                    exact.setdefault(k, gs[0])
            self._gpu_index = exact
        return self._gpu_index

    def gpu_key_positions(self) -> Dict[str, int]:
        """The lookup :meth:`find_gpu` matches names in — normalized name, alias or unambiguous name
        without its series prefix → position in :attr:`gpus` — as plain data, for the cache to keep
        (normalizing ~1,500 names costs more than loading the rows)."""
        position = {id(g): i for i, g in enumerate(self.gpus)}
        return {k: position[id(g)] for k, g in self._gpu_keys().items()}

    def find_gpu(self, query: str) -> m.Gpu:
        """The GPU a person means by ``query`` (``7900xtx``, ``RTX 4090``, ``H100``).

        Matching ignores case, spaces, punctuation and vendor words; aliases come from the data.

        Raises:
            UnknownGpuError: no match; carries close matches.
        """
        found = self.named_gpu(query)
        if found is not None:
            return found
        index = self._gpu_keys()
        key = normalize_gpu_name(query)
        if not key and not re.search(_PCI_ID, query, re.I):  # only vendor words ("NVIDIA GeForce", "AMD Radeon Graphics")
            raise UnknownGpuError(query, [], generic=True)
        starts = sorted(k for k in index if key and k.startswith(key))  # "rtx" → RTX cards first
        import difflib  # only for an unknown name

        close = starts[:8] + difflib.get_close_matches(key, list(index), n=8, cutoff=0.6)
        names = list(dict.fromkeys(index[c].name for c in close))[:5]
        raise UnknownGpuError(query, names)

    def named_gpu(self, query: str, whole: bool = False, pci: bool = True) -> Optional[m.Gpu]:
        """The GPU ``query`` names, or ``None`` (no close matches are looked for: cheap to ask).

        ``whole``: only a name on record as it is (case, spaces, punctuation and vendor words aside).
        Otherwise also the forms that leave part of the text out: a memory size and what follows it,
        a PCI id or codename inside it, and what tools print around a name (:func:`printed_forms`:
        a list prefix, a ``(gfxN)`` suffix, the CPU before an APU's ``w/``). ``pci=False``: not
        through the PCI ID database (whose bracket names hold generic ones: "Radeon Instinct").
        """
        index = self._gpu_keys()
        key = normalize_gpu_name(query)
        if not key and not re.search(_PCI_ID, query, re.I):  # only vendor words ("NVIDIA GeForce", "AMD Radeon Graphics")
            return None
        if key and key in index:
            return index[key]
        if whole:
            return None
        bare = re.sub(_MEMORY_SUFFIX, "", key)
        if bare and bare in index:
            return index[bare]
        found = self.pci_gpu(query) if pci else None
        if found is not None:
            return found
        for form in printed_forms(query):  # "GPU 0: NVIDIA B300 SXM6 AC" → "NVIDIA B300"
            k = normalize_gpu_name(form)
            found = index.get(k) or (self.pci_gpu(form) if pci else None)
            if found is not None:
                return found
        return None

    def names_one_gpu(self, words: Sequence[str]) -> bool:
        """True when ``words`` (unquoted ``--gpu`` words) name one GPU and every word is understood:
        a name on record, a PCI id or a chip codename alone (``GA100``, ``Navi 31``; the CPU model of
        an APU), an architecture, or one of those as tools print it, where only words that name nothing
        are around it: a list prefix (``GPU 0:``), memory and form-factor words (``80GB HBM3``, ``8-Core
        Processor``), the vendor words before it, a ``(gfxN)`` after it, ``A / B`` (one device, two
        products of one architecture), an AMD CPU model before an APU's ``w/`` (or, before ``with``
        and vendor words, the CPU model that names the APU). Nothing is searched for inside the text:
        ``GA100 H100``, ``H100 Foo (gfx1100)`` and ``H100 AMD`` are not one GPU (breaker6 F1). A count
        (``2x A100``) and an architecture alone (``sm_90``) are the caller's (machine.describe's) to read."""
        ws = [w for w in words if w]
        if not ws or not any(c.isalnum() for c in ws[0]) or ws[0].startswith("(") \
                or ws[0].lower() in ("graphics", "w/", "with"):
            return False  # a suffix, a separator or "Graphics" starts no name
        text = " ".join(ws)
        if any(not any(c.isalnum() for c in w) and w != "/" for w in ws):
            return False  # a word that is only punctuation names nothing ("H100 -")
        if printed_target(ws[-1]):  # "<name> (gfxN)": a name, or only vendor words ("AMD Radeon Graphics")
            return len(ws) > 1 and (not normalize_gpu_name(" ".join(ws[:-1])) or self.names_one_gpu(ws[:-1]))
        listed = re.sub(_LISTING_PREFIX, "", text, flags=re.I)
        if listed != text:  # "GPU 0: NVIDIA H100 80GB HBM3"
            return self.names_one_gpu(listed.split())
        low = [w.lower() for w in ws]
        for sep in ("w/", "with"):
            if sep in low:  # "AMD Ryzen 9 7940HS w/ Radeon 780M Graphics"; "AMD Ryzen 5 5600G with Radeon Graphics"
                k = low.index(sep)
                cpu, gpu = ws[:k], ws[k + 1:]
                if not cpu or cpu[0].lower() not in ("amd", "ryzen") or not gpu:
                    return False
                if sep == "w/":
                    return self.names_one_gpu(gpu)
                generic = not normalize_gpu_name(" ".join(gpu)) or (  # "Radeon Graphics", "Radeon Vega Graphics":
                    gpu[0].lower() == "radeon" and gpu[-1].lower() == "graphics"  # no model number in it
                    and not any(c.isdigit() for c in " ".join(gpu)))
                return generic and self.pci_gpu(" ".join(cpu), exact=True) is not None
        model = next((i for i, w in enumerate(ws) if normalize_gpu_name(w)), len(ws))
        if any(normalize_gpu_name(w) == "" and w.lower().replace("(r)", "").replace("(tm)", "") != "graphics"
               and re.search("[a-z]", w, re.I) for w in ws[model:]):
            return False  # a vendor word after the model ("H100 AMD", "RTX 4090 AMD Radeon Graphics")
        form = text
        while True:
            if "/" in form and "[" not in form:  # "AMD Instinct MI250X / MI250": one device, if one architecture
                first, *others = [p.strip() for p in form.split("/")]
                found = self._whole_gpu(first)
                series = first.rsplit(" ", 1)[0] + " " if " " in first else ""
                return found is not None and all(
                    any(g is not None and g.arch == found.arch for g in (self._whole_gpu(p), self._whole_gpu(series + p)))
                    for p in others)
            if self._whole_gpu(form) is not None:
                return True
            shorter = re.sub(_TRAILING_WORD, "", form, flags=re.I).strip()
            if shorter == form or not normalize_gpu_name(shorter):
                return False
            form = shorter

    def _whole_gpu(self, text: str) -> Optional[m.Gpu]:
        """The GPU ``text`` names as a whole: a name on record, or one the PCI ID database knows, a PCI
        id or a chip codename with nothing after it."""
        if not text or not re.search("[0-9a-z]", text, re.I):
            return None
        return self.named_gpu(text, whole=True) or self.pci_gpu(text, exact=True)

    def jetpack_of_channel(self, channel: str) -> Optional[m.JetpackGen]:
        return next((j for j in self.jetpacks if channel in j.channels), None)

    def jetpack_of_machine(self, jetpack: Optional[str], distro: Optional[str]) -> Optional[m.JetpackGen]:
        """The JetPack generation a Jetson runs: from its JetPack release, else from its Ubuntu."""
        if jetpack:
            return next((j for j in self.jetpacks if j.major == jetpack.split(".")[0]), None)
        return next((j for j in self.jetpacks if distro and j.distro == distro), None)

    @property
    def directory(self) -> Path:
        """The folder the rows were read from."""
        from pathlib import Path

        return Path(self._directory)

    # -- the PCI ID database (matrices/pci-gpus.ids) and chip codenames (gpu-chips.toml) -----------
    def _pci_tables(self) -> Tuple[Dict[str, str], Dict[str, Tuple[str, str]]]:
        """``{"10de:2684": "AD102 [GeForce RTX 4090]"}`` and normalized marketing name → (vendor
        id, device name); read once, only when a query needs it."""
        if self._pci is None:
            ids: Dict[str, str] = {}
            names: Dict[str, Tuple[str, str]] = {}
            path = self.directory / "pci-gpus.ids"
            if not path.is_file():
                path = resource_dir("matrices") / "pci-gpus.ids"
            vendor = ""
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
            for line in text.splitlines():
                if not line or line.startswith("#"):
                    continue
                if not line.startswith("\t"):
                    vendor = line.split()[0].lower()
                    continue
                dev, _, name = line.strip().partition("  ")
                ids[f"{vendor}:{dev.lower()}"] = name
                for marketing in _bracket_names(name):
                    key = normalize_gpu_name(marketing)
                    if key:  # "[Radeon Graphics]" (several APU and Navi 33 devices) names no model
                        names.setdefault(key, (vendor, name))
            self._pci = (ids, names)
        return self._pci

    def pci_gpu(self, query: str, exact: bool = False) -> Optional[m.Gpu]:
        """A GPU named by a PCI ``vendor:device`` id, an ``lspci -nn`` line, a marketing name the PCI
        database knows (``GTX 780``, ``UHD 630``) or a chip codename (``GA102``, ``Navi 31``).
        ``exact``: the id or the codename is all the text says (no words after it: ``GA100 H100``)."""
        ids, names = self._pci_tables()
        mt = re.search(_PCI_ID, query, re.I)
        if exact and mt and not re.fullmatch(_PCI_ID, query.strip(), re.I):
            return None
        vendor, label = "", ""
        if mt:
            ven, dev = (mt.group(1), mt.group(2)) if mt.group(1) else (mt.group(3), mt.group(4))
            pci = f"{ven.lower()}:{dev.lower()}"
            device = ids.get(pci)
            if device is None:
                return None
            vendor, how = ven.lower(), f"PCI {pci}"
        elif normalize_gpu_name(query) and normalize_gpu_name(query) in names:
            vendor, device = names[normalize_gpu_name(query)]
            how = "the PCI ID database"
            label = next(n for n in _bracket_names(device) if normalize_gpu_name(n) == normalize_gpu_name(query))
        else:  # a codename: bare ("GA102", "Navi 31"), after vendor words ("NVIDIA GeForce GK104"), or
            # a device as the PCI database names it ("GM200GL [Tesla M40]", "Vega 10 XL [Radeon Pro Vega 56]") or
            # with the product after it ("Ellesmere RX 580", "Navi 44 XTX")
            device, how = re.sub(_VENDOR_PREFIX, "", query.strip(), flags=re.I), "chip codename"
            codename = device.strip() if exact else device.partition("[")[0].split(" / ")[0].strip()
            tail = "" if exact else "(?: .*)?"
            chip = next((c for c in self.chips if c.vendor != "intel"
                         and re.fullmatch(f"(?:{c.pattern}){_CODENAME_SUFFIX}{tail}", codename, re.I)), None)
            if chip is None:
                return None
            vendor = next(k for k, v in _PCI_VENDOR.items() if v == chip.vendor)
        index = self._gpu_keys()
        for marketing in [label] if label else _bracket_names(device):  # a name: that product, not a sibling
            known = index.get(normalize_gpu_name(marketing))
            if known is not None and (not vendor or _PCI_VENDOR.get(vendor) == known.vendor):
                return known
        for chip in self.chips:
            if (not vendor or _PCI_VENDOR.get(vendor) == chip.vendor) and re.match(chip.pattern, device, re.I):
                codename, _, bracket = device.partition("[")
                label = label or bracket.rstrip("]").split("/")[0].strip() or codename.strip()
                vname = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel"}[chip.vendor]
                label = label if label.lower().startswith(vname.lower() + " ") else f"{vname} {label}"
                name = label + (f" ({codename.strip()})" if bracket else "")
                return m.Gpu(name=name, vendor=chip.vendor, arch=chip.arch, family=chip.family,
                             segment="integrated" if chip.integrated else "",
                             source=("matrices/pci-gpus.ids", *chip.source), confidence="community",
                             note=f"from {how}: {device}")
        return None

    def search_gpus(self, query: str = "") -> List[m.Gpu]:
        """GPUs whose name, alias, arch, family or vendor contains ``query`` (all when empty)."""
        if not query:
            return list(self.gpus)
        q = normalize_gpu_name(query)
        ql = query.lower().strip()
        out = []
        for g in self.gpus:
            hay = [normalize_gpu_name(n) for n in (g.name, *g.aliases)]
            if any(q and q in h for h in hay) or ql in (g.arch.lower(), g.vendor) or (
                ql and ql in g.family.lower()
            ):
                out.append(g)
        return out

    def gpu_spellings(self, query: str = "") -> List[str]:
        """One-word spellings ``--gpu`` takes (``rtx4090``, ``h100``, ``7900xtx``) of the GPUs
        :meth:`search_gpus` finds for ``query`` (what ``envcheck gpus QUERY`` lists: any case, names
        and aliases, spaces ignored): each name and alias without its spaces and vendor words, those
        that hold the query (all of a GPU's when it matched by arch, family or vendor)."""
        q = normalize_gpu_name(query)
        out: Dict[str, None] = {}
        for g in self.search_gpus(query):
            words = [normalize_gpu_name(n) for n in (g.name, *g.aliases)]
            held = [w for w in words if w and q in w]
            out.update(dict.fromkeys(held or [w for w in words if w]))
        return sorted(out)

    def gpus_with_arch(self, arch: str) -> List[m.Gpu]:
        return [g for g in self.gpus if g.arch == arch]

    def known_archs(self, vendor: str) -> List[str]:
        """Every architecture the data names for ``vendor`` (``nvidia``: cuda.toml's [[arch]] rows and the
        GPU rows; ``amd``: the GPU rows, gpu-chips.toml's LLVM targets and the builds' gfx lists)."""
        if vendor == "nvidia":
            found = set(self.archs) | {g.arch for g in self.gpus if g.vendor == "nvidia"}
        else:
            found = ({g.arch for g in self.gpus if g.vendor == vendor} | {c.arch for c in self.chips if c.vendor == vendor}
                     | {x for b in self.builds for x in b.gfx})
        return sorted(a for a in found if a)

    def arch_integrated(self, vendor: str, arch: str) -> bool:
        """True when the data names ``arch`` only for integrated GPUs (GPU rows and chip rows): an
        architecture given alone (``--gpu gfx1036``, the Ryzen 7000 iGPU) is then an iGPU."""
        segs = [g.segment == "integrated" for g in self.gpus if g.vendor == vendor and g.arch == arch]
        segs += [c.integrated for c in self.chips if c.vendor == vendor and c.arch == arch]
        return bool(segs) and all(segs)

    # -- ROCm on WSL ------------------------------------------------------------------------
    def rocm_wsl_release(self, rocm: str) -> Optional[m.RocmWslRelease]:
        """The ROCm-on-WSL row for ROCm ``rocm`` (exact, else same major.minor)."""
        exact = [r for r in self.rocm_wsl if vkey(r.rocm) == vkey(rocm)]
        if exact:
            return exact[0]
        mm = vkey(rocm).release[:2]
        same = [r for r in self.rocm_wsl if vkey(r.rocm).release[:2] == mm]
        return same[-1] if same else None

    def previous_release(self, version: str) -> Optional[m.Release]:
        """The release just before ``version`` (by version order), if any."""
        key = ("previous_release", version)
        if key not in self._memo:
            self._memo[key] = next((self.releases[i + 1] if i + 1 < len(self.releases) else None
                                    for i, r in enumerate(self.releases) if r.version == version), None)
        return cast("Optional[m.Release]", self._memo[key])

    def versions(self) -> List[str]:
        return [r.version for r in self.releases]

    # -- generated index data -----------------------------------------------------------------
    def index_data(self) -> IndexData:
        """What the wheel indexes served at the last ``envcheck matrix update``
        (``generated-index-*.toml``), parsed and indexed: :class:`envcheck.matrix.index.data.IndexData`."""
        if self._index_data is None:
            from envcheck.matrix.index.data import IndexData

            self._index_data = IndexData(self)
        return self._index_data


def _cache_dir() -> Optional[str]:
    """Where parsed matrices are cached (``$ENVCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/envcheck``,
    else ``~/.cache/envcheck``); ``None`` when ``ENVCHECK_NO_CACHE`` is true (1/true/yes/on; 0/false/no/off
    or empty keep the cache, anything else is bad input as for any ENVCHECK_* switch — breaker4 F12).

    Raises:
        UsageError: ``ENVCHECK_NO_CACHE`` is neither true nor false.
    """
    no_cache = os.environ.get("ENVCHECK_NO_CACHE", "").strip().lower()
    if no_cache in ("1", "true", "yes", "on"):
        return None
    if no_cache not in ("", "0", "false", "no", "off"):
        raise UsageError(f"$ENVCHECK_NO_CACHE is a switch: give true or false, not {os.environ['ENVCHECK_NO_CACHE']!r}")
    env = os.environ.get("ENVCHECK_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "envcheck")


#: one file's rows by table name, and every file's by file name (as :mod:`envcheck.matrix.load` returns them)
if TYPE_CHECKING:  # pragma: no cover
    _Files = Mapping[str, Mapping[str, list]]


#: a cache temporary file this old is a killed writer's (a live one exists for milliseconds)
_CACHE_TMP_STALE_S = 60.0
_CACHE_KEEP = 16  # parsed matrices and single files kept (at most a few hundred KiB each); the oldest go first


#: the name of a cache file envcheck writes: ``matrix-`` + the CRC-32 (8 hex) and length (5 hex) of the
#: key stored inside + ``.marshal`` (``.pickle``: the format of envcheck before 2026-12)
_CACHE_NAME = r"matrix-([0-9a-f]{8})([0-9a-f]{5})\.(marshal|pickle)"  # (compiled by re when a cache file is written)


def _prune(folder: str, keep: int) -> None:
    """Delete all but the ``keep`` most recently written cache files — only files envcheck wrote
    (:func:`_ours`): the cache folder may be one of the user's (``ENVCHECK_CACHE_DIR=.``), and a
    ``matrix-embeddings-3.pickle`` of theirs is never touched (breaker5 F0b)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    dated = []
    for n in names:
        if re.fullmatch(_CACHE_NAME, n):
            p = os.path.join(folder, n)
            try:
                dated.append((os.lstat(p).st_mtime, p))
            except OSError:
                pass
    for _, old in sorted(dated, reverse=True)[keep:]:
        try:
            if _ours(old):
                os.unlink(old)
        except (OSError, UsageError):
            pass


def _ours(path: str) -> bool:
    """Whether the file at ``path`` is a cache file envcheck wrote: a regular file whose name is the
    checksum and length of the key stored in it (:func:`_cached`'s format, or the pickle of envcheck
    before 2026-12, read opcode by opcode without unpickling anything). Anything else — another
    program's file, a damaged one — is not provably ours and stays.

    Raises:
        OSError / UsageError: the file cannot be read (:func:`_read_cache`).
    """
    import zlib

    name = re.fullmatch(_CACHE_NAME, os.path.basename(path))
    if name is None:
        return False
    data = _read_cache(path)
    key: object = None
    if name.group(3) == "marshal":
        import marshal

        if data[:4] != zlib.crc32(memoryview(data)[4:]).to_bytes(4, "big"):
            return False
        try:
            stored = marshal.loads(memoryview(data)[4:])
        except (EOFError, ValueError, TypeError):
            return False
        key = stored[0] if isinstance(stored, tuple) and len(stored) == 3 else None
    else:
        import pickletools

        try:
            key = next((arg for _, arg, _ in pickletools.genops(data) if isinstance(arg, str)), None)
        except Exception:  # not a pickle at all: not ours  # noqa: BLE001
            return False
    if not isinstance(key, str) or not key.startswith("('"):
        return False
    raw = key.encode("utf-8", "surrogateescape")
    return name.group(1) == f"{zlib.crc32(raw):08x}" and name.group(2) == f"{len(raw):05x}"


def _parse_with_cache(directory: str, stamp: Tuple[Tuple[str, int, int], ...],
                      extra: Tuple[str, ...] = ()) -> Tuple[_Files, Dict[str, int]]:
    """Parsed rows of every file and the GPU-name lookup (:meth:`Matrix.gpu_key_positions`), from the
    cache (:func:`_cached`) keyed by the files' names, sizes and mtimes.

    Parsing ~0.5 MB of TOML costs ~0.1 s; the cache makes repeated ``plan`` runs start fast. Any
    change to a file (or to envcheck) changes the key, so a stale cache is never used.
    """
    def parse() -> Tuple[_Files, Dict[str, object]]:
        from pathlib import Path

        from envcheck.matrix.load import load_dir, load_file  # TOML parsing: only on a cache miss

        files = dict(load_dir(Path(directory)))
        for p in extra:  # the user's generated index files replace shipped ones of the same name
            files[os.path.basename(p)] = load_file(Path(p))
        return files, {"gpu_keys": Matrix(directory, files).gpu_key_positions()}

    files, derived = _cached((directory, stamp, extra), parse)
    return files, cast("Dict[str, int]", derived["gpu_keys"])


def load_file_cached(path: str | os.PathLike[str]) -> Mapping[str, list]:
    """One matrix file's rows (:func:`envcheck.matrix.load.load_file`), through the same cache as
    :func:`load_matrix`, keyed by the file's path, size and mtime: for the small tables read on
    every start (the CPU names of ``platforms.toml``) without a TOML parse each time.

    Raises:
        DataFileError: a missing or malformed file.
    """
    try:
        st = os.stat(path)
    except OSError:
        from pathlib import Path

        from envcheck.matrix.load import load_file

        return load_file(Path(path))  # the loader's own error
    return _file_rows(os.fspath(path), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=32)
def _file_rows(path: str, size: int, mtime_ns: int) -> Mapping[str, list]:
    """:func:`load_file_cached` once per process and file version (probe and the CPU-name table
    both read platforms.toml)."""
    def parse() -> Tuple[_Files, Dict[str, object]]:
        from pathlib import Path

        from envcheck.matrix.load import load_file

        return {name: load_file(Path(path))}, {}

    name = os.path.basename(path)
    return _cached((path, size, mtime_ns), parse)[0][name]


#: the most bytes a cache file may have (a parsed matrix is ~0.5 MB): a larger one is not read
_CACHE_CAP = 32 * 1024 * 1024


def _cached(parts: object, parse: Callable[[], Tuple[_Files, Dict[str, object]]]) -> Tuple[_Files, Dict[str, object]]:
    """``parse()``'s answer — rows by file and table, and plain data derived from them — from a file
    in the cache folder whose key is ``parts``, envcheck's version, the Python's and the mtimes of this
    package's code; made and stored on a miss. The key is stored in the file and compared, so a name
    shared by two keys (a 32-bit checksum) only costs a parse.

    The file is :mod:`marshal` data (a builtin reader that needs no import): each table stored apart
    (:func:`_plain`) and rebuilt into rows only when it is first read (:class:`_StoredTables`) — a
    plan reads about two thirds of the data, and never the error-message rules of diagnoses.toml.

    A cache never changes an answer nor stops a command (breaker4 F1, F4): the file starts with the
    CRC-32 of the marshal data after it, and a file that is not a regular file (a FIFO, a device, a
    symbolic link), is too large, does not match its checksum or does not unmarshal is a miss — the
    TOML is parsed and the file written again (atomically, never through a link:
    :func:`envcheck.fsutil.write_file`). A table that still fails to rebuild later is taken from a
    fresh parse, which also rewrites the file."""
    import marshal
    import zlib  # a checksum for the name: hashlib's start-up (OpenSSL) costs more than the whole read

    from envcheck import __version__

    cache = _cache_dir()
    here = os.path.dirname(__file__)
    code = tuple((n, os.stat(os.path.join(here, n)).st_mtime_ns) for n in _names(here, ".py"))
    key = repr((__version__, sys.version, code, parts))
    raw = key.encode("utf-8", "surrogateescape")
    path = os.path.join(cache, f"matrix-{zlib.crc32(raw):08x}{len(raw):05x}.marshal") if cache else None

    fresh: List[Tuple[_Files, Dict[str, object]]] = []

    def parse_and_store() -> Tuple[_Files, Dict[str, object]]:
        if not fresh:
            fresh.append(parse())
            if path is not None:
                _store(path, key, *fresh[0])
        return fresh[0]

    if path is not None:
        try:
            data = _read_cache(path)
            payload = memoryview(data)[4:]  # (no copy of ~0.5 MB)
            if data[:4] == zlib.crc32(payload).to_bytes(4, "big"):
                stored, plain, derived = marshal.loads(payload)
                if stored == key and isinstance(derived, dict):
                    def rebuilt_again(fname: str, table: str) -> list:
                        return list(parse_and_store()[0][fname][table])

                    return {name: _StoredTables(tables, name, rebuilt_again) for name, tables in plain.items()}, derived
        except Exception:  # missing, odd, damaged or foreign: parse again  # noqa: BLE001
            pass
    return parse_and_store()


def _read_cache(path: str) -> bytes:
    """The cache file's bytes, read only from a regular file named directly (not through a symbolic
    link), at most :data:`_CACHE_CAP` bytes, without waiting on a FIFO.

    Raises:
        OSError / UsageError: anything else (the caller parses the TOML instead).
    """
    from envcheck.fsutil import read_input

    return read_input(path, "cache", cap=_CACHE_CAP, follow=False)


def _store(path: str, key: str, files: _Files, derived: Dict[str, object]) -> None:
    """Write the cache file (:func:`_cached`'s format); a folder that cannot take it (read-only, not a
    folder, something odd at the name) is fine: just no cache."""
    import marshal
    import zlib

    from envcheck.fsutil import sweep_temp_files, write_file_interruptible

    try:
        payload = marshal.dumps((key, _plain(files), derived))
        write_file_interruptible(path, zlib.crc32(payload).to_bytes(4, "big") + payload, flag="cache")
        _prune(os.path.dirname(path), keep=_CACHE_KEEP)
        sweep_temp_files(os.path.dirname(path), older_than_s=_CACHE_TMP_STALE_S, target=re.compile(_CACHE_NAME))
    except (OSError, UsageError):
        pass


def _plain(files: _Files) -> Dict[str, Dict[str, bytes]]:
    """Rows as the cache stores them: per file and table, the marshal data of the row class's name, its
    field names and one tuple of values per row. Equal strings and tuples of a table are stored once
    (marshal writes a repeated object as a reference): half the bytes, and fewer objects to make."""
    import marshal

    shared: Dict[object, object] = {}

    def share(value: object) -> object:
        if isinstance(value, tuple):
            value = tuple(share(v) for v in value)
        elif isinstance(value, dict):  # each row keeps its own dict; only the keys and values inside are shared
            return {share(k): share(v) for k, v in value.items()}
        if isinstance(value, (str, tuple)):
            return shared.setdefault((type(value), value), value)
        return value

    out: Dict[str, Dict[str, bytes]] = {}
    for fname, tables in files.items():
        out[fname] = {}
        for tname, rows in tables.items():
            names = tuple(vars(rows[0])) if rows else ()
            cls_name = type(rows[0]).__name__ if rows else "Sourced"
            out[fname][tname] = marshal.dumps((cls_name, names, [tuple(share(getattr(r, n)) for n in names)
                                                                  for r in rows]))
    return out


class _StoredTables(collections.abc.Mapping[str, list]):
    """One file's tables as the cache stores them (:func:`_plain`): the table names are known at once,
    a table's rows are rebuilt on first access — each a row of its class holding the stored field
    values, made as unpickling makes them (the class's ``__init__`` is not run again: the values are
    what it set)."""

    def __init__(self, stored: Dict[str, bytes], fname: str = "",
                 again: Optional[Callable[[str, str], list]] = None):
        self._stored = stored
        self._rows: Dict[str, list] = {}
        self._fname = fname
        self._again = again

    def __getitem__(self, table: str) -> list:
        rows = self._rows.get(table)
        if rows is None:
            blob = self._stored[table]  # KeyError: no such table
            try:
                rows = self._rebuild(blob)
            except Exception:  # a table the checksum let through but that does not rebuild  # noqa: BLE001
                if self._again is None:
                    raise
                rows = self._again(self._fname, table)  # from a fresh parse (which rewrites the file)
            self._rows[table] = rows
        return rows

    @staticmethod
    def _rebuild(blob: bytes) -> list:
        import marshal

        cls_name, names, values = marshal.loads(blob)
        cls = getattr(m, cls_name)
        if not (isinstance(cls, type) and isinstance(names, tuple) and all(isinstance(n, str) for n in names)):
            raise ValueError(f"cache table of {cls_name!r}: not a row class and field names")
        new = object.__new__
        rows = []
        for row_values in values:
            if len(row_values) != len(names):
                raise ValueError(f"cache row of {cls_name}: {len(row_values)} values for {len(names)} fields")
            row: object = new(cls)
            row.__dict__.update(zip(names, row_values))
            rows.append(row)
        return rows

    def __contains__(self, table: object) -> bool:
        return table in self._stored

    def __iter__(self) -> Iterator[str]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)


@lru_cache(maxsize=8)
def _load_cached(directory: str, stamp: Tuple[Tuple[str, int, int], ...], extra: Tuple[str, ...] = ()) -> Matrix:
    files, gpu_keys = _parse_with_cache(directory, stamp, extra)
    return Matrix(directory, files, gpu_keys)


def load_matrix(directory: str | os.PathLike[str] | None = None,
                index_dir: str | os.PathLike[str] | None = None) -> Matrix:
    """Load and index every matrix file in ``directory`` plus the ``generated-index-*.toml`` files
    of ``index_dir`` (which replace same-named ones in ``directory``).

    Defaults: ``directory`` is :func:`default_matrix_dir` (the shipped matrices) and ``index_dir``
    the per-user folder ``envcheck matrix update`` writes to (:func:`userdata.user_index_dir`);
    with an explicit ``directory`` and no ``index_dir``, that folder alone is read.

    Raises:
        DataFileError: a missing folder or a malformed file (names the file and key).
    """
    if index_dir is None and not directory:
        from envcheck.matrix.userdata import user_index_path

        index_dir = user_index_path()
    d = os.fspath(directory) if directory else _default_matrix_path()
    if not os.path.isdir(d):
        raise DataFileError(d, "", "matrix folder not found (set --matrices or ENVCHECK_MATRICES)")
    from envcheck.fsutil import recover

    recover(d)  # an `envcheck matrix update` killed mid-commit: read the whole old set, not half
    names = _names(d, ".toml")
    if not names:
        raise DataFileError(d, "", "matrix folder holds no *.toml files")
    stamp = tuple((n, st.st_size, st.st_mtime_ns) for n in names for st in (os.stat(os.path.join(d, n)),))
    extra: Tuple[str, ...] = ()
    root = os.path.realpath(d)
    if index_dir is not None and os.path.realpath(index_dir) != root:
        recover(index_dir)
        extra = tuple(os.path.realpath(os.path.join(index_dir, n)) for n in _user_index_names(os.fspath(index_dir)))
        stamp += tuple((p, st.st_size, st.st_mtime_ns) for p in extra for st in (os.stat(p),))
    return _load_cached(root, stamp, extra)


def _user_index_names(folder: str) -> List[str]:
    """The ``generated-index-*.toml`` names in the user's index folder. That data is optional (what
    ``envcheck matrix update`` fetched): a folder that does not exist is silent, one that cannot be
    read (permissions, ``sudo -u`` keeping ``HOME``) is a one-line warning and the shipped data alone
    is used — never a traceback (breaker4 F2)."""
    try:
        found = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        sys.stderr.write(f"envcheck: warning: cannot read the user data folder {folder} "
                         f"({exc.strerror or exc}): planning from the shipped data only\n")
        return []
    return sorted(n for n in found if n.startswith("generated-index-") and n.endswith(".toml"))


def _names(folder: str, suffix: str, prefix: str = "") -> List[str]:
    """The names ``prefix*suffix`` in ``folder``, sorted (``[]`` when it cannot be listed): what
    ``sorted(folder.glob(prefix + "*" + suffix))`` names, without compiling a pattern for each glob on
    every start (more than the listing itself costs)."""
    try:
        found = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in found if n.startswith(prefix) and n.endswith(suffix))
