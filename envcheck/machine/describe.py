"""Build a :class:`Machine` from what a person types (``--gpu 7900xtx --wsl --driver 25.3.1``).

Flags describe a machine by name, or override single facts of a probed / saved one: ``--gpu``
replaces the GPU list, every other flag replaces one field. Each fact set here is recorded in
``Machine.how`` as coming from its flag.
"""

from __future__ import annotations

import re
from envcheck.record import replace

from envcheck.errors import UnknownGpuError, UsageError
from envcheck.machine.arch import cpu_arch, platform_arch
from envcheck.machine.consistency import amd_driver_store_number
from envcheck.machine.model import GpuDevice, Machine
from envcheck.matrix import Matrix, printed_target
from envcheck.matrix.model import vkey

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import List, Optional, Sequence, Tuple

_OS_ALIASES = {
    "linux": "linux", "windows": "windows", "win": "windows", "win32": "windows",
    "macos": "macos", "mac": "macos", "darwin": "macos", "osx": "macos",
}


def parse_python(text: str) -> tuple:
    """``"3.12"`` → ``("3.12", 64)``; ``"3.13t"`` free-threaded; ``"3.7-32"`` (py launcher form) 32-bit.

    Raises:
        UsageError: not a CPython version.
    """
    mt = re.fullmatch(r"(?:cp|py|python)?\s*([0-9])\.?([0-9]{1,2})(?:\.[0-9]+)?(t?)(?:-(32|64))?", text.strip().lower())
    if not mt:
        raise UsageError(
            f"--python {text!r}: expected a CPython version like 3.12, 3.13t (free-threaded) "
            "or 3.7-32 (32-bit)"
        )
    return f"{mt.group(1)}.{mt.group(2)}{mt.group(3)}", int(mt.group(4) or 64)


def parse_version_flag(flag: str, text: str, example: str) -> str:
    """Check a dotted version flag value.

    Raises:
        UsageError: not a version.
    """
    t = text.strip()
    try:
        vkey(t)
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected a version like {example}") from None
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", t):
        raise UsageError(f"{flag} {text!r}: expected a version like {example}")
    return t


#: ``"2x A100"``, ``"A100 x2"``, ``"A100:2"``: (pattern, group of the name)
COUNT_FORMS = ((r"([0-9]{1,2})\s*[x×]\s*(\D.*)", 2), (r"(.+?)\s+[x×]\s*([0-9]{1,2})", 1), (r"(.+?):([0-9]{1,2})", 1))


def split_count(raw: str) -> Tuple[str, int]:
    """``"2x A100"``, ``"A100 x2"``, ``"A100:2"`` → ``("A100", 2)``; otherwise ``(raw, 1)``."""
    text = raw.strip()
    if not (text[:1].isdigit() or ":" in text or any(a.isspace() and b in "xX×" for a, b in zip(text, text[1:]))):
        return text, 1  # none of the three forms (what each pattern needs): no pattern compiled for a plain name
    for rx, name_group in COUNT_FORMS:
        mt = re.fullmatch(rx, text, re.I)
        if mt:
            count = int(mt.group(3 - name_group))
            if count < 1:  # "0x H100": no GPU is not one GPU
                raise UsageError(f"--gpu {raw!r}: a count of {count}; give 1 or more (or leave the GPU out)")
            return mt.group(name_group).strip(), count
    return text, 1


