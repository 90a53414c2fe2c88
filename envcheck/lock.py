"""``envcheck.lock.toml``: the one lock type, written by ``envcheck plan`` and read by ``verify --lock``.

One schema constant (:data:`LOCK_SCHEMA`), one writer (:func:`lock_document` / :func:`render_lock`)
and one reader (:func:`load_lock` / :func:`lock_from_dict`) live here, so the two cannot drift.

The document has ``schema``, ``generated``, ``envcheck``, ``[request]``, ``[machine]``, ``[build]``
(torch, variant, index_url, python…), ``[expect]`` (:class:`Expect`: what verify must find),
``[pip] lines`` and the plan's steps (``[[step]]``, plus ``[[post_install]]`` for readers of
schema 1 files).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import field, fields
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Protocol, Sequence, Tuple

from envcheck.record import record
from envcheck.errors import DataFileError
from envcheck.machine.model import Machine


class PlanLike(Protocol):
    """What the writer reads of a :class:`envcheck.resolve.plan.Plan` (the lock sits below
    ``resolve`` in the layers, so it names the shape, not the class)."""

    @property
    def resolution(self) -> Any: ...

    @property
    def candidate(self) -> Any: ...

    @property
    def python(self) -> str: ...

    @property
    def index_url(self) -> str: ...

    @property
    def index_kind(self) -> str: ...

    @property
    def steps(self) -> Sequence[Any]: ...

    @property
    def recipe(self) -> Sequence[Any]: ...

    @property
    def build(self) -> Any: ...

    @property
    def release(self) -> Any: ...

    def expect(self) -> Expect: ...

    def pip_lines(self) -> List[str]: ...

LOCK_SCHEMA = 1
LOCK_FILE = "envcheck.lock.toml"


@record(frozen=True)
class Expect:
    """What ``envcheck verify`` must find in an environment installed from a plan (``[expect]``).

    Attributes:
        torch_version: ``"2.13.0+cpu"`` (with the local label); ``variant``: ``cpu``, ``cu128``…
        python: ``"3.12"``; ``torchvision`` / ``torchaudio``: the pinned companions.
        cuda / cudnn / cudnn_version / nccl: of a CUDA build; ``hip``: of a ROCm build.
        arch_list: the kernel targets the build carries (``sm_*``/``compute_*`` or ``gfx*``).
        gpu_arch: the architectures of the GPUs the plan serves.
        driver: ``{"vendor", "side", "full", "floor"}`` (written as ``driver_*`` keys).
        post_install: the keys of the plan's post-install steps.
        mps: a macOS build that uses Metal.
    """

    torch_version: str
    variant: str
    python: str = ""
    torchvision: Optional[str] = None
    torchaudio: Optional[str] = None
    cuda: Optional[str] = None
    cudnn: Optional[str] = None
    cudnn_version: Optional[int] = None
    nccl: Optional[str] = None
    hip: Optional[str] = None
    arch_list: Tuple[str, ...] = ()
    gpu_arch: Tuple[str, ...] = ()
    driver: Mapping[str, str] = field(default_factory=dict)
    post_install: Tuple[str, ...] = ()
    mps: bool = False

    #: ``[expect]`` keys and the type each must have (``driver_*`` are strings).
    TYPES = {
        "torch_version": str, "variant": str, "python": str, "cuda": str, "cudnn": str,
        "cudnn_version": int, "nccl": str, "hip": str, "arch_list": list, "gpu_arch": list,
        "torchvision": str, "torchaudio": str, "post_install": list, "mps": bool,
    }

    def to_dict(self) -> Dict[str, Any]:
        """The ``[expect]`` table; empty values are left out, ``driver`` becomes ``driver_*`` keys."""
        d: Dict[str, Any] = {"torch_version": self.torch_version, "variant": self.variant, "python": self.python}
        for key in ("torchvision", "torchaudio"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        if self.cuda:
            d["cuda"] = self.cuda
            d["arch_list"] = list(self.arch_list)
        if self.cudnn:
            d["cudnn"] = self.cudnn
            d["cudnn_version"] = self.cudnn_version
        if self.nccl:
            d["nccl"] = self.nccl
        if self.hip:
            d["hip"] = self.hip
            d["arch_list"] = list(self.arch_list)
        if self.gpu_arch:
            d["gpu_arch"] = list(self.gpu_arch)
        for k, v in self.driver.items():
            d[f"driver_{k}"] = v
        if self.post_install:
            d["post_install"] = list(self.post_install)
        if self.mps:
            d["mps"] = True
        return d

    @classmethod
    def from_dict(cls, table: Mapping[str, Any], path: object = "<lock>") -> Expect:
        """Check and convert an ``[expect]`` table; keys a newer envcheck added are ignored.

        Raises:
            DataFileError: a required key is missing, or a key has the wrong type.
        """
        for key in ("torch_version", "variant"):
            if key not in table:
                raise DataFileError(path, f"expect.{key}", "missing (required)")
        for key, value in table.items():
            want = cls.TYPES.get(key, str if key.startswith("driver_") else None)
            if want is None:
                continue  # newer keys from a newer envcheck: ignored, not an error
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise DataFileError(path, f"expect.{key}",
                                    f"expected {want.__name__}, got {type(value).__name__} {value!r}")
            if isinstance(value, list) and not all(isinstance(x, str) for x in value):
                raise DataFileError(path, f"expect.{key}", "expected a list of strings")
        names = {f.name for f in fields(cls)} - {"driver"}
        kw: Dict[str, Any] = {}
        for key, value in table.items():
            if key in names:
                kw[key] = tuple(value) if isinstance(value, list) else value
        kw["driver"] = {k[len("driver_"):]: v for k, v in table.items() if k.startswith("driver_")}
        return cls(**kw)

    # Read-only mapping view of the table (``exp.get("cuda")``), for code that reads keys by name.
    def get(self, key: str, default: Any = None) -> Any:
        return self.to_dict().get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.to_dict()

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())


@record(frozen=True)
class Lock:
    """What a plan promised.

    Attributes:
        path: the file it was read from.
        torch: the release (``"2.13.0"``); ``variant``: ``cpu``, ``cu128``, ``rocm6.3``…
        expect: the ``[expect]`` table, typed.
        index_url: where the plan installs from; ``pip_lines``: the requirement lines
            (index option first, then ``torch==…`` pins).
        machine: the machine the plan was made for, when the file has one.
    """

    path: str
    torch: str
    variant: str
    expect: Expect
    index_url: str = ""
    pip_lines: List[str] = field(default_factory=list)
    machine: Optional[Machine] = None

    @property
    def pins(self) -> List[str]:
        """``["torch==2.13.0+cpu", …]``."""
        return [ln for ln in self.pip_lines if "==" in ln and not ln.startswith("-")]

    @property
    def index_option(self) -> str:
        """``--index-url https://download.pytorch.org/whl/cpu`` (or ``--find-links …``)."""
        return next((ln for ln in self.pip_lines if ln.startswith("-")), "")


