"""What the resolver takes and gives: Request, Reason, Candidate, Resolution."""

from __future__ import annotations

import re
from types import MappingProxyType


from envcheck.record import field, fields, record
from envcheck.errors import UsageError
from envcheck.jsontypes import JSONObject
from envcheck.machine.model import Machine
from envcheck.matrix.model import Build, Release, RocmWslRelease, TritonWindows

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple

if TYPE_CHECKING:  # packaging.specifiers compiles large regular expressions: only with --torch
    from packaging.specifiers import SpecifierSet

#: Stable reason codes (the ``code`` of every reason in ``plan --json``).
REASON_CODES = {
    "os": "the build is not made for this operating system",
    "arch": "the build is not made for this CPU architecture",
    "python": "no wheel for this Python (version, free-threading, 32-bit)",
    "glibc": "the wheel's manylinux tag needs a newer glibc than the machine has",
    "macos": "the wheel (or MPS) needs a newer macOS",
    "torch": "the release does not match --torch",
    "backend": "the build's backend (cpu/cuda/rocm/xpu/mps) cannot serve the machine or --backend",
    "gpu-arch": "the build's kernel list has no code for a GPU's architecture",
    "driver": "the GPU driver is too old for the build (or only under minor-version compatibility)",
    "wsl": "the build does not run under WSL (or is made only for WSL)",
    "tegra": "a Jetson needs NVIDIA's JetPack build (or, on Thor, a CUDA 13 aarch64 build); JetPack builds run only there",
    "compile": "torch.compile does not support this Python in this release",
    "companion": "torchvision/torchaudio has no wheel for this Python/platform (left unpinned)",
    "unverified": "a fact behind this build could not be confirmed from a primary source",
}

#: A nightly version: ``2.7.0.dev20250310``.
DEV_RE = r"[0-9]+\.[0-9]+\.[0-9]+\.dev[0-9]{8}"

#: A ``--backend`` value (compiled on first use, by :mod:`re`'s cache: the default ``auto`` needs no check).
BACKEND_RE = r"auto|cpu|cuda|rocm|xpu|mps|cu\d{2,3}|rocm\d+\.\d+(\.\d+)?"


@record(frozen=True)
class Request:
    """What the user asked for beyond the machine.

    Attributes:
        torch: the ``--torch`` spec as a :class:`SpecifierSet` (``None`` = any release).
        torch_text: the spec as typed.
        backend: ``auto`` or a backend (``cpu``, ``cuda``, ``cu128``, ``rocm``, ``rocm6.3``, ``xpu``, ``mps``).
        compile: require ``torch.compile`` support (else a lack of it is only a warning).
        prefer: ``complete`` (default): the newest release whose set is complete and verified wins;
            ``newest``: the newest release that fits, complete or not (see :func:`~envcheck.resolve.rank_key`).
    """

    torch: Optional[SpecifierSet] = None
    torch_text: str = ""
    backend: str = "auto"
    compile: bool = False
    prefer: str = "complete"

    @staticmethod
    def parse_torch(text: str) -> SpecifierSet:
        """``2.7`` → ``==2.7.*``; ``2.7.1`` → ``==2.7.1``; ``2.1.*`` → ``==2.1.*``; PEP 440 specs as is.

        Raises:
            UsageError: not a version or PEP 440 specifier.
        """
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        t = text.strip().replace(" ", "")
        if t.startswith("torch"):
            t = t[5:]
        if re.fullmatch(r"[0-9]+\.[0-9]+", t):
            t = f"=={t}.*"
        elif (re.fullmatch(r"[0-9]+(\.[0-9]+)*(\.\*)?", t) or re.fullmatch(r"[0-9][0-9.]*(a|b|rc)[0-9]+", t)
              or re.fullmatch(DEV_RE, t)):
            t = f"=={t}"
        try:
            return SpecifierSet(t)
        except InvalidSpecifier:
            hint = ""
            if "+" in t:
                hint = "; a variant goes to --backend (--torch 2.7.0 --backend cu128)"
            elif t.lower() in ("latest", "newest", "stable"):
                hint = "; leave --torch out for the newest release that fits"
            raise UsageError(
                f"--torch {text!r}: expected a version (2.7, 2.7.1), a wildcard (2.1.*) or a PEP 440 "
                f"specifier (>=2.5,<2.8){hint}"
            ) from None

    @property
    def nightly(self) -> Optional[str]:
        """The nightly version asked for (``--torch 2.7.0.dev20250310``), else ``None``."""
        t = self.torch_text.strip().replace(" ", "").removeprefix("torch").removeprefix("==")
        return t if re.fullmatch(DEV_RE, t) else None

    @staticmethod
    def parse_backend(text: str) -> str:
        """Check a ``--backend`` value.

        Raises:
            UsageError: not one of auto, cpu, cuda, cuXYZ, rocm, rocmX.Y, xpu, mps.
        """
        t = text.strip().lower()
        if t != "auto" and not re.fullmatch(BACKEND_RE, t):
            raise UsageError(
                f"--backend {text!r}: expected auto, cpu, cuda or cuXYZ (cu128), rocm or rocmX.Y "
                "(rocm6.3), xpu or mps"
            )
        return t


