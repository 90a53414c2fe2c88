"""``envcheck matrix validate``: schema, sources and the references between tables.

Schema and source forms are checked while loading (strictly: unknown keys and files are errors);
this module adds the checks that need several tables at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Tuple

from envcheck.errors import DataFileError
from envcheck.matrix import Matrix, normalize_gpu_name, resource_dir
from envcheck.matrix.load import load_dir
from envcheck.matrix.model import Build, vkey


@dataclass(frozen=True)
class Problem:
    """One finding: ``file: key: message``."""

    file: str
    key: str
    message: str
    severity: str = "error"  # or "warning"

    def __str__(self) -> str:
        return f"{self.file}: {self.key}: {self.message}"


def _bkey(b: Build) -> str:
    return f"build[{b.index}]"


def validate_dir(directory: Path) -> Tuple[Matrix, List[Problem]]:
    """Load ``directory`` strictly and cross-check it.

    Returns:
        The matrix (when it loads) and every problem found.

    Raises:
        DataFileError: a file does not load at all (schema or TOML error); the message names the
            file and key.
    """
    files = dict(load_dir(directory, strict=True))
    matrix = Matrix(directory, files)
    return matrix, cross_check(matrix)


def cross_check(mx: Matrix) -> List[Problem]:
    """Every cross-table rule; see the module docstring."""
    out: List[Problem] = []

    def err(file: str, key: str, msg: str, severity: str = "error") -> None:
        out.append(Problem(file, key, msg, severity))

    rel = mx.release_by_version
    if not mx.releases:
        err("torch-releases.toml", "release", "no releases")
    seen: Dict[Tuple[str, str, str, str, str], str] = {}
    for b in mx.builds:
        k = _bkey(b)
        for v in b.torch:
            if v not in rel:
                err(b.file, f"{k}.torch", f"torch {v} has no [[release]] row in torch-releases.toml")
                continue
            for p in b.platforms:
                for py in (b.python if b.python is not None else rel[v].python.get(p, ("*",))):
                    ident = (v, b.variant, b.channel, p, py)
                    if ident in seen:
                        err(b.file, k, f"torch {v}+{b.variant} for Python {py} on {p} ({b.channel}) is "
                                       f"also in {seen[ident]}")
                    seen[ident] = f"{b.file} {k}"
        if b.channel not in mx.channels:
            err(b.file, f"{k}.channel", f"no [[channel]] named {b.channel!r}")
        if b.cuda:
            if not b.sm and not b.ptx:
                err(b.file, f"{k}.sm", "a CUDA build needs its kernel list (sm / ptx)")
            if mx.toolkit(b.cuda) is None:
                err(b.file, f"{k}.cuda", f"CUDA {b.cuda} has no [[toolkit]] row in cuda.toml")
            for sm in list(b.sm) + [p.replace("compute_", "sm_") for p in b.ptx]:
                base = sm.rstrip("af")
                a = mx.nv_arch(base)
                if a is None:
                    err(b.file, f"{k}.sm", f"{sm} has no [[arch]] row in cuda.toml")
                    continue
                if a.first_cuda and vkey(b.cuda) < vkey(a.first_cuda):
                    err(b.file, f"{k}.sm", f"CUDA {b.cuda} cannot target {sm} (first in CUDA {a.first_cuda})")
                if a.last_cuda and vkey(".".join(b.cuda.split(".")[:2])) > vkey(a.last_cuda):
                    err(b.file, f"{k}.sm", f"CUDA {b.cuda} cannot target {sm} (last in CUDA {a.last_cuda})")
            if not b.cudnn:
                err(b.file, f"{k}.cudnn", "a CUDA build needs its cuDNN version", "warning")
        if b.backend == "rocm" and not b.gfx:
            err(b.file, f"{k}.gfx", "a ROCm build needs its gfx target list")
        for s in b.post_install:
            if s not in mx.steps:
                err(b.file, f"{k}.post_install", f"no [[step]] with key {s!r} in rocm-wsl.toml")
        if b.wsl and b.rocm and mx.rocm_wsl_release(b.rocm) is None:
            err(b.file, f"{k}.rocm", f"ROCm {b.rocm} has no [[release]] row in rocm-wsl.toml")
    for r in mx.releases:
        for plat, variant in r.pypi.items():
            if not any(b.variant == variant and plat in b.platforms for b in mx.builds_for(r.version)):
                err("torch-releases.toml", f"release {r.version}.pypi.{plat}",
                    f"PyPI serves {variant} here, but no [[build]] row covers {r.version} {variant} on {plat}",
                    "warning")
    # GPUs
    names: Dict[str, str] = {}
    for g in mx.gpus:
        if g.vendor == "nvidia" and g.arch not in mx.archs:
            err("gpus", f"gpu {g.name!r}.arch", f"{g.arch} has no [[arch]] row in cuda.toml")
        # an arch spelled as its vendor spells it is the row spec's rule (envcheck.schema GPU_ARCH_RE)
        for n in (g.name, *g.aliases):
            key = normalize_gpu_name(n)
            if key in names and names[key] != g.name:
                err("gpus", f"gpu {g.name!r}.aliases", f"{n!r} also names {names[key]!r}")
            names.setdefault(key, g.name)
    for a in mx.archs.values():
        if a.first_cuda and a.last_cuda and vkey(a.first_cuda) > vkey(a.last_cuda):
            err("cuda.toml", f"arch {a.sm}", "first_cuda is after last_cuda")
    for w in mx.rocm_wsl:
        for gfx in w.gfx:
            if not mx.gpus_with_arch(gfx):
                err("rocm-wsl.toml", f"release {w.rocm}.gfx", f"no GPU in gpus*.toml has arch {gfx}", "warning")
    ids: Dict[str, str] = {}
    for d in mx.distros:
        for n in (d.id, *d.aliases):
            k = n.lower().replace(" ", "")
            if k in ids and ids[k] != d.id:
                err("platforms.toml", f"distro {d.id}", f"alias {n!r} also names {ids[k]}")
            ids.setdefault(k, d.id)
    tdir = resource_dir("dockerfiles")
    distros = {d.id for d in mx.distros}
    for img in mx.base_images:
        where = f"base_image {img.backend} {img.image}"
        if not (tdir / img.template).is_file():
            err("docker.toml", f"{where}.template", f"no template {img.template} in {tdir}")
        if img.distro and img.distro not in distros:
            err("docker.toml", f"{where}.distro", f"no [[distro]] {img.distro} in platforms.toml")
        if img.python_from == "apt" and not img.distro:  # its Python is the distribution's python3: which one?
            err("docker.toml", f"{where}.distro", "python_from = \"apt\" needs the distro whose python3 it ships")
        if (img.python_from == "uv") != bool(img.uv_image):
            err("docker.toml", f"{where}.uv_image", "python_from = \"uv\" and uv_image go together")
        if img.tegra and not img.cuda:
            err("docker.toml", f"{where}.cuda", "a tegra row names the CUDA major.minor of its L4T image")
    out += _numpy_coverage(mx)
    for row in mx.conda_forge:
        for v in row.torch:
            if v not in rel:
                err("conda.toml", "conda_forge", f"torch {v} has no [[release]] row", "warning")
    return out


def _numpy_coverage(mx: Matrix) -> List[Problem]:
    """numpy.toml: its releases and channels exist, and every build of a channel it speaks for has
    a row (a build of another channel gets no numpy line; the plan says so)."""
    out: List[Problem] = []
    for i, row in enumerate(mx.numpy_rows):
        for v in row.torch:
            if v not in mx.release_by_version:
                out.append(Problem("numpy.toml", f"numpy[{i}].torch", f"torch {v} has no [[release]] row"))
        for ch in row.channels:
            if ch not in mx.channels:
                out.append(Problem("numpy.toml", f"numpy[{i}].channels", f"no [[channel]] named {ch!r}"))
    spoken = {ch for row in mx.numpy_rows for ch in row.channels}
    for b in mx.builds:
        if b.channel not in spoken:
            continue
        for v in b.torch:
            for p in b.platforms:
                if mx.numpy_for(v, b.channel, p) is None:
                    out.append(Problem(b.file, f"{_bkey(b)}.torch",
                                       f"torch {v} from {b.channel} on {p} has no [[numpy]] row in numpy.toml"))
    return out


def validate(directory: Path) -> List[Problem]:
    """Every problem in ``directory``: each file that does not load is one problem; when all load,
    the cross-table checks run too."""
    from envcheck.matrix.load import load_file

    if not Path(directory).is_dir():
        return [Problem(str(directory), "-", "matrix folder not found")]
    problems: List[Problem] = []
    for path in sorted(Path(directory).glob("*.toml")):
        try:
            load_file(path, strict=True)
        except DataFileError as exc:
            msg = str(exc)[len(f"{exc.path}: {exc.key}: "):] if exc.key else str(exc)[len(f"{exc.path}: "):]
            problems.append(Problem(path.name, exc.key or "-", msg))
    if problems:
        return problems
    _, problems = validate_dir(directory)
    return problems
