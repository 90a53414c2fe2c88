"""``envcheck.lock.toml``: the one lock type, written by ``envcheck plan`` and read by ``verify --lock``.

One schema constant (:data:`LOCK_SCHEMA`), one writer (:func:`lock_document` / :func:`render_lock`)
and one reader (:func:`load_lock` / :func:`lock_from_dict`) live here, so the two cannot drift.

The document has ``schema``, ``generated``, ``envcheck``, ``[request]``, ``[machine]``, ``[build]``
(torch, variant, index_url, python…), ``[expect]`` (:class:`Expect`: what verify must find),
``[pip] lines`` and the plan's steps (``[[step]]``, plus ``[[post_install]]`` for readers of
schema 1 files).
"""

from __future__ import annotations

import re
import time

from envcheck.record import field, fields, record
from envcheck.errors import DataFileError
from envcheck.machine.model import Machine
from envcheck.schema import Scalar, Table, enum, list_of, plain, req, text, validate

TYPE_CHECKING = False  # typing and pathlib are not imported at run time (start-up, issue #9)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Dict, Iterator, List, Mapping, Optional, Protocol, Sequence, Tuple
else:
    Protocol = object  # PlanLike is a shape for type checkers: at run time a plain base


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
        driver: ``{"vendor", "side", "full", "floor", "last_branch"}`` (written as ``driver_*`` keys).
        post_install: the keys of the plan's post-install steps.
        mps: a macOS build that uses Metal.
        numpy: the NumPy requirement the plan installs (``"numpy<2"``, ``"numpy"`` = any version;
            ``None``: the plan said nothing about NumPy — ``matrices/numpy.toml`` has no row).
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
    numpy: Optional[str] = None

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
        if self.numpy:
            d["numpy"] = self.numpy
        return d

    @classmethod
    def from_dict(cls, table: Mapping[str, Any], path: object = "<lock>") -> Expect:
        """Check (:data:`EXPECT`) and convert an ``[expect]`` table; keys a newer envcheck added
        are ignored.

        Raises:
            DataFileError: a required key is missing, or a key has the wrong type.
        """
        return cls._from_checked(validate(table, EXPECT, path, "expect"))

    @classmethod
    def _from_checked(cls, checked: Mapping[str, Any]) -> Expect:
        names = {f.name for f in fields(cls)} - {"driver"}
        kw: Dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in checked.items() if k in names}
        kw["driver"] = {k[len("driver_"):]: v for k, v in checked.items() if k.startswith("driver_")}
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
        request: the ``[request]`` the plan answered (``torch``, ``backend``, ``compile``).
    """

    path: str
    torch: str
    variant: str
    expect: Expect
    index_url: str = ""
    pip_lines: List[str] = field(default_factory=list)
    machine: Optional[Machine] = None
    request: Mapping[str, Any] = field(default_factory=dict)

    @property
    def pins(self) -> List[str]:
        """``["torch==2.13.0+cpu", …]``."""
        return [ln for ln in self.pip_lines if "==" in ln and not ln.startswith("-")]

    @property
    def requirements(self) -> List[str]:
        """``["torch==2.13.0+cpu", …, "numpy<2"]``: every requirement line (pins and ranges)."""
        return [ln for ln in self.pip_lines if ln and not ln.startswith("-")]

    @property
    def index_option(self) -> str:
        """``--index-url https://download.pytorch.org/whl/cpu`` (or ``--find-links …``)."""
        return next((ln for ln in self.pip_lines if ln.startswith("-")), "")


# ---------------------------------------------------------------------------------------------
# writing


def _now() -> str:
    """datetime's now(utc).replace(microsecond=0).isoformat(), without importing datetime (start-up, #9)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


def lock_document(plan: PlanLike, generated: Optional[str] = None) -> Dict[str, Any]:
    """The ``envcheck.lock.toml`` document: machine, chosen build, what verify must find, the steps."""
    from envcheck import __version__

    b, r = plan.build, plan.release
    res = plan.resolution
    now = generated or _now()
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
    """``envcheck.lock.toml`` as text (``verify --lock`` reads it): :func:`lock_head` + :func:`lock_body`."""
    return lock_head(generated, title) + lock_body(plan)


#: the keys of the lock document :func:`lock_head` writes (its first two); :func:`lock_body` the rest
_HEAD_KEYS = ("schema", "generated")


def lock_head(generated: Optional[str] = None, title: str = "") -> str:
    """The lock's comment lines, ``schema`` and ``generated`` (now, unless given): the part that differs
    between the copies of one plan's lock (the file, the Dockerfile's, install.sh's)."""
    from envcheck.tomltext import toml_text

    head = (f"# {LOCK_FILE} — {title}\n"
            f"# Written by `envcheck plan`; `envcheck verify --lock {LOCK_FILE}` checks an environment against it.\n")
    return head + toml_text({"schema": LOCK_SCHEMA, "generated": generated or _now()})


def lock_body(plan: PlanLike) -> str:
    """The lock document after :func:`lock_head`'s keys, as TOML: the same in every copy of one plan's
    lock, so a renderer of several files makes it once (``render.shared``). tomli_w writes a table's
    plain keys first, in order, then its sub-tables; the body starts with a plain key (``envcheck``),
    so head + body are the bytes of dumping the whole document at once. Written as tomli_w writes it,
    by :func:`envcheck.tomltext.toml_text` (tomli_w's import, with datetime and math, is ~3 ms of a plan)."""
    from envcheck.machine.model import drop_none_table
    from envcheck.tomltext import toml_text

    doc = drop_none_table(lock_document(plan, generated="-"))
    return toml_text({k: v for k, v in doc.items() if k not in _HEAD_KEYS})


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
        from pathlib import Path

        doc = read_toml(Path(path))
    except RecursionError:  # tomllib recurses per nesting level ("a = [[[[…")
        raise DataFileError(path, "", "invalid TOML: nested too deeply to read") from None
    return lock_from_dict(doc, path)