class Reason:
    """Why a candidate was rejected (``severity="error"``) or accepted with a caveat (``"warning"``).

    Immutable, compared and hashed by its fields. A plain class, not a dataclass: hundreds are made
    per plan, and a class made by ``@dataclass`` costs a millisecond to define on every start.
    """

    __slots__ = ("code", "message", "severity")
    code: str
    message: str
    severity: str

    def __init__(self, code: str, message: str, severity: str = "error") -> None:
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "severity", severity)

    def __setattr__(self, name: str, value: object) -> None:
        from dataclasses import FrozenInstanceError  # only when it is raised (dataclasses is slow to import)

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        return f"Reason(code={self.code!r}, message={self.message!r}, severity={self.severity!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Reason:
            return NotImplemented
        o: Reason = other  # type: ignore[assignment]
        return (self.code, self.message, self.severity) == (o.code, o.message, o.severity)

    def __hash__(self) -> int:
        return hash((self.code, self.message, self.severity))

    def to_dict(self) -> JSONObject:
        return {"code": self.code, "message": self.message}


@record(frozen=True)
class Fit:
    """Ranking facts the checks record about one candidate (read by ranking, plans, alternatives).

    Checks never mutate it: each records with ``candidate.note(field=value)``, and the candidate's
    ``fit`` is the Fit of what was noted. Decisions read these fields, never message text.

    Attributes:
        arch_fit: how the build serves the GPUs, worst over them: 0 exact cubin/gfx target,
            1 a same-major cubin, 2 PTX JIT only.
        driver: NVIDIA driver vs the build's CUDA: ``full``, ``minor`` (minor-version
            compatibility), ``unknown`` (no driver given), ``fail``; ``None`` = not a CUDA build.
        driver_full, driver_floor: the toolkit driver (full support) and the minor-version
            compatibility floor for this build's CUDA on the machine's driver side, each raised to
            the lowest driver that drives the GPUs.
        driver_last_branch: set when full support needs a driver past the last branch a GPU is
            driven by (Kepler: "470"): the build runs only under minor-version compatibility.
        python_new: the candidate's Python is new in this release (the previous one lacked it).
        glibc_floor: the glibc the wheel's manylinux tag needs (Linux).
        macos_floor: the macOS the wheel's tag needs (macOS).
        wsl_release: the ROCm-on-WSL release row serving this build (AMD's WSL wheels).
        compile: ``False`` when torch.compile does not work for this Python/OS; ``None`` = no finding.
        triton_windows: the community triton-windows release a Windows plan installs for
            torch.compile (matrices/triton-windows.toml), when asked for with --compile.
        companions_missing: companions (``torchvision``…) with no wheel for the candidate's Python on
            the platform (matrices/companions.toml); the plan leaves them unpinned.
        arch_predates: the build's CUDA predates a GPU's architecture (it runs older same-major
            cubins, with no code tuned for it).
    """

    arch_fit: int = 0
    driver: Optional[str] = None
    driver_full: Optional[str] = None
    driver_floor: Optional[str] = None
    driver_last_branch: Optional[str] = None
    python_new: bool = False
    glibc_floor: Optional[str] = None
    macos_floor: Optional[str] = None
    wsl_release: Optional[RocmWslRelease] = None
    compile: Optional[bool] = None
    arch_predates: bool = False
    companions_missing: Tuple[str, ...] = ()
    triton_windows: Optional[TritonWindows] = None

    #: rank of ``driver`` (smaller = better); a build without a driver question ranks as full.
    DRIVER_RANK: ClassVar[Dict[Optional[str], int]] = {None: 0, "full": 0, "unknown": 1, "minor": 2}

    @property
    def driver_rank(self) -> int:
        return self.DRIVER_RANK.get(self.driver, 3)


