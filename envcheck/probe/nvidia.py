"""NVIDIA: driver version, the highest CUDA the driver supports, and every GPU.

Methods, in order (the first that answers wins; why each earlier one failed is kept in ``how``):

1. NVML (libnvidia-ml, loaded only when a driver is present) through the collector's stdlib ctypes
   reader :func:`envcheck.verify.collector.read_nvml` — the one NVML reader, shared with verify:
   ``nvmlSystemGetDriverVersion``, ``nvmlSystemGetCudaDriverVersion_v2`` (``12080`` = 12.8), and
   per device name, UUID, ``nvmlDeviceGetCudaComputeCapability``, memory, MIG mode.
2. ``nvidia-smi --query-gpu=index,name,uuid,compute_cap,memory.total,driver_version,mig.mode.current
   --format=csv,noheader,nounits`` (one line per GPU; drivers before ~510 reject ``compute_cap`` —
   huggingface/candle#733 — so the query is repeated without it and the arch looked up by name),
   plus "CUDA Version" from the plain ``nvidia-smi`` banner or ``<cuda_version>`` of
   ``nvidia-smi -q -x``. Under WSL2 the Windows driver provides ``/usr/lib/wsl/lib/nvidia-smi``.
3. ``/proc/driver/nvidia/version``: the kernel module's version only
   (``NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05 …`` or, for the open modules,
   ``NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build …``, nix-community/nixGL#186).

Compute capability ``8.9`` is the architecture ``sm_89`` (``12.0`` → ``sm_120``).
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from envcheck.machine.model import GpuDevice
from envcheck.probe.context import Finding, ProbeContext, first_line, matrix_gpu, result_reason
from envcheck.probe.wsl import WSL_LIB

QUERY_FIELDS = ("index", "name", "uuid", "compute_cap", "memory.total", "driver_version", "mig.mode.current")
_NA = {"", "n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]"}
_VERSION = re.compile(r"\d+(\.\d+)+")


def sm_arch(compute_capability: str) -> Optional[str]:
    """``"8.9"`` → ``"sm_89"``; ``"12.0"`` → ``"sm_120"``; ``None`` for anything else."""
    mt = re.fullmatch(r"\s*(\d{1,2})\.(\d)\s*", compute_capability or "")
    return f"sm_{mt.group(1)}{mt.group(2)}" if mt else None


def query_argv(smi: str, fields=QUERY_FIELDS) -> List[str]:
    return [smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]


def parse_query(text: str, fields=QUERY_FIELDS) -> Tuple[List[dict], List[str]]:
    """Rows of ``--query-gpu … --format=csv,noheader,nounits`` output, and the lines that did not parse."""
    rows, bad = [], []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(fields):
            bad.append(line.strip())
            continue
        rows.append({k: (None if v.lower() in _NA else v) for k, v in zip(fields, cells)})
    return rows, bad


def parse_cuda_banner(text: str) -> Tuple[Optional[str], str]:
    """``"CUDA Version: 12.2"`` of the plain ``nvidia-smi`` banner (or ``nvidia-smi -q``) → ``("12.2", "")``.

    Returns ``(None, why)`` when the banner has no version — e.g. ``CUDA Version: ERR!``
    (microsoft/WSL#11589).
    """
    mt = re.search(r"CUDA Version\s*:\s*([^\s|]+)", text)
    if not mt:
        return None, "no 'CUDA Version' in its output"
    value = mt.group(1)
    if _VERSION.fullmatch(value):
        return value, ""
    return None, f"it printed 'CUDA Version: {value}'"


def parse_smi_xml(text: str, tag: str) -> Optional[str]:
    """The text of the first ``<tag>`` of ``nvidia-smi -q -x`` output, when it is a version."""
    mt = re.search(rf"<{tag}>\s*([^<]*?)\s*</{tag}>", text)
    return mt.group(1) if mt and _VERSION.fullmatch(mt.group(1)) else None


def parse_proc_version(text: str) -> Optional[str]:
    """The driver version in ``/proc/driver/nvidia/version`` (proprietary and open kernel modules)."""
    mt = re.search(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)\s", text + " ")
    return mt.group(1) if mt else None


def _int(value: Optional[str]) -> Optional[int]:
    try:
        return int(float(value)) if value is not None else None
    except ValueError:
        return None


def _mig(value: Optional[str]) -> Optional[bool]:
    v = (value or "").lower()
    return True if v == "enabled" else False if v == "disabled" else None


def smi_path(ctx: ProbeContext, wsl: bool) -> Tuple[str, str]:
    """The ``nvidia-smi`` to run and its name for notes: under WSL2 the Windows driver's copy in ``/usr/lib/wsl/lib``."""
    wsl_smi = f"{WSL_LIB}/nvidia-smi"
    if wsl and ctx.exists(wsl_smi):
        return str(ctx.path(wsl_smi)), wsl_smi
    return "nvidia-smi", "nvidia-smi"


def driver_present(ctx: ProbeContext, wsl: bool) -> Optional[str]:
    """Evidence of an NVIDIA driver that makes NVML worth loading, or ``None``."""
    for rel in ("/proc/driver/nvidia/version", "/dev/nvidiactl"):
        if ctx.exists(rel):
            return rel
    if wsl and ctx.exists(f"{WSL_LIB}/libnvidia-ml.so.1"):
        return f"{WSL_LIB}/libnvidia-ml.so.1"
    return None


def probe_nvidia(ctx: ProbeContext, wsl: bool = False, windows: bool = False) -> Finding:
    """NVIDIA driver, max CUDA and GPUs; each with its method, or why it is unknown."""
    f = Finding()
    tried: List[str] = []
    evidence = driver_present(ctx, wsl) or ("Windows" if windows else None)
    if ctx.nvml is not False and ((ctx.live and evidence) or ctx.nvml is not None):
        if _from_nvml(ctx, f, tried, wsl):
            return f
    elif ctx.nvml is False:
        tried.append("NVML not used")
    elif not ctx.live:
        tried.append("NVML not used for a replayed tree")
    else:
        tried.append("NVML not tried: no NVIDIA kernel driver (/proc/driver/nvidia, /dev/nvidiactl absent)")
    smi, smi_note = smi_path(ctx, wsl)
    if _from_smi(ctx, f, tried, smi, smi_note, wsl):
        return f
    _from_proc(ctx, f, tried)
    return f


# -- 1. NVML ------------------------------------------------------------------------------------
def _from_nvml(ctx: ProbeContext, f: Finding, tried: List[str], wsl: bool) -> bool:
    """NVML through the collector's stdlib reader (:func:`envcheck.verify.collector.read_nvml`):
    the same code reads NVML on the host (here) and inside the environment under test."""
    from envcheck.verify.collector import read_nvml

    try:
        data = read_nvml(None if ctx.nvml is None or ctx.nvml is True else ctx.nvml)
    except Exception as exc:  # a broken libnvidia-ml is a reason to fall back, never a crash
        tried.append(f"NVML failed: {exc}")
        return False
    if not data.get("version") and data.get("error"):
        tried.append(f"NVML: {data['error']}")
        return False
    if data.get("error"):
        tried.append(f"NVML failed while reading devices: {data['error']}")
        return False
    how = "NVML (libnvidia-ml)" + (", the Windows driver under WSL" if wsl else "")
    f.set("nvidia_driver", str(data["version"]), how)
    if data.get("cuda_max"):
        f.set("cuda_driver_max", str(data["cuda_max"]), how + " nvmlSystemGetCudaDriverVersion_v2")
    else:
        f.missing("cuda_driver_max", "NVML could not tell the CUDA version (nvmlSystemGetCudaDriverVersion_v2)")
    for g in data.get("gpus") or []:
        major, minor = (g.get("capability") or [0, 0])[:2]
        f.gpus.append(GpuDevice(vendor="nvidia", name=g.get("name") or "NVIDIA GPU", arch=f"sm_{major}{minor}",
                                memory_mib=g.get("memory_mib"), index=g.get("index"), uuid=g.get("uuid"),
                                mig=g.get("mig"), how=how))
    f.how["nvidia_gpus"] = how
    return True


# -- 2. nvidia-smi ------------------------------------------------------------------------------
def _from_smi(ctx: ProbeContext, f: Finding, tried: List[str], smi: str, note: str, wsl: bool) -> bool:
    fields: Tuple[str, ...] = QUERY_FIELDS
    res = ctx.run(query_argv(smi, fields))
    said = res.stdout + res.stderr
    if not res.ok and "compute_cap" in said and "not a valid field" in said:
        tried.append(f"{note} does not know the compute_cap field ({first_line(said)})")
        fields = tuple(k for k in QUERY_FIELDS if k != "compute_cap")
        res = ctx.run(query_argv(smi, fields))
    if not res.ok:
        tried.append(f"{note} --query-gpu: {result_reason(res)}")
        return False
    rows, bad = parse_query(res.stdout, fields)
    if not rows:
        tried.append(f"{note} --query-gpu printed nothing parsable"
                     + (f" (first line: {bad[0][:100]!r})" if bad else " (empty output)"))
        return False
    how = f"{note} --query-gpu" + (" (WSL2: the Windows driver)" if wsl else "")
    after = f" ({'; '.join(tried)})" if tried else ""
    for row in rows:
        gpu = _smi_gpu(ctx, row, how)
        if gpu is None:
            f.add_unknown("nvidia_gpus", f"NVIDIA GPU {row.get('name')!r}: no compute capability and no "
                                         "matrix GPU of that name")
            continue
        f.gpus.append(gpu)
    f.how["nvidia_gpus"] = how + after
    drivers = sorted({r["driver_version"] for r in rows if r.get("driver_version")})
    if drivers and _VERSION.fullmatch(drivers[0]):
        f.set("nvidia_driver", drivers[0], how + after)
    else:
        f.missing("nvidia_driver", f"{note} --query-gpu printed no driver version")
    _cuda_version(ctx, f, smi, note)
    return True


def _smi_gpu(ctx: ProbeContext, row: dict, how: str) -> Optional[GpuDevice]:
    name = row.get("name") or "NVIDIA GPU"
    arch = sm_arch(row.get("compute_cap") or "")
    gpu_how = how
    if arch is None:
        arch, gpu_how = _arch_by_name(ctx, name, how)
        if arch is None:
            return None
    return GpuDevice(vendor="nvidia", name=name, arch=arch, memory_mib=_int(row.get("memory.total")),
                     index=_int(row.get("index")), uuid=row.get("uuid"), mig=_mig(row.get("mig.mode.current")),
                     how=gpu_how)


def _arch_by_name(ctx: ProbeContext, name: str, how: str) -> Tuple[Optional[str], str]:
    row = matrix_gpu(ctx.matrix, name, "nvidia")
    if row is None:
        return None, how
    return row.arch, f"{how}; arch from the name ({row.name}, matrices/gpus-nvidia.toml)"


def _cuda_version(ctx: ProbeContext, f: Finding, smi: str, note: str) -> None:
    res = ctx.run([smi])
    if res.ok:
        value, why = parse_cuda_banner(res.stdout)
        if value:
            f.set("cuda_driver_max", value, f"'CUDA Version' in the {note} banner")  # e.g. "CUDA Version: 12.2"
            return
        reasons = [f"{note}: {why}"]
    else:
        reasons = [f"{note}: {result_reason(res)}"]
    res = ctx.run([smi, "-q", "-x"])
    value = parse_smi_xml(res.stdout, "cuda_version") if res.ok else None
    if value:
        f.set("cuda_driver_max", value, f"<cuda_version> of {note} -q -x ({reasons[0]})")
        return
    reasons.append(f"{note} -q -x: " + (result_reason(res) if not res.ok else "no <cuda_version> version"))
    f.missing("cuda_driver_max", "; ".join(reasons))


# -- 3. /proc -----------------------------------------------------------------------------------
def _from_proc(ctx: ProbeContext, f: Finding, tried: List[str]) -> None:
    text, why = ctx.read("/proc/driver/nvidia/version")
    if text is None:
        tried.append(why or "/proc/driver/nvidia/version unreadable")
        f.missing("nvidia_driver", "no NVIDIA driver found: " + "; ".join(tried))
        f.missing("cuda_driver_max", "no NVIDIA driver found")
        return
    version = parse_proc_version(text)
    if version is None:
        tried.append(f"/proc/driver/nvidia/version has no version ({first_line(text, 100)!r})")
        f.missing("nvidia_driver", "; ".join(tried))
        f.missing("cuda_driver_max", "no NVIDIA driver version found")
        return
    f.set("nvidia_driver", version, "/proc/driver/nvidia/version (" + "; ".join(tried) + ")")
    f.missing("cuda_driver_max", "only /proc/driver/nvidia/version answered, and it does not state the "
                                 "CUDA version (" + "; ".join(tried) + ")")
    f.unknown["nvidia_gpus"] = ("an NVIDIA driver is loaded but its GPUs could not be listed: "
                         + "; ".join(tried) + " — pass them with --gpu")