def gpu_from_arch(text: str) -> Optional[GpuDevice]:
    """``sm_89`` / ``sm89`` / ``8.9`` → an NVIDIA GPU of that compute capability; ``gfx1100`` → AMD."""
    t = text.strip().lower()
    if not t.startswith("sm") and "." not in t and "gfx" not in t:  # a model name: none of the forms below
        return None
    mt = re.fullmatch(r"sm_?([0-9]{2,3})", t) or re.fullmatch(r"([0-9]{1,2})\.([0-9])", t)
    if mt:
        sm = "sm_" + "".join(mt.groups())
        return GpuDevice(vendor="nvidia", name=f"NVIDIA GPU ({sm})", arch=sm)
    mt = re.fullmatch(r"(?:amdgcn-amd-amdhsa--)?(gfx[0-9a-f]{3,4})((?::[a-z]+[+-])*)", t)  # rocminfo's ISA name too
    if mt:
        features = [f[:-1] for f in mt.group(2).split(":") if f]
        twice = next((f for f in features if features.count(f) > 1), None)
        if twice:  # LLVM's target ID names each feature at most once (AMDGPUUsage "Target ID")
            raise UsageError(f"--gpu {text!r}: the target feature {twice} is given {features.count(twice)} times; "
                             "a target names each of its features (xnack, sramecc) once, with + or -")
        t = mt.group(1)
        return GpuDevice(vendor="amd", name=f"AMD GPU ({t})", arch=t)
    return None


def _known_arch(matrix: Matrix, gpu: GpuDevice, raw: str) -> GpuDevice:
    """``gpu`` (from an architecture alone) when the data names that architecture, else an unknown GPU
    (breaker4 F11: ``--gpu gfx9999`` planned for "AMD GPU (gfx9999)" and said no build serves it)."""
    known = matrix.known_archs(gpu.vendor)
    if gpu.arch in known:
        return replace(gpu, integrated=matrix.arch_integrated(gpu.vendor, gpu.arch))
    import difflib

    raise UnknownGpuError(raw, difflib.get_close_matches(gpu.arch, known, n=5, cutoff=0.6))


def named_gpus(matrix: Matrix, names: Sequence[str]) -> List[GpuDevice]:
    """Look up every ``--gpu`` name; ``"2x A100"`` / ``"A100:2"`` count as one A100 each.

    Raises:
        UnknownGpuError: a name matched nothing (exit 2, with close matches).
    """
    out: List[GpuDevice] = []
    for raw in names:
        text, count = split_count(raw)
        arch_only = gpu_from_arch(text)
        target = printed_target(text) if arch_only is None else None
        if target:  # "AMD Radeon Graphics (gfx906:sramecc+:xnack-)":
            try:  # the name first; when it names no model, the gfx target collect_env printed
                named = matrix.find_gpu(text)
            except UnknownGpuError:
                arch_only = gpu_from_arch(target)
            else:
                if named.arch != target:
                    raise UsageError(f"--gpu {raw!r}: the name is the {named.name} ({named.arch}), but the target "
                                     f"in parentheses is {target}: give the one the machine has")
        if arch_only is not None:
            arch_only = _known_arch(matrix, arch_only, text)
            out += [GpuDevice(**{**arch_only.__dict__, "how": f"--gpu {raw!r}"}) for _ in range(count)]
            continue
        g = matrix.find_gpu(text)
        for _ in range(max(1, count)):  # segment "embedded" = a Jetson module (integrated in its SoC)
            out.append(GpuDevice(vendor=g.vendor, name=g.name, arch=g.arch, memory_mib=g.memory_mib,
                                 integrated=g.segment == "integrated", how=f"--gpu {raw!r}"))
    return out


