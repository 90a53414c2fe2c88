"""envcheck's fact collector: runs inside the interpreter under test and reports what it finds.

This file is executed by path (``PYTHON collector.py --checks import_torch,matmul``) in the target
environment — this interpreter, a venv or conda env without envcheck, or a container (the file is
copied or mounted there) — so it needs only the standard library (Python 3.7+) and torch. It
imports nothing from envcheck.

It measures; it does not judge. Each probe records what happened (versions, relative errors, the
exception text) and ``envcheck.verify.diagnose`` decides pass/fail/skip from those facts, so a saved
report can be replayed and re-judged elsewhere.

Protocol: one JSON object per line on the *original* stdout; fd 1 is pointed at stderr before torch
is imported, so anything torch or a C library prints cannot corrupt the stream::

    {"event": "hello", "protocol": 1, "python": {...}, "platform": {...}, "env": {...}, "packages": {...}}
    # platform: os, arch, glibc, wsl (+ wsl_version), container (+ container_runtime), shm_mib (size
    # of /dev/shm), l4t (Jetson), macos + vm, vcruntime (Windows); packages: every copy of torch,
    # its companions, triton, numpy, xformers, flash-attn, bitsandbytes and every nvidia-*/rocm*/amd-*
    # wheel: name, version, location, requires, installer, direct_url
    {"event": "start", "check": "matmul"}
    {"event": "result", "check": "matmul", "outcome": "ok", "seconds": 0.04, "data": {...}}
    {"event": "done"}

``outcome`` is ``ok`` (the probe ran; ``data`` holds what it measured), ``error`` (it raised;
``error`` holds type, message and traceback tail), or ``skip`` (``reason`` says why: no GPU…).
A probe that hangs or kills the process gets no result line: the parent (envcheck) sees the
``start`` without a ``result``, kills the worker after its timeout, records a ``timeout`` or
``crash`` (with the signal), and starts a fresh worker for the remaining probes.

Python's own startup options are left alone (no ``-I``/``-E``/``-s``): verify tests the environment
as the user's programs see it, including ``PYTHONPATH`` and user site-packages, which is where a
shadowing second copy of torch usually hides.
"""

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
import traceback
import warnings

PROTOCOL = 1

#: Environment variables worth recording (an allow-list: nothing else is read, so no secrets leak).
ENV_KEYS = (
    "LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "PYTHONPATH", "PYTHONNOUSERSITE", "VIRTUAL_ENV",
    "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES",
    "CUDA_MODULE_LOADING", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION",
    "TORCH_CUDA_ARCH_LIST", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ROCM_ARCH", "CC", "CXX",
    "NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TORCHINDUCTOR_CACHE_DIR",
)

#: Distributions whose installed copies (every one on sys.path) are recorded.
PACKAGES = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "pytorch-triton-rocm",
            "pytorch-triton-xpu", "numpy", "xformers", "flash-attn", "bitsandbytes", "intel-extension-for-pytorch")

#: ... and every distribution whose name starts with one of these (CUDA, ROCm and AMD device wheels).
PACKAGE_PREFIXES = ("nvidia-", "rocm", "amd-")


class Skip(Exception):
    """A probe does not apply here (no GPU, not installed); the message says why."""


# -- facts that need no torch ----------------------------------------------------------------

def python_facts():
    import sysconfig

    prefix = sys.prefix
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation().lower(),
        "executable": sys.executable,
        "prefix": prefix,
        "base_prefix": getattr(sys, "base_prefix", prefix),
        "bits": 64 if sys.maxsize > 2 ** 32 else 32,
        "free_threaded": sysconfig.get_config_var("Py_GIL_DISABLED") == 1,
        "conda": os.path.isdir(os.path.join(prefix, "conda-meta")),
        "path": [p for p in sys.path if p][:40],
    }


