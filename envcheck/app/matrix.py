"""``matrix show|validate|status|update``, ``gpus`` and ``lock check``: the builds and GPUs on record
(filtered), the data's problems, how fresh the index data is, the refresh from a wheel index, and
whether locks still resolve against it. No argparse, no printing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.lockcheck import LockStatus
    from envcheck.matrix import Matrix
    from envcheck.matrix.index.status import Status
    from envcheck.matrix.model import Build, Gpu, Release
    from envcheck.matrix.validate import Problem
    from envcheck.update.update import Progress, UpdateResult


@dataclass(frozen=True)
class BuildRows:
    """The ``(release, build)`` pairs on record that match, newest release first, and the matrix read."""

    matrix: Matrix
    rows: Tuple[Tuple[Release, Build], ...]

    def to_json(self) -> List[Dict[str, Any]]:
        """``matrix show --json``: one object per build."""
        return [{
            "torch": r.version, "variant": b.variant, "channel": b.channel, "platforms": list(b.platforms),
            "python": list(b.python) if b.python else None, "cuda": b.cuda, "cudnn": b.cudnn, "nccl": b.nccl,
            "sm": list(b.sm), "ptx": list(b.ptx), "rocm": b.rocm, "gfx": list(b.gfx),
            "wheel_tag": dict(b.wheel_tag), "source": list(b.source), "confidence": b.confidence,
        } for r, b in self.rows]


def builds(matrices: Optional[Path] = None, torch: Optional[str] = None, variant: Optional[str] = None) -> BuildRows:
    """Every build on record of the releases ``torch`` names (2.7, 2.1.*, >=2.5; ``None``: all),
    of ``variant`` only when given.

    Raises:
        UsageError: a ``torch`` spec that is not one.
    """
    from envcheck.matrix import load_matrix
    from envcheck.resolve.types import Request

    mx = load_matrix(matrices)
    spec = Request.parse_torch(torch) if torch else None
    rows = []
    for r in mx.releases:
        if spec is not None and not spec.contains(r.version, prereleases=True):
            continue
        for b in mx.builds_for(r.version):
            if variant and b.variant != variant:
                continue
            rows.append((r, b))
    return BuildRows(matrix=mx, rows=tuple(rows))


@dataclass(frozen=True)
class Validation:
    """The folder checked and every problem found (errors and warnings)."""

    directory: Path
    problems: Tuple[Problem, ...]

    @property
    def errors(self) -> Tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def exit_code(self) -> int:
        """1 when there is an error (warnings allowed), else 0."""
        return 1 if self.errors else 0

    def to_json(self) -> Dict[str, Any]:
        return {"directory": str(self.directory), "ok": not self.errors,
                "problems": [{"file": p.file, "key": p.key, "message": p.message, "severity": p.severity}
                             for p in self.problems]}


def validate_matrix(matrices: Optional[Path] = None) -> Validation:
    """Check every matrix file of ``matrices`` (default: the shipped folder): schema, sources, and
    the references between tables."""
    from envcheck.matrix import default_matrix_dir
    from envcheck.matrix.validate import validate

    directory = matrices or default_matrix_dir()
    return Validation(directory=directory, problems=tuple(validate(directory)))


def index_status(matrices: Optional[Path] = None) -> Status:
    """From the generated index files: the newest release each index serves, when it was read, and
    what it serves that the sourced facts do not cover yet."""
    from envcheck.matrix import load_matrix
    from envcheck.matrix.index.status import status

    return status(load_matrix(matrices))


@dataclass(frozen=True)
class UpdateRequest:
    """Which index to read (``None``: the PyTorch one), which packages and sub-indexes, where the
    generated files go (``data_dir``, else ``matrices`` when given, else the per-user data folder)."""

    index: Optional[str] = None
    packages: Sequence[str] = ("torch", "torchvision", "torchaudio")
    variants: Optional[Sequence[str]] = None
    channel: Optional[str] = None
    matrices: Optional[Path] = None
    data_dir: Optional[Path] = None
    dry_run: bool = False
    timeout: float = 30.0
    retries: int = 3


def update_index(request: UpdateRequest, progress: Optional[Progress] = None) -> UpdateResult:
    """Refresh the generated index files (all replaced together, or none).

    Raises:
        UsageError: the ``update`` extra missing, a timeout ≤ 0 or negative retries, a bad index URL
            or data folder (exit 2); IndexFetchError: a page could not be fetched or parsed (exit 3).
    """
    from envcheck.errors import UsageError, require_extra

    require_extra("update")
    from envcheck.update.client import IndexClient
    from envcheck.update.update import DEFAULT_INDEX, run_update

    if request.timeout <= 0 or request.retries < 0:
        raise UsageError("--timeout must be > 0 and --retries >= 0")
    with IndexClient(timeout=request.timeout, retries=request.retries) as client:
        return run_update(index=request.index or DEFAULT_INDEX, packages=list(request.packages),
                          matrices=request.matrices, data_dir=request.data_dir, channel=request.channel,
                          variants=list(request.variants) if request.variants else None, dry_run=request.dry_run,
                          client=client, progress=progress)


@dataclass(frozen=True)
class GpuSearch:
    """The GPUs a query names (by name, alias, arch, family, vendor, else a PCI id or lspci line),
    and, when none, the close names envcheck knows."""

    query: str
    gpus: Tuple[Gpu, ...]
    suggestions: Tuple[str, ...] = ()
    unknown: bool = False  # the name lookup refused the query too (then ``suggestions`` are its close names)

    @property
    def exit_code(self) -> int:
        return 0 if self.gpus else 1

    def to_json(self) -> List[Dict[str, Any]]:
        """``gpus --json``: one object per GPU."""
        return [{"name": g.name, "vendor": g.vendor, "arch": g.arch, "family": g.family,
                 "segment": g.segment, "memory_mib": g.memory_mib, "aliases": list(g.aliases),
                 "source": list(g.source), "confidence": g.confidence} for g in self.gpus]


def search_gpus(query: str = "", matrices: Optional[Path] = None) -> GpuSearch:
    """The GPU names envcheck knows that match ``query`` (empty: all of them)."""
    from envcheck.errors import UnknownGpuError
    from envcheck.matrix import load_matrix

    matrix = load_matrix(matrices)
    gpus = matrix.search_gpus(query)
    if not gpus and query:  # a PCI id, an lspci line, a codename, a name only the PCI database knows
        found = matrix.pci_gpu(query)
        gpus = [found] if found is not None else []
    suggestions: Tuple[str, ...] = ()
    unknown = False
    if not gpus:
        try:
            matrix.find_gpu(query)
        except UnknownGpuError as exc:
            suggestions, unknown = tuple(exc.suggestions), True
    return GpuSearch(query=query, gpus=tuple(gpus), suggestions=suggestions, unknown=unknown)


@dataclass(frozen=True)
class LockCheck:
    """Each lock's status (ok, outdated, broken) against the current matrix."""

    results: Tuple[LockStatus, ...]

    @property
    def exit_code(self) -> int:
        """1 when a lock no longer resolves (an outdated one is a warning), else 0."""
        return 1 if any(r.status == "broken" for r in self.results) else 0

    def to_json(self) -> Dict[str, Any]:
        return {"locks": [{"path": r.path, "status": r.status, "locked": r.locked, "chosen": r.chosen,
                           "reasons": r.reasons} for r in self.results]}


def check_locks(files: Sequence[Path], matrices: Optional[Path] = None) -> LockCheck:
    """Resolve each lock's machine and request again against the current matrix.

    Raises:
        DataFileError: not a lock file, or one without a machine to resolve for (exit 2).
    """
    from envcheck.lockcheck import check_lock
    from envcheck.matrix import load_matrix

    matrix = load_matrix(matrices)
    return LockCheck(results=tuple(check_lock(f, matrix) for f in files))