def apply_flags(
    matrix: Matrix,
    base: Optional[Machine] = None,
    *,
    gpus: Sequence[str] = (),
    wsl: Optional[bool] = None,
    os: Optional[str] = None,
    arch: Optional[str] = None,
    driver: Optional[str] = None,
    python: Optional[str] = None,
    glibc: Optional[str] = None,
    distro: Optional[str] = None,
    macos: Optional[str] = None,
    for_gpu: Optional[str] = None,
    described: bool = True,
) -> Machine:
    """The machine ``base`` (or a blank named machine) with the flags' facts applied.

    ``for_gpu`` (``--for-gpu``) says which of the machine's GPUs the plan is for: a 1-based
    position in the GPU list (``--gpu`` order, a ``"2x A100"`` counting two; or probe's order), a
    GPU name, or a vendor (``nvidia``, ``amd``, ``intel``).

    Raises:
        UsageError: a flag value is malformed, names an unknown GPU/distro, or contradicts
            another flag (``--wsl --os windows``) or the machine file's facts (``described``: the
            machine is a file's or the flags' — not a bare probe's —, so the matrix's facts hold it
            too, :mod:`envcheck.machine.consistency`).
    """
    m = replace(base) if base is not None else Machine(how={}, unknown={})
    m.how = dict(m.how)
    if gpus:
        m.gpus = named_gpus(matrix, gpus)
        m.how["gpus"] = "--gpu"
        jetson = [g for g in m.gpus if _row(matrix, g.name) and _row(matrix, g.name).segment == "embedded"]
        if jetson:
            # A Jetson is an arm64 board running JetPack (Tegra): both follow from the name.
            m.tegra, m.how["tegra"] = True, f"--gpu {jetson[0].name} (a Jetson module)"
        hosts = {(_row(matrix, g.name).host_arch, g.name) for g in m.gpus
                 if _row(matrix, g.name) and _row(matrix, g.name).host_arch}
        for host, name in sorted(hosts):
            want = cpu_arch(arch or host) or arch
            if want != host:
                raise UsageError(f"--arch {arch}: the {name} only comes with an {host} CPU")
            m.arch, m.how["arch"] = host, f"the {name} only comes with an {host} CPU"
        apple = [g for g in m.gpus if g.vendor == "apple"]
        if apple and (os or "macos").lower() not in ("macos", "mac", "darwin", "osx"):
            raise UsageError(f"--os {os}: the {apple[0].name} is an Apple-silicon GPU, only in Macs")
        if os is None and all(g.vendor == "apple" for g in m.gpus):
            os = "macos"
    if os is not None:
        key = _OS_ALIASES.get(os.lower())
        if key is None:
            raise UsageError(f"--os {os!r}: expected linux, windows or macos")
        if key != m.os:
            if key != "linux":
                m.glibc = m.distro = m.distro_name = None
            if key == "macos" and arch is None:
                m.arch = "arm64"
        m.os, m.how["os"] = key, "--os"
    if arch is not None:
        key = cpu_arch(arch)
        if key is None:
            raise UsageError(f"--arch {arch!r}: expected x86_64 or aarch64 (arm64)")
        m.arch, m.how["arch"] = key, "--arch"
    if m.arch:  # spelled as the OS's wheel tags and platform key spell it (macOS/Windows arm64, Linux aarch64)
        m.arch = platform_arch(m.os, m.arch)
    if m.os == "macos" and m.arch in ("arm64", "aarch64") and not m.gpus and not gpus and base is None:
        # Every Apple-silicon Mac has its GPU, reached through MPS.
        m.gpus = [GpuDevice(vendor="apple", name="Apple silicon GPU", arch="apple-silicon",
                            how="assumed: every arm64 Mac has one")]
    if wsl:
        if m.os != "linux":
            raise UsageError("--wsl describes Linux under WSL2; it cannot be combined with --os "
                             f"{m.os}")
        m.wsl, m.wsl_version, m.how["wsl"] = True, 2, "--wsl"
    if python is not None:
        m.python, m.python_bits = parse_python(python)
        m.how["python"] = "--python"
    if distro is not None:
        if m.os != "linux":
            raise UsageError(f"--distro {distro!r} describes Linux, but the machine is {m.os}")
        d = matrix.find_distro(distro)
        m.distro, m.distro_name, m.glibc = d.id, d.name, d.glibc
        m.how["glibc"] = f"--distro {distro} (matrices/platforms.toml)"
    if glibc is not None:
        if m.os != "linux":
            raise UsageError(f"--glibc describes Linux, but the machine is {m.os}")
        m.glibc, m.how["glibc"] = parse_version_flag("--glibc", glibc, "2.28"), "--glibc"
    if macos is not None:
        if m.os != "macos":
            raise UsageError(f"--macos {macos} describes a Mac, but the machine is {m.os} (add --os macos)")
        m.macos, m.how["macos"] = parse_version_flag("--macos", macos, "14.5"), "--macos"
    if driver is not None:
        # nvidia-smi's header line as printed: "CUDA Version: 12.8" (the version after it is what counts)
        words = driver.split()
        if len(words) >= 2 and [w.lower().rstrip(":") for w in words[:2]] == ["cuda", "version"]:
            driver = " ".join(words[2:]).lstrip(": ")
        value = parse_version_flag("--driver", driver, "570.124.06 (NVIDIA) or 25.3.1 (AMD Adrenalin)")
        if m.wsl and m.gpus_of("amd") and not m.gpus_of("nvidia") and amd_driver_store_number(value):
            # Device Manager's number, not the Adrenalin release: nothing to compare it with (the plan
            # names the release it needs as an assumption)
            m.amd_driver, m.how["amd_driver"] = None, f"--driver {value} (the Windows driver-store number)"
        elif m.wsl and m.gpus_of("amd") and not m.gpus_of("nvidia"):
            m.amd_driver, m.how["amd_driver"] = value, "--driver (AMD Windows driver on WSL)"
        else:
            if not m.gpus_of("nvidia") and m.gpus:
                raise UsageError(
                    "--driver is the NVIDIA driver version (or, for an AMD GPU under --wsl, the "
                    "Windows Adrenalin driver); this machine has no NVIDIA GPU"
                )
            if value.count(".") <= 1 and int(value.split(".")[0]) < 100:
                # "12.8": the "CUDA Version" nvidia-smi prints (the newest CUDA the driver runs) — what many
                # reports give instead of the driver; no NVIDIA driver numbers its branch below R100
                m.cuda_driver_max, m.how["cuda_driver_max"] = value, f"--driver {value} (nvidia-smi's CUDA Version)"
                m.nvidia_driver = None
            else:
                m.nvidia_driver, m.how["nvidia_driver"] = value, "--driver"
                m.cuda_driver_max = None
    if for_gpu is not None:
        m.plan_gpu = pick_gpu(matrix, m, for_gpu)
        m.how["plan_gpu"] = f"--for-gpu {for_gpu}"
    if described:
        from envcheck.machine.consistency import contradiction, contradiction_with_data

        fields = m.to_dict()
        problem = contradiction(fields) or contradiction_with_data(fields, matrix)
        if problem:
            raise UsageError(f"the machine described cannot be: {problem[0].lstrip('.')}: {problem[1]}")
    return m