#: The ``fit`` of a candidate nothing was noted about (a Fit is never changed in place: a candidate
#: makes a new one from its noted facts when read), so ~1,500 candidates do not each build an empty one.
NO_FIT = Fit()


class Candidate:
    """One (release × build × Python) the resolver considered.

    Attributes:
        release, build: matrix rows.
        python: the Python it was checked for (``None`` when the target's Python is unknown and
            the build has no wheel list for the platform).
        reasons: every failure (empty = accepted), in report order.
        warnings: caveats of an accepted candidate.
        fit: ranking facts recorded by the checks (:class:`Fit`), made from the facts noted so far
            when first read (most candidates are rejected and nothing reads theirs).
        accepted: no reason rejects it. The resolver knows this of most rejected candidates from a
            quick check alone (:meth:`defer`): their reasons, warnings and fit are worked out, by the
            same checks, only when first read.
    """

    # a plain class (not a dataclass): ~1,500 are made per plan, and a class made by @dataclass costs
    # a millisecond to define on every start
    __slots__ = ("release", "build", "python", "_reasons", "_warnings", "_facts", "_fit", "_pending")

    def __init__(self, release: Release, build: Build, python: Optional[str],
                 reasons: Optional[List[Reason]] = None, warnings: Optional[List[Reason]] = None) -> None:
        self.release = release
        self.build = build
        self.python = python
        self._reasons: List[Reason] = reasons if reasons is not None else []
        self._warnings: List[Reason] = warnings if warnings is not None else []
        # what note() recorded, in order: never changed in place (note() makes a new dict), so candidates
        # alike share one (see take())
        self._facts: Mapping[str, object] = _NOTHING_NOTED
        self._fit: Optional[Fit] = NO_FIT
        # set by defer(): works out the findings of a candidate a quick check rejected, when first read
        self._pending: Optional[Callable[[Candidate], None]] = None

    def __repr__(self) -> str:
        return (f"Candidate(release={self.release!r}, build={self.build!r}, python={self.python!r}, "
                f"reasons={self.reasons!r}, warnings={self.warnings!r}, fit={self.fit!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Candidate:
            return NotImplemented
        o: Candidate = other  # type: ignore[assignment]
        return ((self.release, self.build, self.python, self.reasons, self.warnings, self.fit)
                == (o.release, o.build, o.python, o.reasons, o.warnings, o.fit))

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as a dataclass)

    def defer(self, complete: Callable[[Candidate], None]) -> None:
        """Mark the candidate rejected (a quick check found an error) and leave its findings to
        ``complete(candidate)``, which records every check's, in order, when they are first read."""
        self._pending = complete

    def _complete(self) -> None:
        complete, self._pending = self._pending, None
        if complete is not None:
            complete(self)

    @property
    def reasons(self) -> List[Reason]:
        if self._pending is not None:
            self._complete()
        return self._reasons

    @property
    def warnings(self) -> List[Reason]:
        if self._pending is not None:
            self._complete()
        return self._warnings

    @property
    def accepted(self) -> bool:
        # a deferred candidate is rejected: a quick check found an error (see defer())
        return self._pending is None and not self._reasons

    @property
    def torch(self) -> str:
        return self.release.version

    @property
    def variant(self) -> str:
        return self.build.variant

    @property
    def fit(self) -> Fit:
        if self._pending is not None:
            self._complete()
        if self._fit is None:
            # the Fit of the noted facts (a copy of NO_FIT's fields with them replaced; every Fit field
            # is an init field, no __post_init__: what dataclasses.replace() does, without its per-call work)
            fit = object.__new__(Fit)
            fit.__dict__.update(NO_FIT.__dict__, **self._facts)
            self._fit = fit
        return self._fit

    @property
    def noted(self) -> Mapping[str, object]:
        """The facts :meth:`note` recorded (read-only: note() is the way to record one)."""
        if self._pending is not None:
            self._complete()
        return self._facts

    def note(self, **facts: object) -> None:
        """Record ranking facts (``c.note(driver="full")``); :attr:`fit` says them from then on.

        Raises:
            TypeError: a name that is not a field of :class:`Fit`.
        """
        if not _FIT_FIELDS.issuperset(facts):
            raise TypeError(f"Fit has no field {', '.join(sorted(facts.keys() - _FIT_FIELDS))}")
        if self._pending is not None:  # recorded after the checks' own findings
            self._complete()
        self._facts = {**self._facts, **facts}
        self._fit = None

    def take(self, reasons: Sequence[Reason], warnings: Sequence[Reason], facts: Mapping[str, object]) -> None:
        """Record findings worked out once for candidates alike (see :func:`~envcheck.resolve.rules.run_checks`):
        ``reasons`` and ``warnings`` are appended, ``facts`` (checked by :meth:`note` when a check noted
        them; shared, so never changed after) are noted."""
        if reasons:
            self._reasons += reasons
        if warnings:
            self._warnings += warnings
        if facts:
            self._facts = {**self._facts, **facts} if self._facts else facts
            self._fit = None

    def add(self, code: str, message: str, severity: str = "error") -> None:
        if self._pending is not None:  # added after the checks' own findings
            self._complete()
        (self._reasons if severity == "error" else self._warnings).append(Reason(code, message, severity))

    def to_dict(self) -> JSONObject:
        return {
            "torch": self.release.version,
            "variant": self.build.variant,
            "channel": self.build.channel,
            "python": self.python,
            "accepted": self.accepted,
            "reasons": [r.to_dict() for r in self.reasons],
            "warnings": [w.to_dict() for w in self.warnings],
        }


