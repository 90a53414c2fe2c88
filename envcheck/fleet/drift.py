"""The facts compared across nodes, read from one node report.

Each fact is a short string (or ``None`` when the node does not know it) so that nodes can be
grouped by value. What a fact means and where it comes from:

=============  ==================================================================================
driver         the NVIDIA driver torch saw (``cuda_build``), else the one probe found
torch          ``torch.__version__`` (with its local label: ``2.9.0+cu128``)
variant        the build variant: ``cu128``, ``rocm6.4``, ``cpu``…
cuda           ``torch.version.cuda`` (or ``hip`` …)
cudnn          ``torch.backends.cudnn.version()``
nccl           ``torch.cuda.nccl.version()``
arch_list      ``torch.cuda.get_arch_list()``
torchvision    the companion packages' versions
torchaudio
python         the interpreter's version
glibc          the C library's version
os             ``linux`` / ``windows`` / ``macos`` and the CPU arch
shm            the size of ``/dev/shm`` (the node's, else the one the collector saw)
gpu_model      the GPUs' names (sorted, ``2× NVIDIA H100 80GB HBM3`` style)
gpu_count      how many GPUs torch (else probe) sees
=============  ==================================================================================

A fact the report does not hold is ``None`` (unknown: never drift, never judged by a lock). A
package the node is known to lack — the report lists the installed packages (as ``verify --lock``
reads them) and it is not among them — is :data:`NOT_INSTALLED`, a value like any other: one node
without torchvision beside nodes with it is drift in ``fleet merge`` exactly as it is a change in
``fleet diff``, and a lock that pins it rules it out (newcomer6 #4).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

#: The value of a package fact on a node known not to have that package.
NOT_INSTALLED = "not installed"
#: The facts that are installed packages (an absent one is :data:`NOT_INSTALLED` when known).
PACKAGE_FACTS = ("torch", "torchvision", "torchaudio")

#: The facts in report order.
FACTS = ("driver", "torch", "variant", "cuda", "cudnn", "nccl", "arch_list", "torchvision", "torchaudio",
         "python", "glibc", "os", "shm", "gpu_model", "gpu_count")


def _d(v: Any) -> Dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _ok_data(facts: Mapping[str, Any], probe: str) -> Dict[str, Any]:
    run = _d(_d(facts.get("runs")).get(probe))
    return _d(run.get("data")) if run.get("outcome") == "ok" else {}


def _str(v: Any) -> Optional[str]:
    if v is None or v == "" or v == []:
        return None
    return str(v)


def human_bytes(n: int) -> str:
    """``67108864`` → ``64 MiB``; ``17179869184`` → ``16 GiB`` (one decimal when not whole)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.0f} {unit}" if abs(v - round(v)) < 0.05 else f"{v:.1f} {unit}"
    return f"{n} B"


