"""Facts: what the collector saw in one interpreter — saved, replayed, and read by diagnose.

A Facts document is plain JSON (``verify --json`` prints it under ``facts``; ``--facts FILE`` reads
it back, either alone or inside a whole ``verify --json`` report)::

    {"schema": 2,
     "python":   {"version": "3.11.7", "executable": "/venv/bin/python", "bits": 64, ...},
     "platform": {"os": "linux", "arch": "x86_64", "glibc": "2.36", "wsl": false, ...},
     "env":      {"LD_LIBRARY_PATH": "...", ...},              # an allow-list, never secrets
     "packages": {"torch": [{"version": "2.13.0+cpu", "location": "...", "requires": [...]}], ...},
     "machine":  {...},                                        # envcheck probe's Machine, optional
     "collector": {"workers": 1, "timeout": 60, "checks": ["import_torch", ...], "tier": "quick", ...},
     "runs": {"matmul": {"outcome": "ok", "seconds": 0.04, "data": {...}},
              "cudnn_conv": {"outcome": "crash", "signal": "SIGSEGV", "stderr": "..."}, ...}}

``outcome`` is ``ok`` | ``error`` | ``skip`` | ``crash`` | ``timeout``; the shape of each probe's
``data`` is documented in :mod:`envcheck.verify.collector`.

``collector.checks`` / ``collector.tier`` record what the run that collected the facts judged (a
tier collects more than it judges: the quick tier's ``lock`` check reads the companions' probes), so
a replay judges the same checks and gives the same verdict (newcomer3 #7).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from envcheck.errors import DataFileError
from envcheck.verify.checks import PROBE_DATA, PROBE_ORDER
from envcheck.schema import Table, check, describe, enum, list_of, map_of, req, validate

#: Facts written now. 2 added the ``environment`` probe (libraries loaded, accelerators) and, in the
#: sections, the host facts (container runtime, /dev/shm, WSL version, Jetson L4T, macOS VM, VC++
#: runtime) and per distribution its name, installer and direct_url.
SCHEMA = 2

#: Facts this envcheck reads: schema 1 files (earlier envchecks) replay unchanged — every key schema 2
#: added is optional, so a schema 1 document is a schema 2 document without that evidence.
SCHEMAS_READ = (1, 2)

OUTCOMES = ("ok", "error", "skip", "crash", "timeout")


@dataclass
class Facts:
    """A Facts document with typed accessors; ``data`` is the JSON object itself.

    Accessors never raise for missing parts: an absent fact is ``None`` / empty.
    """

    data: Dict[str, Any] = field(default_factory=lambda: {"schema": SCHEMA, "runs": {}})

    # -- generic access ----------------------------------------------------------------------
    def section(self, name: str) -> Dict[str, Any]:
        value = self.data.get(name)
        return value if isinstance(value, dict) else {}

    def run(self, probe: str) -> Optional[Dict[str, Any]]:
        """The recorded run of a probe, or ``None`` when it did not run."""
        return self.section("runs").get(probe)

    def probe_data(self, probe: str) -> Dict[str, Any]:
        """The ``data`` of a probe that ran to completion (``{}`` otherwise)."""
        r = self.run(probe)
        return r.get("data") or {} if r and r.get("outcome") == "ok" else {}

    def to_dict(self) -> Dict[str, Any]:
        return self.data

    # -- common facts --------------------------------------------------------------------------
    @property
    def python_version(self) -> Optional[str]:
        """``"3.12.9"`` (as the interpreter reports it)."""
        return self.section("python").get("version")

    @property
    def python_minor(self) -> Optional[str]:
        """``"3.12"``, or ``"3.13t"`` for a free-threaded interpreter."""
        v = self.python_version
        if not v:
            return None
        mm = ".".join(v.split(".")[:2])
        return mm + ("t" if self.section("python").get("free_threaded") else "")

    @property
    def interpreter(self) -> str:
        """The interpreter to put in commands (``/venv/bin/python``, or ``python``)."""
        return self.section("python").get("executable") or "python"

    @property
    def os(self) -> Optional[str]:
        return self.section("platform").get("os")

    @property
    def glibc(self) -> Optional[str]:
        return self.section("platform").get("glibc")

    @property
    def wsl(self) -> Optional[bool]:
        return self.section("platform").get("wsl")

    @property
    def torch(self) -> Dict[str, Any]:
        """``import_torch`` data: version, file, cuda, hip…"""
        return self.probe_data("import_torch")

    @property
    def build(self) -> Dict[str, Any]:
        """``cuda_build`` data: cuda, hip, cudnn, nccl, arch_list, devices, driver…"""
        return self.probe_data("cuda_build")

    @property
    def torch_version(self) -> Optional[str]:
        """The torch that imports (``torch.__version__``), else the first installed copy's metadata."""
        v = self.torch.get("version")
        if v:
            return v
        dists = self.packages("torch")
        return dists[0].get("version") if dists else None

    @property
    def torch_cuda(self) -> Optional[str]:
        return self.torch.get("cuda") or self.build.get("cuda")

    @property
    def torch_hip(self) -> Optional[str]:
        return self.torch.get("hip") or self.build.get("hip")

    def packages(self, name: str) -> List[Dict[str, Any]]:
        """Installed copies of a distribution, the one import finds first."""
        value = self.section("packages").get(name)
        return value if isinstance(value, list) else []

    @property
    def judged(self) -> Optional[List[str]]:
        """The checks the run that collected these facts judged (``collector.checks``), or ``None``
        when the facts do not say (an older envcheck)."""
        checks = self.section("collector").get("checks")
        return [str(c) for c in checks] if isinstance(checks, list) and checks else None

    @property
    def tier(self) -> Optional[str]:
        """The tier label of that run (``quick``/``full``/``custom``), or ``None``."""
        tier = self.section("collector").get("tier")
        return tier if isinstance(tier, str) and tier else None

    def record_judged(self, checks: List[str], tier: Optional[str]) -> None:
        """Record what is judged, unless the facts already say what their own run judged."""
        col = self.data.get("collector")
        if not isinstance(col, dict):
            col = self.data["collector"] = {}
        if not col.get("checks"):
            col["checks"] = list(checks)
            if tier:
                col["tier"] = tier

    @property
    def devices(self) -> List[Dict[str, Any]]:
        return list(self.build.get("devices") or [])

    @property
    def driver(self) -> Dict[str, Any]:
        return self.build.get("driver") or {}