def pick_gpu(matrix: Matrix, m: Machine, query: str) -> int:
    """The 0-based index in ``m.gpus`` that ``--for-gpu query`` names.

    Raises:
        UsageError: the machine has no GPU, the position is out of range, or no GPU of the machine
            has that name or vendor (exit 2, listing the machine's GPUs).
        UnknownGpuError: the name is no GPU at all (exit 2, with close matches).
    """
    listing = ", ".join(f"{i}: {g.name}" for i, g in enumerate(m.gpus, 1))
    if not m.gpus:
        raise UsageError(f"--for-gpu {query}: the machine has no GPU to plan for")
    text = query.strip()
    if text.isdigit():
        n = int(text)
        if not 1 <= n <= len(m.gpus):
            raise UsageError(f"--for-gpu {text}: the machine has {len(m.gpus)} GPU(s) ({listing})")
        return n - 1
    vendor = text.lower()
    if vendor in {g.vendor for g in m.gpus} | {"nvidia", "amd", "intel", "apple"}:
        hit = next((i for i, g in enumerate(m.gpus) if g.vendor == vendor), None)
    else:
        arch_only = gpu_from_arch(text)
        name = arch_only.name if arch_only is not None else matrix.find_gpu(text).name
        arch = arch_only.arch if arch_only is not None else None
        hit = next((i for i, g in enumerate(m.gpus) if g.name == name or (arch and g.arch == arch)), None)
    if hit is None:
        raise UsageError(f"--for-gpu {query}: not one of this machine's GPUs ({listing})")
    return hit


def _row(matrix: Matrix, name: str):
    return next((g for g in matrix.gpus if g.name == name), None)