_FIT_FIELDS = frozenset(f.name for f in fields(Fit))
_NOTHING_NOTED: Mapping[str, object] = MappingProxyType({})


@record
class Resolution:
    """The resolver's answer.

    Attributes:
        machine, request: the inputs.
        candidates: every candidate, ranked: accepted ones first (best first), then rejected.
        status: ``ok`` | ``no_build`` | ``no_official_build`` (a GPU no official build serves;
            ``fallback`` holds the CPU build).
        fallback: the best CPU candidate when ``status == "no_official_build"``.
        alternatives: sentences offering other ways out (a driver upgrade, a source build).
        assumptions: facts the plan assumed because the machine did not say (``glibc unknown``).
    """

    machine: Machine
    request: Request
    candidates: List[Candidate]
    status: str = "ok"
    fallback: Optional[Candidate] = None
    alternatives: List[str] = field(default_factory=list)
    assumptions: List[str] = field(default_factory=list)

    @property
    def accepted(self) -> List[Candidate]:
        return [c for c in self.candidates if c.accepted]

    @property
    def rejected(self) -> List[Candidate]:
        return [c for c in self.candidates if not c.accepted]

    @property
    def chosen(self) -> Optional[Candidate]:
        """The first accepted candidate (the best: they come first), without listing them all."""
        return next((c for c in self.candidates if c.accepted), None)