# ---------------------------------------------------------------------------------------------
# writing


def lock_document(plan: PlanLike, generated: Optional[str] = None) -> Dict[str, Any]:
    """The ``envcheck.lock.toml`` document: machine, chosen build, what verify must find, the steps."""
    from envcheck import __version__

    b, r = plan.build, plan.release
    res = plan.resolution
    now = generated or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    doc: Dict[str, Any] = {
        "schema": LOCK_SCHEMA,
        "generated": now,
        "envcheck": __version__,
        "request": {
            "torch": res.request.torch_text or "*",
            "backend": res.request.backend,
            "compile": res.request.compile,
        },
        "machine": res.machine.to_dict(),
        "build": {
            "torch": r.version,
            "variant": b.variant,
            "channel": b.channel,
            "index_url": plan.index_url,
            "index_kind": plan.index_kind,
            "python": plan.python,
            "platform": res.machine.platform,
            "wheel_tag": b.wheel_tag.get(res.machine.platform, ""),
            "source": list(b.source),
            "confidence": b.confidence,
            "warnings": [w.message for w in plan.candidate.warnings],
        },
        "expect": plan.expect().to_dict(),
        "pip": {"lines": plan.pip_lines()},
    }
    if plan.steps:
        doc["post_install"] = [{"key": s.key, "description": s.description, "shell": s.shell} for s in plan.steps]
    if plan.recipe:
        doc["step"] = [s.to_dict() for s in plan.recipe]
    return doc