def node_facts(report: Mapping[str, Any]) -> Dict[str, Optional[str]]:
    """The :data:`FACTS` of one node report (a ``verify --json`` report works too)."""
    from envcheck.verify.facts import variant_of

    facts = _d(report.get("facts"))
    machine = _d(report.get("machine")) or _d(facts.get("machine"))
    host = _d(report.get("host"))
    torch = _ok_data(facts, "import_torch")
    build = _ok_data(facts, "cuda_build")
    packages = _d(facts.get("packages"))

    listed = isinstance(facts.get("packages"), dict)  # the installed packages were recorded

    def pkg(name: str) -> Optional[str]:
        rows = packages.get(name)
        if isinstance(rows, list) and rows and isinstance(rows[0], dict):
            return _str(rows[0].get("version"))
        return NOT_INSTALLED if listed and not rows else None

    version = _str(torch.get("version")) or pkg("torch")
    installed = version if version != NOT_INSTALLED else None
    cuda = _str(torch.get("cuda") or build.get("cuda"))
    hip = _str(torch.get("hip") or build.get("hip"))
    driver = _str(_d(build.get("driver")).get("version")) or _str(machine.get("nvidia_driver"))
    devices = [d for d in build.get("devices") or [] if isinstance(d, dict)]
    if devices:
        names = [str(d.get("name")) for d in devices]
        count: Optional[int] = len(devices) if build.get("device_count") is None else int(build["device_count"])
    else:
        gpus = [g for g in machine.get("gpus") or [] if isinstance(g, dict)]
        names = [str(g.get("name")) for g in gpus]
        count = len(gpus) if machine else None
    model = None
    if names:
        by: Dict[str, int] = {}
        for n in names:
            by[n] = by.get(n, 0) + 1
        model = ", ".join(f"{k}" if c == 1 else f"{c}× {k}" for k, c in sorted(by.items()))
    platform = _d(facts.get("platform"))
    os_name = platform.get("os") or machine.get("os")
    arch = platform.get("arch") or machine.get("arch")
    shm = host.get("shm_bytes")
    if not isinstance(shm, int):  # a report from saved facts: the collector's own /dev/shm reading
        mib = platform.get("shm_mib")
        shm = mib * (1 << 20) if isinstance(mib, int) and not isinstance(mib, bool) else None
    arch_list = build.get("arch_list")
    return {
        "driver": driver,
        "torch": version,
        "variant": variant_of(installed, cuda, hip) if installed else None,
        "cuda": cuda or (f"hip {hip}" if hip else None),
        "cudnn": _str(build.get("cudnn")),
        "nccl": _str(build.get("nccl")),
        "arch_list": " ".join(str(a) for a in arch_list) if isinstance(arch_list, list) and arch_list else None,
        "torchvision": _str(_ok_data(facts, "torchvision_compat").get("version")) or pkg("torchvision"),
        "torchaudio": _str(_ok_data(facts, "torchaudio_compat").get("version")) or pkg("torchaudio"),
        "python": _str(_d(facts.get("python")).get("version")),
        "glibc": _str(platform.get("glibc") or machine.get("glibc")),
        "os": f"{os_name} {arch}" if os_name and arch else _str(os_name),
        "shm": human_bytes(shm) if isinstance(shm, int) and not isinstance(shm, bool) else None,
        "gpu_model": model,
        "gpu_count": str(count) if count is not None else None,
    }


def lock_expectations(expect: Mapping[str, Any]) -> Dict[str, Any]:
    """What a lock's ``[expect]`` table says each fact must be: ``{fact: predicate-ready value}``.

    ``python`` is the minor (``3.11``: any 3.11.x fits), ``driver`` the lowest that runs the build
    (``driver_floor``), ``cudnn`` the integer ``torch.backends.cudnn.version()`` gives.
    """
    out: Dict[str, Any] = {}
    for fact, key in (("torch", "torch_version"), ("variant", "variant"), ("cuda", "cuda"), ("nccl", "nccl"),
                      ("torchvision", "torchvision"), ("torchaudio", "torchaudio"), ("python", "python")):
        if expect.get(key):
            out[fact] = str(expect[key])
    if expect.get("cudnn_version"):
        out["cudnn"] = str(expect["cudnn_version"])
    if isinstance(expect.get("arch_list"), list) and expect["arch_list"]:
        out["arch_list"] = " ".join(expect["arch_list"])
    if expect.get("driver_floor"):
        out["driver"] = str(expect["driver_floor"])
    return out


def lock_says_wrong(fact: str, value: Optional[str], expected: Any) -> bool:
    """Whether the lock's expectation for ``fact`` rules out ``value`` (an unknown value is not
    judged)."""
    if value is None or expected is None:
        return False
    if fact == "python":
        return not (value == expected or value.startswith(expected + "."))
    if fact == "driver":
        from envcheck.matrix.model import vkey

        try:
            return vkey(value) < vkey(str(expected))
        except ValueError:
            return False
    if fact in ("torchvision", "torchaudio", "torch"):
        # a lock pins "2.9.0+cu128"; a node reporting "2.9.0" from metadata without a label still fits
        return value != expected and value != expected.split("+")[0]
    return value != expected


def lock_rule(fact: str, expected: Any) -> str:
    """How the lock's expectation reads in the report."""
    if fact == "driver":
        return f"≥ {expected}"
    if fact == "python":
        return f"{expected}.x"
    return str(expected)