def _read(path, limit=4096):
    try:
        with open(path, "r", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None


def _container_runtime():
    """``docker`` / ``podman`` / ``kubernetes`` / ``containerd`` / ``lxc`` / ``wsl``… from the
    markers each leaves, else ``None``."""
    if os.path.exists("/run/.containerenv"):
        return "podman"
    if os.path.exists("/.dockerenv"):
        return "docker"
    env = os.environ.get("container")  # noqa: SIM112 - systemd and podman set it in lower case
    if env:
        return env[:40]
    text = (_read("/proc/1/cgroup", 20000) or "") + (_read("/proc/self/mountinfo", 200000) or "")
    for marker, name in (("kubepods", "kubernetes"), ("/docker/", "docker"), ("containerd", "containerd"),
                         ("/lxc/", "lxc"), ("libpod", "podman")):
        if marker in text:
            return name
    return None


def _shm_mib(path="/dev/shm"):
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return int(st.f_blocks * st.f_frsize // (1024 * 1024))


def _l4t():
    """Jetson: ``"36.4.0"`` from /etc/nv_tegra_release (``# R36 (release), REVISION: 4.0``)."""
    text = _read("/etc/nv_tegra_release", 2000)
    if not text:
        return None
    m = re.search(r"R(\d+)\s*\(release\),\s*REVISION:\s*([\d.]+)", text)
    return "%s.%s" % (m.group(1), m.group(2)) if m else text.strip().splitlines()[0][:80]


def _mac_vm():
    """Whether this macOS runs in a virtual machine (kern.hv_vmm_present: hosted CI runners,
    where MPS is limited or absent)."""
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        value = ctypes.c_int(0)
        size = ctypes.c_size_t(ctypes.sizeof(value))
        if libc.sysctlbyname(b"kern.hv_vmm_present", ctypes.byref(value), ctypes.byref(size), None, 0) != 0:
            return None
        return bool(value.value)
    except Exception:
        return None


#: The Visual C++ runtime DLLs torch's Windows wheels need (and libomp for fbgemm.dll).
VCRUNTIME = ("vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll", "libomp140.x86_64.dll")


def _vcruntime():
    root = os.environ.get("SYSTEMROOT", r"C:\Windows")
    return [n for n in VCRUNTIME if os.path.exists(os.path.join(root, "System32", n))]


def platform_facts():
    osname = {"linux": "linux", "win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform)
    out = {"os": osname, "arch": platform.machine().lower(), "release": platform.release()}
    if osname == "linux":
        try:
            text = os.confstr("CS_GNU_LIBC_VERSION") or ""
        except (AttributeError, OSError, ValueError):
            text = ""
        parts = text.split()
        out["glibc"] = parts[1] if len(parts) == 2 and parts[0] == "glibc" else None
        osrelease = _read("/proc/sys/kernel/osrelease") or ""
        out["wsl"] = "microsoft" in osrelease.lower()
        if out["wsl"]:
            out["wsl_version"] = 2 if "wsl2" in osrelease.lower() or "microsoft-standard" in osrelease.lower() else 1
        runtime = _container_runtime()
        out["container"] = runtime is not None
        if runtime:
            out["container_runtime"] = runtime
        out["shm_mib"] = _shm_mib()
        l4t = _l4t()
        if l4t:
            out["l4t"] = l4t
    elif osname == "macos":
        out["macos"] = platform.mac_ver()[0]
        out["vm"] = _mac_vm()
    elif osname == "windows":
        out["vcruntime"] = _vcruntime()
    return out


def _dist_metadata(path):
    """Name, version and Requires-Dist of one ``*.dist-info`` / ``*.egg-info`` folder, with the
    installer (``INSTALLER``: pip, uv, conda) and where it came from (``direct_url.json``)."""
    text = _read(os.path.join(path, "METADATA"), 200000) or _read(os.path.join(path, "PKG-INFO"), 200000)
    if text is None:
        return None
    name, version, requires = None, None, []
    for line in text.splitlines():
        if not line.strip():
            break  # headers end at the first blank line
        if line.startswith("Name:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("Version:"):
            version = line.split(":", 1)[1].strip()
        elif line.startswith("Requires-Dist:"):
            requires.append(line.split(":", 1)[1].strip())
    out = {"version": version, "requires": requires}
    if name:
        out["name"] = name
    installer = (_read(os.path.join(path, "INSTALLER"), 200) or "").strip()
    if installer:
        out["installer"] = installer.splitlines()[0][:40]
    raw = _read(os.path.join(path, "direct_url.json"), 20000)
    if raw:
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("url"), str):
            direct = {"url": doc["url"][:500]}
            if isinstance(doc.get("dir_info"), dict) and doc["dir_info"].get("editable"):
                direct["editable"] = True
            out["direct_url"] = direct
    return out


def _norm(name):
    return re.sub(r"[-_.]+", "_", name).lower()


def package_facts(names=PACKAGES, prefixes=PACKAGE_PREFIXES):
    """Every installed copy of each package on sys.path, first (the one import finds) first:
    ``names`` by name, and every distribution whose name starts with one of ``prefixes``."""
    wanted = {_norm(n): n for n in names}
    starts = tuple(_norm(p) for p in prefixes)
    found = {}
    seen = set()
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if real in seen:
            continue
        seen.add(real)
        try:
            listing = sorted(os.listdir(entry))
        except OSError:
            continue
        for item in listing:
            m = re.match(r"(.+?)-[^-]+\.(dist-info|egg-info)$", item)
            if not m:
                continue
            key = _norm(m.group(1))
            if key in wanted:
                label = wanted[key]
            elif key.startswith(starts):
                label = key.replace("_", "-")
            else:
                continue
            meta = _dist_metadata(os.path.join(entry, item))
            if meta:
                meta["location"] = entry
                found.setdefault(label, []).append(meta)
    return found


def env_facts():
    return {k: os.environ[k] for k in ENV_KEYS if k in os.environ}


# -- the worker's state ----------------------------------------------------------------------

class State:
    """What probes share inside one worker: the torch module, the devices, the options."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.torch = None
        self._devices = None
        self.partial = {}  # facts a probe records before it may raise; kept with its error

    def need_torch(self):
        if self.torch is None:
            import torch  # noqa: F401  (the import itself is what import_torch measures)

            self.torch = torch
        return self.torch

    def gpu_devices(self):
        """``["cuda:0", …]`` (CUDA or ROCm) or ``["mps"]``/``["xpu:0"]``; ``[]`` without one."""
        if self._devices is None:
            torch = self.need_torch()
            devs = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if torch.cuda.is_available():
                    devs = ["cuda:%d" % i for i in range(torch.cuda.device_count())]
                elif getattr(torch, "xpu", None) is not None and torch.xpu.is_available():
                    devs = ["xpu:%d" % i for i in range(torch.xpu.device_count())]
                elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
                    devs = ["mps"]
            self._devices = devs
        return self._devices

    def devices(self):
        return ["cpu"] + self.gpu_devices()

    def synchronize(self, dev):
        torch = self.torch
        if dev.startswith("cuda"):
            torch.cuda.synchronize(dev)
        elif dev.startswith("xpu"):
            torch.xpu.synchronize(dev)
        elif dev == "mps":
            torch.mps.synchronize()


def _seed(torch):
    """Fresh random inputs every run (a kernel that returns stale memory cannot pass by luck)."""
    seed = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(seed)
    return seed


def _rel_error(torch, got, ref):
    """Relative Frobenius error of ``got`` against the float64 reference; None if not finite."""
    got = got.detach().to("cpu").to(torch.float64)  # MPS has no float64: cast on the CPU
    ref = ref.detach().to("cpu").to(torch.float64)
    if not bool(torch.isfinite(got).all()):
        return None
    denom = float(ref.norm())
    return float((got - ref).norm()) / denom if denom else None


def _err(exc):
    return {"type": type(exc).__name__, "message": str(exc)[:4000]}


# -- probes ------------------------------------------------------------------------------------

def probe_import_torch(st):
    t = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch = st.need_torch()
    v = torch.version
    return {
        "version": str(torch.__version__),
        "file": getattr(torch, "__file__", None),
        "cuda": getattr(v, "cuda", None),
        "hip": getattr(v, "hip", None),
        "xpu": getattr(v, "xpu", None),
        "git_version": getattr(v, "git_version", None),
        "debug": getattr(v, "debug", None),
        "seconds": round(time.monotonic() - t, 3),
        "warnings": [str(w.message)[:500] for w in caught][:5],
    }


def _version_text(v):
    if isinstance(v, (tuple, list)):
        return ".".join(str(x) for x in v)
    if isinstance(v, int) and v > 10000:  # NCCL_VERSION_CODE before tuples: 2.18.1 → 21801
        return "%d.%d.%d" % (v // 10000, v // 100 % 100, v % 100)
    return None if v is None else str(v)


#: Where NVML lives: the driver's library (on the loader path; under WSL in /usr/lib/wsl/lib).
NVML_LIBS = ("libnvidia-ml.so.1", "libnvidia-ml.so", "/usr/lib/wsl/lib/libnvidia-ml.so.1")
NVML_SUCCESS, NVML_ERROR_NOT_SUPPORTED = 0, 3


def read_nvml(lib=None):
    """Driver version, highest CUDA and every GPU (name, capability, UUID, memory, MIG mode) from
    NVML through ctypes — no torch, no nvidia-smi, no nvidia-ml-py. The one NVML reader: the
    collector calls it inside the environment under test, ``envcheck probe`` on the host.

    ``lib``: an already loaded NVML (tests pass a stand-in with the same C functions); by default
    libnvidia-ml.so.1 / nvml.dll, which ship with the NVIDIA driver. Without a driver this returns
    ``{"error": …}``; a failure after init keeps what was read and says where it stopped (``error``).
    """
    import ctypes

    if lib is None:
        names = ["nvml.dll"] if sys.platform == "win32" else list(NVML_LIBS)
        for n in names:
            try:
                lib = ctypes.CDLL(n)
                break
            except OSError:
                continue
        if lib is None:
            return {"error": "%s not found (no NVIDIA driver visible)" % names[0]}

    def text(code):
        try:
            fn = lib.nvmlErrorString
            try:
                fn.restype = ctypes.c_char_p
            except AttributeError:  # a stand-in library: its function already returns bytes
                pass
            msg = fn(code)
            return msg.decode() if isinstance(msg, bytes) else str(msg)
        except Exception:
            return "NVML error %s" % code

    code = lib.nvmlInit_v2()
    if code != NVML_SUCCESS:
        return {"error": "nvmlInit failed: %s" % text(code)}
    out = {"gpus": []}
    try:
        buf = ctypes.create_string_buffer(96)
        if lib.nvmlSystemGetDriverVersion(buf, 96) == NVML_SUCCESS:
            out["version"] = buf.value.decode()
        cver = ctypes.c_int()
        if lib.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(cver)) == NVML_SUCCESS:
            out["cuda_max"] = "%d.%d" % (cver.value // 1000, cver.value % 1000 // 10)
        count = ctypes.c_uint()
        code = lib.nvmlDeviceGetCount_v2(ctypes.byref(count))
        if code != NVML_SUCCESS:
            out["error"] = "nvmlDeviceGetCount failed: %s" % text(code)
            return out
        for i in range(count.value):
            handle = ctypes.c_void_p()
            code = lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle))
            if code != NVML_SUCCESS:
                out["error"] = "nvmlDeviceGetHandleByIndex(%d) failed: %s" % (i, text(code))
                continue
            gpu = {"index": i}
            if lib.nvmlDeviceGetName(handle, buf, 96) == NVML_SUCCESS:
                gpu["name"] = buf.value.decode()
            major, minor = ctypes.c_int(), ctypes.c_int()
            if lib.nvmlDeviceGetCudaComputeCapability(handle, ctypes.byref(major), ctypes.byref(minor)) == 0:
                gpu["capability"] = [major.value, minor.value]
            if lib.nvmlDeviceGetUUID(handle, buf, 96) == NVML_SUCCESS:
                gpu["uuid"] = buf.value.decode()
            mem = _nvml_memory_type()()
            if lib.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(mem)) == NVML_SUCCESS:
                gpu["memory_mib"] = int(mem.total // (1024 * 1024))
            current, pending = ctypes.c_uint(), ctypes.c_uint()
            code = lib.nvmlDeviceGetMigMode(handle, ctypes.byref(current), ctypes.byref(pending))
            if code == NVML_SUCCESS:
                gpu["mig"] = bool(current.value)
            out["gpus"].append(gpu)
    finally:
        lib.nvmlShutdown()
    return out


def _nvml_memory_type():
    import ctypes

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]

    return Memory


def _driver_facts():
    out = {}
    text = _read("/proc/driver/nvidia/version")
    if text:
        m = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)", text)
        if m:
            out["version"] = m.group(1)
    try:
        out.update({k: v for k, v in read_nvml().items() if k not in out})
    except Exception as exc:  # a broken NVML is a fact, not a reason to fail the probe
        out["error"] = "NVML: %s" % exc
    return out


def probe_cuda_build(st):
    torch = st.need_torch()
    d = {"cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
         "xpu": getattr(torch.version, "xpu", None), "errors": {}}
    try:
        d["config"] = torch.__config__.show()[:8000]
    except Exception as exc:
        d["errors"]["config"] = str(exc)[:2000]
    try:
        d["cudnn"] = torch.backends.cudnn.version()
        d["cudnn_available"] = bool(torch.backends.cudnn.is_available())
    except Exception as exc:
        d["errors"]["cudnn"] = "%s: %s" % (type(exc).__name__, str(exc)[:2000])
    if d["cuda"] or d["hip"]:
        try:
            d["nccl"] = _version_text(torch.cuda.nccl.version())
        except Exception as exc:
            d["errors"]["nccl"] = "%s: %s" % (type(exc).__name__, str(exc)[:2000])
    arch = []
    try:
        arch = list(torch.cuda.get_arch_list())
        if not arch and hasattr(torch._C, "_cuda_getArchFlags"):
            # get_arch_list() is [] while no device is visible in older releases; the flags are not
            flags = torch._C._cuda_getArchFlags()
            arch = flags.split() if isinstance(flags, str) else list(flags or [])
    except Exception as exc:
        d["errors"]["arch_list"] = str(exc)[:2000]
    d["arch_list"] = arch
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d["is_available"] = bool(torch.cuda.is_available())
        d["device_count"] = torch.cuda.device_count() if d["is_available"] else 0
        devices = []
        for i in range(d["device_count"]):
            p = torch.cuda.get_device_properties(i)
            dev = {"index": i, "name": p.name, "capability": [p.major, p.minor],
                   "memory_mib": int(p.total_memory // (1024 * 1024))}
            gcn = getattr(p, "gcnArchName", None)
            if d["hip"] and gcn:
                dev["gcn_arch"] = gcn
            devices.append(dev)
        d["devices"] = devices
        if (d["cuda"] or d["hip"]) and not d["is_available"]:
            try:
                torch.cuda.init()
            except Exception as exc:
                d["errors"]["init"] = "%s: %s" % (type(exc).__name__, str(exc)[:2000])
    d["warnings"] = [str(w.message)[:1000] for w in caught][:5]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and sys.platform == "darwin":
        d["mps_built"], d["mps_available"] = bool(mps.is_built()), bool(mps.is_available())
    if getattr(torch, "xpu", None) is not None and d["xpu"]:
        d["xpu_available"] = bool(torch.xpu.is_available())
    if d["cuda"] or sys.platform != "darwin":
        d["driver"] = _driver_facts()
    return d


def probe_allocation(st):
    torch = st.need_torch()
    mib = 64
    out = []
    for dev in st.devices():
        n = mib * 1024 * 1024 // 4
        x = torch.empty(n, dtype=torch.float32, device=dev)
        x.fill_(1.5)
        total = float(x.sum())
        st.synchronize(dev)
        row = {"device": dev, "mib": mib, "ok": total == 1.5 * n}
        del x
        if dev.startswith("cuda"):
            free, whole = torch.cuda.mem_get_info(dev)
            row["free_mib"], row["total_mib"] = free // 2 ** 20, whole // 2 ** 20
            torch.cuda.empty_cache()
        out.append(row)
    return {"devices": out}


def _dtypes_for(torch, dev):
    if dev == "cpu":
        return [torch.float32, torch.bfloat16]
    out = [torch.float32, torch.float16]
    if dev.startswith("cuda"):
        try:
            if torch.cuda.is_bf16_supported():
                out.append(torch.bfloat16)
        except Exception:
            pass
    return out


def probe_matmul(st):
    torch = st.need_torch()
    seed = _seed(torch)
    n = 256
    a = torch.randn(n, n, dtype=torch.float64)
    b = torch.randn(n, n, dtype=torch.float64)
    ref = a @ b
    rows = []
    for dev in st.devices():
        for dt in _dtypes_for(torch, dev):
            row = {"device": dev, "dtype": str(dt).replace("torch.", ""), "shape": [n, n, n]}
            try:
                c = a.to(dt).to(dev) @ b.to(dt).to(dev)
                st.synchronize(dev)
                row["rel_error"] = _rel_error(torch, c, ref)
                row["nonzero"] = bool(c.abs().sum() > 0)
            except RuntimeError as exc:
                if "not implemented" in str(exc).lower():
                    row["unsupported"] = str(exc)[:300]
                else:
                    raise
            rows.append(row)
    return {"seed": seed, "results": rows}


def probe_stream_sync(st):
    torch = st.need_torch()
    gpus = [d for d in st.gpu_devices() if d.startswith("cuda")]
    if not gpus:
        raise Skip("no CUDA/ROCm device: streams and events need one")
    seed = _seed(torch)
    rows = []
    for dev in gpus:
        host = torch.randn(1 << 20).pin_memory()
        side = torch.cuda.Stream(device=dev)
        done = torch.cuda.Event()
        with torch.cuda.stream(side):
            on_dev = host.to(dev, non_blocking=True)
            on_dev.mul_(2)
            done.record(side)
        main = torch.cuda.current_stream(dev)
        main.wait_event(done)
        back = torch.empty_like(host).pin_memory()
        back.copy_(on_dev, non_blocking=True)
        main.synchronize()
        rows.append({"device": dev, "pinned": bool(host.is_pinned()),
                     "max_abs_error": float((back - host * 2).abs().max())})
    return {"seed": seed, "results": rows}


def probe_cudnn_conv(st):
    torch = st.need_torch()
    import torch.nn.functional as F

    seed = _seed(torch)
    x = torch.randn(4, 8, 32, 32, dtype=torch.float64)
    w = torch.randn(16, 8, 3, 3, dtype=torch.float64)
    ref = F.conv2d(x, w, padding=1)
    rows = []
    for dev in st.devices():
        got = F.conv2d(x.float().to(dev), w.float().to(dev), padding=1)
        st.synchronize(dev)
        lib = "cpu"
        if dev.startswith("cuda"):
            lib = "miopen" if torch.version.hip else "cudnn"
            lib = lib if torch.backends.cudnn.is_available() and torch.backends.cudnn.enabled else "native"
        rows.append({"device": dev, "dtype": "float32", "library": lib,
                     "rel_error": _rel_error(torch, got, ref)})
    return {"seed": seed, "cudnn": torch.backends.cudnn.version(), "results": rows}


def _which(names):
    import shutil

    return {n: shutil.which(n) for n in names}


def probe_torch_compile(st):
    torch = st.need_torch()
    d = st.partial
    d.update({"compilers": _which(("cc", "gcc", "g++", "clang", "cl")), "cc_env": os.environ.get("CC"),
              "python": platform.python_version()})
    if not hasattr(torch, "compile"):
        version = str(getattr(torch, "__version__", "?"))
        major = re.match(r"(\d+)\.", version)
        if major and int(major.group(1)) < 2:
            raise RuntimeError("torch %s has no torch.compile (it arrived in torch 2.0)" % version)
        raise RuntimeError("torch %s has no torch.compile, which every torch >= 2.0 has: this torch module is "
                           "incomplete or not the real one (%s)" % (version, getattr(torch, "__file__", "?")))
    seed = _seed(torch)

    def fn(x, y):
        return torch.sin(x) @ y + torch.cos(y)

    rows = []
    devs = ["cpu"] + [g for g in st.gpu_devices() if g.startswith("cuda")][:1]
    for dev in devs:
        x = torch.randn(64, 64, device=dev)
        y = torch.randn(64, 64, device=dev)
        compiled = torch.compile(fn)
        got = compiled(x, y)
        st.synchronize(dev)
        rows.append({"device": dev, "dtype": "float32", "rel_error": _rel_error(torch, got, fn(x.double(), y.double()))})
    d.update({"seed": seed, "results": rows})
    return d


def _dist_rank(rank, world, backend, store, result_path, device):
    """One rank of the all_reduce check (runs in a child process)."""
    out = {"rank": rank}
    try:
        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        dist.init_process_group(backend, init_method="file://" + store, rank=rank, world_size=world)
        t = torch.full((4,), float(rank + 1), device=device)
        dist.all_reduce(t)
        out["values"] = [float(v) for v in t.cpu()]
        dist.destroy_process_group()
    except Exception as exc:
        out["error"] = "%s: %s" % (type(exc).__name__, str(exc)[:2000])
    with open(result_path, "w") as fh:
        json.dump(out, fh)


def probe_distributed(st):
    torch = st.need_torch()
    import multiprocessing as mp

    import torch.distributed as dist

    if not dist.is_available():
        raise RuntimeError("torch.distributed is not available in this build (USE_DISTRIBUTED=0)")
    gpus = [g for g in st.gpu_devices() if g.startswith("cuda")]
    world = 2
    backend, devices = "gloo", ["cpu", "cpu"]
    if len(gpus) >= 2 and dist.is_nccl_available():
        backend, devices = "nccl", gpus[:2]
    # fork is cheap (torch is already imported) and safe while CUDA is untouched; else spawn
    cuda_used = torch.cuda.is_available() and torch.cuda.is_initialized()
    method = "fork" if (hasattr(os, "fork") and not cuda_used and backend == "gloo") else "spawn"
    ctx = mp.get_context(method)
    tmp = tempfile.mkdtemp(prefix="envcheck-dist-")
    store = os.path.join(tmp, "store")
    procs = []
    for r in range(world):
        p = ctx.Process(target=_dist_rank, args=(r, world, backend, store, os.path.join(tmp, "r%d.json" % r), devices[r]))
        p.start()
        procs.append(p)
    deadline = time.monotonic() + max(1.0, st.timeout * 0.8)
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    hung = [i for i, p in enumerate(procs) if p.is_alive()]
    for p in procs:
        if p.is_alive():
            p.kill() if hasattr(p, "kill") else p.terminate()
            p.join(2)
    ranks = []
    for r in range(world):
        data = _read(os.path.join(tmp, "r%d.json" % r))
        ranks.append(json.loads(data) if data else {"rank": r, "exitcode": procs[r].exitcode})
    d = {"backend": backend, "world_size": world, "start_method": method, "ranks": ranks,
         "expected": float(sum(range(1, world + 1)))}
    if hung:
        d["hung_ranks"] = hung
        d["timeout"] = round(max(1.0, st.timeout * 0.8), 1)
    return d


def _companion(name):
    import importlib

    try:
        import importlib.util as iu

        spec = iu.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise Skip("%s is not installed" % name)
    return importlib.import_module(name)


def probe_torchvision_compat(st):
    torch = st.need_torch()
    tv = _companion("torchvision")
    d = {"version": str(getattr(tv, "__version__", "")), "file": getattr(tv, "__file__", None), "nms": []}
    boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60]], dtype=torch.float32)
    scores = torch.tensor([0.9, 0.8, 0.7])
    for dev in ["cpu"] + [g for g in st.gpu_devices() if g.startswith("cuda")][:1]:
        keep = tv.ops.nms(boxes.to(dev), scores.to(dev), 0.5)
        d["nms"].append({"device": dev, "keep": [int(k) for k in keep.cpu()], "expected": [0, 2]})
    return d


def probe_torchaudio_compat(st):
    torch = st.need_torch()
    ta = _companion("torchaudio")
    d = {"version": str(getattr(ta, "__version__", "")), "file": getattr(ta, "__file__", None)}
    wave = torch.randn(1, 1000)
    lfilter = getattr(getattr(ta, "functional", None), "lfilter", None)
    if lfilter is None:
        d["op"] = None
        return d
    same = lfilter(wave, torch.tensor([1.0, 0.0]), torch.tensor([1.0, 0.0]), clamp=False)
    d["op"] = {"name": "torchaudio.functional.lfilter (identity filter)",
               "max_abs_error": float((same - wave).abs().max())}
    return d


def loaded_objects(limit=800):
    """Paths of the shared objects mapped into this process, in load order (/proc/self/maps);
    ``None`` where there is no /proc (macOS, Windows)."""
    text = _read("/proc/self/maps", 4000000)
    if text is None:
        return None
    out, seen = [], set()
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        path = parts[5].strip()
        if not path.startswith("/") or path in seen:
            continue
        base = path.rsplit("/", 1)[-1]
        if ".so" not in base:
            continue
        seen.add(path)
        out.append(path)
        if len(out) >= limit:
            break
    return out


def probe_environment(st):
    """The evidence that decides a family of failures: the shared objects actually loaded (after
    ``import torch``, and after the first CUDA/HIP call), and every accelerator torch can drive."""
    torch = st.need_torch()
    d = {"after_import": loaded_objects()}
    acc = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            acc["cuda"] = bool(torch.cuda.is_available())
        except Exception as exc:
            d["errors"] = {"cuda": "%s: %s" % (type(exc).__name__, str(exc)[:500])}
            acc["cuda"] = False
        xpu = getattr(torch, "xpu", None)
        try:
            acc["xpu"] = bool(xpu is not None and xpu.is_available())
        except Exception:
            acc["xpu"] = False
        mps = getattr(getattr(torch, "backends", None), "mps", None)
        try:
            acc["mps"] = bool(mps is not None and mps.is_available())
        except Exception:
            acc["mps"] = False
    d["accelerators"] = acc
    if acc["cuda"]:
        try:
            torch.cuda.init()  # the first CUDA/HIP call: libraries loaded lazily show up now
            d["after_cuda"] = loaded_objects()
        except Exception as exc:
            d.setdefault("errors", {})["init"] = "%s: %s" % (type(exc).__name__, str(exc)[:500])
    return d


def probe_wsl_libhsa(st):
    plat = platform_facts()
    if not plat.get("wsl"):
        raise Skip("not running under WSL")
    torch = st.need_torch()
    if not getattr(torch.version, "hip", None):
        raise Skip("not a ROCm build of torch")
    libdir = os.path.join(os.path.dirname(torch.__file__), "lib")
    try:
        bundled = sorted(os.path.join(libdir, f) for f in os.listdir(libdir) if f.startswith("libhsa-runtime64.so"))
    except OSError:
        bundled = []
    return {"libdir": libdir, "bundled": bundled, "rocm_runtime": os.path.exists("/opt/rocm/lib/libhsa-runtime64.so.1")}


PROBES = {
    "import_torch": probe_import_torch,
    "environment": probe_environment,
    "cuda_build": probe_cuda_build,
    "allocation": probe_allocation,
    "matmul": probe_matmul,
    "stream_sync": probe_stream_sync,
    "cudnn_conv": probe_cudnn_conv,
    "torch_compile": probe_torch_compile,
    "distributed": probe_distributed,
    "torchvision_compat": probe_torchvision_compat,
    "torchaudio_compat": probe_torchaudio_compat,
    "wsl_libhsa": probe_wsl_libhsa,
}


# -- the loop -----------------------------------------------------------------------------------

def _protocol_stream():
    """The original stdout for protocol lines; fd 1 (and sys.stdout) now write to stderr."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8")


def _clean(value):
    """JSON-safe: NaN/inf become None (the stream is strict JSON)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def run_probe(name, st):
    t = time.monotonic()
    rec = {"event": "result", "check": name}
    st.partial = {}
    try:
        rec["data"] = PROBES[name](st)
        rec["outcome"] = "ok"
    except Skip as exc:
        rec["outcome"], rec["reason"] = "skip", str(exc)
    except BaseException as exc:  # noqa: B902 - an exception in a check is that check's result
        # KeyboardInterrupt too: the worker runs in its own session, so the user's Ctrl-C never
        # reaches it — one raised here comes from the code under test.
        rec["outcome"] = "error"
        if st.partial:
            rec["data"] = st.partial
        rec["error"] = _err(exc)
        rec["error"]["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:]
    rec["seconds"] = round(time.monotonic() - t, 4)
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(prog="collector.py", description="envcheck fact collector (see module docstring)")
    ap.add_argument("--checks", default=",".join(PROBES), help="comma-separated probe names, run in this order")
    ap.add_argument("--timeout", type=float, default=60.0, help="per-check budget in seconds (for internal waits)")
    args = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        del sys.path[0]  # never import from envcheck's own folder
    out = _protocol_stream()

    def emit(obj):
        out.write(json.dumps(_clean(obj), default=str) + "\n")
        out.flush()

    names = [n for n in args.checks.split(",") if n]
    unknown = [n for n in names if n not in PROBES]
    emit({"event": "hello", "protocol": PROTOCOL, "pid": os.getpid(), "python": python_facts(),
          "platform": platform_facts(), "env": env_facts(), "packages": package_facts(), "unknown": unknown})
    st = State(args.timeout)
    if names and "import_torch" not in names:
        try:  # a fresh worker after a crash: import torch up front, outside the next probe's budget
            st.need_torch()
        except Exception:
            pass  # the first probe that needs torch reports the error
    for name in names:
        if name in unknown:
            continue
        emit({"event": "start", "check": name})
        rec = run_probe(name, st)
        emit(rec)
        if name == "import_torch" and rec["outcome"] != "ok":
            break  # nothing else can run without torch
    emit({"event": "done"})
    out.close()
    return 0


if __name__ == "__main__":
    code = main()
    # Skip interpreter teardown: with torch loaded it takes ~0.5 s and every result is already out.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