def render_lock(plan: PlanLike, generated: Optional[str] = None, title: str = "") -> str:
    """``envcheck.lock.toml`` as text (``verify --lock`` reads it)."""
    import tomli_w

    from envcheck.machine.model import drop_none_table

    head = (f"# {LOCK_FILE} — {title}\n"
            f"# Written by `envcheck plan`; `envcheck verify --lock {LOCK_FILE}` checks an environment against it.\n")
    return head + tomli_w.dumps(drop_none_table(lock_document(plan, generated)))


# ---------------------------------------------------------------------------------------------
# reading


def load_lock(path: Path) -> Lock:
    """Read and check a lock file.

    Raises:
        DataFileError: unreadable, invalid TOML (also nested too deeply), or a required key missing /
            of the wrong type (the message names the file and the dotted key).
    """
    from envcheck.matrix.load import read_toml

    try:
        doc = read_toml(Path(path))
    except RecursionError:  # tomllib recurses per nesting level ("a = [[[[…")
        raise DataFileError(path, "", "invalid TOML: nested too deeply to read") from None
    return lock_from_dict(doc, path)


def lock_from_dict(doc: Dict[str, Any], path: object = "<lock>") -> Lock:
    """Build a :class:`Lock` from parsed TOML, checking each part.

    Raises:
        DataFileError: see :func:`load_lock`.
    """
    schema = doc.get("schema")
    if schema != LOCK_SCHEMA:
        raise DataFileError(path, "schema",
                            f"expected {LOCK_SCHEMA} (an {LOCK_FILE} from `envcheck plan`), got {schema!r}")
    build = _table(doc, "build", path)
    table = _table(doc, "expect", path)
    for key in ("torch", "variant"):
        if not isinstance(build.get(key), str) or not build.get(key):
            raise DataFileError(path, f"build.{key}", "missing (required) or not a string")
    expect = Expect.from_dict(table, path)
    pip = doc.get("pip", {})
    lines = pip.get("lines", []) if isinstance(pip, dict) else None
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        raise DataFileError(path, "pip.lines", "expected a list of strings")
    _check_outside_strings(build, table, lines, path)
    machine = None
    if "machine" in doc:
        from envcheck.machine.io import machine_from_dict

        machine = machine_from_dict(doc["machine"], path, "machine")
    return Lock(path=str(path), torch=build["torch"], variant=build["variant"], expect=expect,
                index_url=str(build.get("index_url", "")), pip_lines=list(lines), machine=machine)


def _table(doc: Dict[str, Any], name: str, path: object) -> Dict[str, Any]:
    value = doc.get(name)
    if not isinstance(value, dict):
        raise DataFileError(path, name, f"missing [{name}] table" if value is None
                            else f"expected a table, got {type(value).__name__}")
    return value


def _check_outside_strings(build: Dict[str, Any], expect: Dict[str, Any], lines: List[str], path: object) -> None:
    """A lock is read from outside: its index URL must be an http(s)/file URL without shell
    metacharacters, and every string verify prints or compares is printable text on one line."""
    from envcheck.edge import check_name, check_url
    from envcheck.errors import UsageError

    def check(key: str, value: Any, fn: Any) -> None:
        try:
            fn(value)
        except UsageError as exc:
            raise DataFileError(path, key, str(exc).split(": ", 1)[-1]) from None

    if build.get("index_url") not in (None, ""):
        check("build.index_url", build["index_url"], lambda v: check_url(v, "index_url"))
    for key, value in build.items():
        if isinstance(value, str) and key != "index_url":
            check(f"build.{key}", value, lambda v: check_name(v, "value", 2000))
    for key, value in expect.items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str):
                check(f"expect.{key}", v, lambda x: check_name(x, "value", 2000))
    for i, ln in enumerate(lines):
        check(f"pip.lines[{i}]", ln, lambda v: check_name(v, "value", 4000))
