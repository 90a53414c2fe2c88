"""``matrix show|validate|status|update``: the builds on record (filtered), the data's problems,
how fresh the index data is, and the refresh from a wheel index. No argparse, no printing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.matrix import Matrix
    from envcheck.matrix.index.status import Status
    from envcheck.matrix.model import Build, Release
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
            or data folder (exit 2); IndexFetchError: a page could not be fetched or parsed (exit 1).
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