def lock_from_dict(doc: Dict[str, Any], path: object = "<lock>") -> Lock:
    """Build a :class:`Lock` from parsed TOML, checking it against :data:`LOCK`.

    Raises:
        DataFileError: see :func:`load_lock`.
    """
    schema = doc.get("schema")
    if schema != LOCK_SCHEMA:
        raise DataFileError(path, "schema",
                            f"expected {LOCK_SCHEMA} (an {LOCK_FILE} from `envcheck plan`), got {schema!r}")
    checked = validate(doc, LOCK, path)
    build = checked["build"]
    expect = Expect._from_checked(checked["expect"])
    lines = checked.get("pip", {}).get("lines", [])
    machine = None
    if "machine" in doc:
        from envcheck.machine.io import machine_from_dict

        machine = machine_from_dict(doc["machine"], path, "machine")
    return Lock(path=str(path), torch=build["torch"], variant=build["variant"], expect=expect,
                index_url=str(build.get("index_url", "")), pip_lines=list(lines), machine=machine,
                request=checked.get("request", {}))


def _index_url(value: Any) -> Any:
    """An index URL from a lock: http(s)/file, no whitespace or shell metacharacters (the problem in words)."""
    from envcheck.edge import check_url
    from envcheck.errors import UsageError

    if value == "":
        return True
    try:
        check_url(value, "index_url")
    except UsageError as exc:
        return str(exc).split(": ", 1)[-1]
    return True


_TEXT = text(2000)

_HASH = r"--hash=sha256:[0-9a-f]{64}"  # (compiled by re on first use)
_INDEX_OPTIONS = ("--no-index --find-links", "--index-url", "--extra-index-url", "--find-links")


def _pip_line(value: Any) -> Any:
    """A ``[pip] lines`` entry as the plan writes it: an index option (``--index-url URL``,
    ``--find-links URL``, ``--no-index --find-links FOLDER``) or a requirement (``torch==2.13.0+cpu``,
    ``numpy<2``) with optional ``--hash=sha256:…`` options — the problem in words otherwise (a line
    ``torch==2.13.0+cpu; touch /tmp/x`` was repeated in verify's fix)."""
    from packaging.requirements import InvalidRequirement, Requirement

    if not isinstance(value, str) or not value.isprintable() or len(value) > 4000:
        return "expected printable text on one line"
    for opt in _INDEX_OPTIONS:
        if value.startswith(opt + " "):
            where = value[len(opt) + 1:]
            if not where or any(c.isspace() or c in "\"'`$;&|<>()" for c in where):
                return f"{opt} takes one URL or folder, without spaces or shell characters"
            return True if "://" not in where else _index_url(where)
    words = value.split(" ")
    if any(not re.fullmatch(_HASH, w) for w in words[1:]):
        return "a requirement line is one requirement, optionally followed by --hash=sha256:<64 hex digits> options"
    try:
        req = Requirement(words[0])
    except InvalidRequirement as exc:
        return f"not a requirement: {exc}"
    if req.url or req.marker:
        return "a requirement line names a package and its versions (no URL, no marker)"
    return True


_PIP_LINE = Scalar("a requirement or index option line", _pip_line, json={"type": "string"})

#: ``[expect]``: what verify must find. Keys a newer envcheck adds are allowed (plain data).
EXPECT = Table({
    "torch_version": req("version"), "variant": req(_TEXT), "python": "python_or_empty",
    "torchvision": "version", "torchaudio": "version", "cuda": "version", "cudnn": "version",
    "cudnn_version": "int", "nccl": "version", "hip": "version",
    "arch_list": list_of("kernel_target"), "gpu_arch": list_of("gpu_arch"),
    "post_install": list_of(_TEXT), "mps": "bool", "numpy": "requirement",
}, unknown="allow", extra=plain(2000), what="[expect] table",
    rule=lambda t: next(((f".{k}", "expected a string") for k, v in t.items()
                         if k.startswith("driver_") and not isinstance(v, str)), None))

#: ``[build]``: the chosen build (``torch`` and ``variant`` are what verify compares).
BUILD = Table({
    "torch": req("version"), "variant": req(_TEXT), "channel": _TEXT,
    "index_url": Scalar("an http(s) or file URL", _index_url, json={"type": "string"}), "index_kind": _TEXT,
    "python": "python_or_empty",
    "platform": "platform", "wheel_tag": _TEXT, "source": list_of(_TEXT), "confidence": "confidence",
    "warnings": list_of(_TEXT),
}, unknown="allow", extra=plain(2000), what="[build] table")

#: The whole ``envcheck.lock.toml`` (``[machine]`` is :data:`envcheck.machine.io.MACHINE`, checked
#: by :func:`~envcheck.machine.io.machine_from_dict`).
LOCK = Table({
    "schema": req(enum(LOCK_SCHEMA)), "generated": "str", "envcheck": _TEXT,
    "request": Table({"torch": _TEXT, "backend": _TEXT, "compile": "bool"}, unknown="allow", extra=plain(2000)),
    "machine": "any",
    "build": req(BUILD), "expect": req(EXPECT),
    "pip": Table({"lines": list_of(_PIP_LINE)}, unknown="allow", extra=plain(4000)),
    # the plan's steps, for people and `docker`: shell text over several lines, not read by verify
    "post_install": list_of(Table({}, unknown="allow")), "step": list_of(Table({}, unknown="allow")),
}, unknown="allow", extra=plain(4000))