def public_version(version: Optional[str]) -> str:
    """``"2.7.0+cu128"`` → ``"2.7.0"``."""
    return (version or "").split("+", 1)[0]


def local_label(version: Optional[str]) -> str:
    """``"0.28.0+cpu"`` → ``"cpu"``; ``"0.28.0"`` → ``""``."""
    return (version or "").partition("+")[2]


def same_build(have: Optional[str], want: Optional[str]) -> bool:
    """Whether the installed version ``have`` is the build ``want`` pins: where ``want`` carries a
    local label (``+cpu``, ``+cu130``, ``+rocm6.4``), ``have`` must carry it too (a longer label that
    extends it after a dot, ``rocm6.4.1.git…``, is the same build); a pin without a label accepts any."""
    want_label = local_label(want)
    have_label = local_label(have)
    return not want_label or have_label == want_label or have_label.startswith(want_label + ".")


def build_words(version: str) -> str:
    """``2.13.0+cpu`` → ``the +cpu build``; a version without a local label → the index's default wheel."""
    label = local_label(version)
    return (f"the +{label} build" if label else
            "the build without a local label (the package index's default wheel — on Linux x86_64 PyPI's is a CUDA build)")


def variant_of(version: Optional[str], cuda: Optional[str], hip: Optional[str],
               xpu: Optional[str] = None) -> Optional[str]:
    """The build variant: the local label (``cu128``, ``rocm6.4.1.git…`` → ``rocm6.4.1``), else
    what ``torch.version`` says (CUDA 12.8 → ``cu128``, HIP 6.3.x → ``rocm6.3``), else ``cpu``."""
    label = (version or "").partition("+")[2]
    if label:
        m = re.match(r"(cu\d+|rocm\d+(?:\.\d+)*|cpu|xpu)", label)
        return m.group(1).rstrip(".") if m else label
    if cuda:
        return "cu" + "".join(cuda.split(".")[:2])
    if hip:
        return "rocm" + ".".join(hip.split(".")[:2])
    if xpu:
        return "xpu"
    return "cpu" if version else None


def load_facts(path: Path) -> Facts:
    """Read a Facts JSON file (or a whole ``verify --json`` report holding one under ``facts``).

    Raises:
        DataFileError: unreadable, not UTF-8, not JSON (or nested deeper than Python can read), or
            a part has the wrong shape (names the key).
    """
    from envcheck.errors import UsageError
    from envcheck.fsutil import read_input

    try:
        raw = read_input(path)  # a regular file, size-capped: never a FIFO or /dev/zero
    except UsageError as exc:
        raise DataFileError(path, "", str(exc).split(": ", 1)[-1]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(path, "", f"not UTF-8 text (byte {exc.start}): facts files are JSON written by "
                                      "`envcheck verify --json`") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(path, "", f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise DataFileError(path, "", "invalid facts: JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise DataFileError(path, "", f"invalid JSON: {exc}") from None
    if isinstance(doc, dict) and isinstance(doc.get("facts"), dict) and "checks" in doc:
        report = doc
        doc = doc["facts"]
        prefix = "facts."
    else:
        report, prefix = None, ""
    facts = facts_from_dict(doc, path, prefix)
    if report is not None and isinstance(report.get("checks"), list):
        # a whole report (``verify --json``, a node report) names the checks it judged, even from an
        # envcheck that did not record them in the facts
        names = [c.get("name") for c in report["checks"] if isinstance(c, dict)]
        tier = report.get("tier")
        facts.record_judged([n for n in names if isinstance(n, str)], tier if isinstance(tier, str) else None)
    return facts


def facts_from_dict(doc: Any, path: object = "<facts>", prefix: str = "") -> Facts:
    """Check a Facts document against :data:`FACTS`: every field diagnose reads has the type (and,
    for versions, the form) it must have; unknown extra keys are allowed, ``null`` means absent.

    Raises:
        DataFileError: the document or one of its parts has the wrong shape (names the key).
    """
    where = prefix.rstrip(".")
    if not isinstance(doc, dict):
        raise DataFileError(path, where, "expected a JSON object of facts (see `envcheck verify --json`)")
    schema = doc.get("schema", SCHEMA)
    if schema not in SCHEMAS_READ or isinstance(schema, bool):
        raise DataFileError(path, f"{prefix}schema", f"unsupported facts schema {schema!r}; this envcheck reads "
                                                     f"{', '.join(map(str, SCHEMAS_READ))}")
    validate(doc, FACTS, path, where)
    if isinstance(doc.get("machine"), dict):
        from envcheck.machine.io import machine_from_dict

        machine_from_dict(doc["machine"], path, f"{prefix}machine")
    try:
        return Facts(_terminal_safe(doc))
    except RecursionError:
        raise DataFileError(path, where, "nested too deeply to be a facts document") from None


def _terminal_safe(value: Any) -> Any:
    """Every string of a facts document from outside with ANSI escapes and control characters
    removed (newlines kept): a facts file cannot recolour the terminal or fake a line of the report."""
    from envcheck.edge import terminal_text

    if isinstance(value, dict):
        return {(terminal_text(k) if isinstance(k, str) else k): _terminal_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_terminal_safe(v) for v in value]
    if isinstance(value, str):
        return terminal_text(value)
    return value


# -- the shape of a Facts document (spec language: envcheck.schema) --------------------------

_ERROR = {"type": "str", "message": "str", "traceback": "str"}

#: ``runs.<probe>.data`` keys every ``ok`` result of that probe has (the collector always sets
#: them): an ``ok`` without them is malformed, never a pass.
REQUIRED_OK: Dict[str, Tuple[str, ...]] = {
    "import_torch": ("version",),
    "allocation": ("devices",),
    "matmul": ("results",),
    "stream_sync": ("results",),
    "cudnn_conv": ("results",),
    "torch_compile": ("results",),
    "distributed": ("ranks",),
    "torchvision_compat": ("nms",),
}

#: The other top-level sections.
SECTIONS: Dict[str, Any] = {
    "python": {"version": "python_version", "implementation": "str", "executable": "str", "prefix": "str",
               "base_prefix": "str", "bits": enum(32, 64), "free_threaded": "bool", "conda": "bool",
               "path": list_of("str")},
    "platform": {"os": "str", "arch": "str", "release": "str", "glibc": "version", "wsl": "bool",
                 "wsl_version": "int", "container": "bool", "container_runtime": "str", "shm_mib": "int",
                 "l4t": "str", "macos": "str", "vm": "bool", "vcruntime": list_of("str")},
    "env": map_of("str"),
    "packages": map_of(list_of({"name": "str", "version": "str", "location": "str", "requires": list_of("str"),
                                "installer": "str", "direct_url": {"url": "str", "editable": "bool"}})),
    "collector": {"python": "str", "workers": "int", "timeout": "secs", "error": "str", "stalled": "bool",
                  "notes": list_of("str"), "checks": list_of("str"), "tier": "str"},
}

#: A run record (``runs.<probe>``) besides its ``data``.
RUN = {"outcome": req(enum(*OUTCOMES)), "seconds": "secs", "error": _ERROR, "stderr": "str", "signal": "str",
       "exit": "str", "timeout": "secs", "reason": "str"}


def _carries_data(name: str) -> Any:
    def rule(run: Mapping[str, Any]) -> Optional[Tuple[str, str]]:
        if run.get("outcome") != "ok":
            return None
        data = run.get("data")  # a pass must carry what the check measured, not an empty object
        if not data:
            return ".data", "missing: an \"ok\" result must carry the check's data"
        missing = [k for k in REQUIRED_OK.get(name, ()) if data.get(k) is None]
        if missing:
            return f".data.{missing[0]}", "missing: an \"ok\" result must carry the check's data"
        return None

    return rule


#: ``runs.<probe>``: the run record with the probe's own ``data`` shape (:data:`~envcheck.verify.checks.PROBE_DATA`).
RUNS: Dict[str, Table] = {name: Table({**RUN, "data": Table(PROBE_DATA.get(name) or {}, unknown="allow")},
                                      unknown="allow", rule=_carries_data(name)) for name in PROBE_ORDER}

#: A whole Facts document (``[machine]`` is checked by :func:`envcheck.machine.io.machine_from_dict`).
FACTS = Table({
    **{key: Table(spec, unknown="allow") if isinstance(spec, dict) else spec for key, spec in SECTIONS.items()},
    "machine": {},
    "runs": req(Table(RUNS, unknown="error", noun="probe", what="{probe name: {outcome, data}}")),
}, unknown="allow")


def run_problem(name: str, run: Any) -> Optional[Tuple[str, str]]:
    """What is wrong with the run record of probe ``name``: ``(".key.path", message)``, or ``None``."""
    if not isinstance(run, dict):
        return "", f"expected a table, got {describe(run)}"
    problem = check(run, RUNS.get(name, Table(RUN, unknown="allow")), name)
    return (problem[0][len(name):], problem[1]) if problem else None


def section_problem(key: str, value: Any) -> Optional[Tuple[str, str]]:
    """What is wrong with a top-level section (``python``, ``platform``…): ``(".key.path", message)``."""
    problem = check(value, FACTS.fields.get(key, {}), key)
    return (problem[0][len(key):], problem[1]) if problem else None
