"""AMD: every GPU with its LLVM target (``gfx1100``), the installed ROCm, and the driver.

Methods, in order:

1. KFD topology in sysfs, ``/sys/class/kfd/kfd/topology/nodes/<n>/properties`` (``key value``
   lines). A node with ``simd_count 0`` is a CPU; a node with both CPU cores and SIMDs is an APU
   (ROCm/ROCR-Runtime:libhsakmt/src/topology.c@c7785a6d, ``hsakmt_topology_setup_is_dgpu_param``:
   dGPU ⇔ ``!NumCPUCores && NumFComputeCores``). ``gfx_target_version`` encodes the target in
   decimal as major·10000 + minor·100 + stepping (``HSA_GET_GFX_VERSION_MAJOR/MINOR/STEP`` in
   libhsakmt/src/libhsakmt.h@c7785a6d); the name prints major in decimal, minor and stepping in
   hex (``printf "%d%x%x"`` in libhsakmt/tests/kfdtest/scripts/run_kfdtest.sh@c7785a6d):
   110000 → gfx1100, 90010 → gfx90a, 90402 → gfx942. The marketing name comes from the matching
   DRM device (``/sys/class/drm/renderD<drm_render_minor>/device/product_name``), else the
   matrix GPU with that arch (and, when several share it, that VRAM size).
2. ``rocminfo`` (PATH, else ``/opt/rocm/bin/rocminfo``): the only method under WSL, where there
   is no KFD; agents with ``Device Type: GPU``.
3. ``amd-smi static --asic``: ``MARKET_NAME`` and ``TARGET_GRAPHICS_VERSION`` per ``GPU: n``.

ROCm: ``/opt/rocm/.info/version`` (``6.4.1-83`` → ``6.4.1``). Native driver: ``/sys/module/amdgpu/version``
(present with AMD's DKMS driver only). Under WSL the GPU belongs to the Windows Adrenalin driver,
whose version is not visible from inside WSL.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from envcheck.machine.model import GpuDevice
from envcheck.matrix import normalize_gpu_name
from envcheck.probe.context import Finding, ProbeContext, first_line, result_reason

KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"
ROCM_INFO = "/opt/rocm/.info/version"
_GFX = re.compile(r"gfx[0-9a-f]{3,4}")
AMD_VENDOR_ID = 0x1002  # PCI vendor id of AMD/ATI (KFD properties "vendor_id 4098")


def gfx_arch(gfx_target_version: Optional[int]) -> Optional[str]:
    """KFD ``gfx_target_version`` → LLVM target: ``110000`` → ``"gfx1100"``; ``None`` for 0 or nonsense."""
    if not gfx_target_version or gfx_target_version < 10000:
        return None
    major = (gfx_target_version // 10000) % 100
    minor = (gfx_target_version // 100) % 100
    step = gfx_target_version % 100
    if minor > 15 or step > 15:
        return None
    return f"gfx{major}{minor:x}{step:x}"


def parse_properties(text: str) -> Dict[str, int]:
    """KFD ``properties``: ``{"simd_count": 192, "gfx_target_version": 110000, …}``; other lines skipped."""
    out: Dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and re.fullmatch(r"\d+", parts[1]):
            out[parts[0]] = int(parts[1])
    return out


def probe_amd(ctx: ProbeContext, wsl: bool = False) -> Finding:
    """AMD GPUs, ROCm, drivers — each with its method, or why it is unknown."""
    f = Finding()
    tried: List[str] = []
    found = _from_kfd(ctx, f, tried) or _from_rocminfo(ctx, f, tried) or _from_amd_smi(ctx, f, tried)
    if not found:
        f.unknown["amd_gpus"] = "no AMD GPU found: " + "; ".join(tried)
    _rocm_version(ctx, f)
    if wsl and f.gpus:
        f.missing("amd_driver", "the Windows Adrenalin driver's version is not visible from inside WSL; "
                                "pass it with --driver (e.g. --driver 25.3.1)")
    text, _ = ctx.read("/sys/module/amdgpu/version")
    if text and text.strip():
        f.set("amd_linux_driver", text.strip(), "/sys/module/amdgpu/version (AMD's DKMS amdgpu)")
    return f


# -- 1. KFD -------------------------------------------------------------------------------------
def _from_kfd(ctx: ProbeContext, f: Finding, tried: List[str]) -> bool:
    nodes, why = ctx.listdir(KFD_NODES)
    if why:
        tried.append(f"KFD topology: {why}")
        return False
    problems: List[str] = []
    for node in sorted((n for n in nodes if n.isdigit()), key=int):
        rel = f"{KFD_NODES}/{node}/properties"
        text, why = ctx.read(rel)
        if text is None:
            problems.append(why or rel)
            continue
        props = parse_properties(text)
        if "simd_count" not in props:
            problems.append(f"{rel}: no 'simd_count' line ({first_line(text, 60)!r})")
            continue
        if props["simd_count"] == 0:
            continue  # a CPU node
        if props.get("vendor_id") not in (None, 0, AMD_VENDOR_ID):
            continue
        arch = gfx_arch(props.get("gfx_target_version"))
        if arch is None:
            raw = props.get("gfx_target_version")
            problems.append(f"KFD node {node} is a GPU but has " + (
                "no gfx_target_version line (older kernels do not publish it)" if raw is None
                else f"gfx_target_version {raw}, which names no gfx target"))
            continue
        f.gpus.append(_kfd_gpu(ctx, node, props, arch))
    if problems:
        f.unknown["amd_gpus"] = "; ".join(problems)
    if f.gpus:
        f.how["amd_gpus"] = f"KFD topology ({KFD_NODES}/*/properties gfx_target_version)"
        return True
    tried.append("KFD topology lists no usable GPU node" + (f" ({'; '.join(problems)})" if problems else ""))
    return False


def _kfd_gpu(ctx: ProbeContext, node: str, props: Dict[str, int], arch: str) -> GpuDevice:
    apu = props.get("cpu_cores_count", 0) > 0
    how = f"KFD node {node}: gfx_target_version {props['gfx_target_version']} → {arch}"
    if apu:
        how += "; CPU cores and SIMDs on one node → an APU (integrated)"
    minor = props.get("drm_render_minor")
    drm = f"/sys/class/drm/renderD{minor}/device" if minor else None
    name = memory = None
    if drm:
        text, _ = ctx.read(f"{drm}/product_name")
        if text and text.strip():
            name = text.strip()
            how += f"; name from {drm}/product_name"
        text, _ = ctx.read(f"{drm}/mem_info_vram_total")
        if text and text.strip().isdigit() and not apu:
            memory = int(text.strip()) // (1 << 20)
    if name is None:
        name, note = name_for_arch(ctx.matrix, arch, memory)
        how += f"; {note}"
    integrated = apu or _matrix_integrated(ctx.matrix, arch)
    return GpuDevice(vendor="amd", name=name, arch=arch, memory_mib=memory, index=int(node),
                     integrated=integrated, serve=not integrated, how=how)


def name_for_arch(matrix, arch: str, memory_mib: Optional[int]) -> Tuple[str, str]:
    """A marketing name for an AMD ``arch`` from the matrix, and how it was chosen.

    One matrix GPU with that arch → its name; several → the one whose VRAM is within 3 % of
    ``memory_mib``; otherwise a generic ``"AMD GPU (gfx1100)"`` and the candidates in the note.
    """
    generic = f"AMD GPU ({arch})"
    if matrix is None:
        return generic, "no matrix loaded to name it"
    cands = [g for g in matrix.gpus_with_arch(arch) if g.vendor == "amd"]
    if memory_mib:
        close = [g for g in cands if g.memory_mib and abs(g.memory_mib - memory_mib) <= 0.03 * g.memory_mib]
        if len({g.name for g in close}) == 1:
            return close[0].name, f"name: the matrix GPU with {arch} and {close[0].memory_mib} MiB (VRAM {memory_mib} MiB)"
    if len({g.name for g in cands}) == 1:
        return cands[0].name, f"name: the only matrix GPU with {arch}"
    if not cands:
        return generic, f"no matrix GPU has {arch}"
    names = ", ".join(sorted({g.name for g in cands})[:5])
    return generic, f"name unknown: {len(cands)} matrix GPUs have {arch} ({names})"


def _matrix_integrated(matrix, arch: str) -> bool:
    """True when every matrix GPU with this arch is an integrated one (gfx1103 = Radeon 780M/760M)."""
    if matrix is None:
        return False
    cands = [g for g in matrix.gpus_with_arch(arch) if g.vendor == "amd"]
    return bool(cands) and all(g.segment == "integrated" for g in cands)


# -- 2. rocminfo --------------------------------------------------------------------------------
def parse_rocminfo(text: str) -> List[Dict[str, str]]:
    """Agents of ``rocminfo`` output: the first ``Name``/``Marketing Name``/``Device Type``/``Uuid``/
    ``Memory Properties`` of each, and ``pool_kb`` (its first pool's size in KiB)."""
    agents: List[Dict[str, str]] = []
    cur: Optional[Dict[str, str]] = None
    for line in text.splitlines():
        if re.fullmatch(r"\s*Agent \d+\s*", line):
            cur = {}
            agents.append(cur)
            continue
        if cur is None:
            continue
        mt = re.match(r"\s*(Name|Marketing Name|Device Type|Uuid|Memory Properties|Size):\s*(.*?)\s*$", line)
        if not mt:
            continue
        key, value = mt.group(1), mt.group(2)
        if key == "Size":
            size = re.match(r"(\d+)\(0x[0-9a-f]+\)\s*KB", value)
            if size and "pool_kb" not in cur:
                cur["pool_kb"] = size.group(1)
        elif key not in cur:
            cur[key] = value
    return agents


def _from_rocminfo(ctx: ProbeContext, f: Finding, tried: List[str]) -> bool:
    res = ctx.run(["rocminfo"])
    where = "rocminfo"
    if res.error and "not found" in res.error and ctx.exists("/opt/rocm/bin/rocminfo"):
        where = "/opt/rocm/bin/rocminfo"
        res = ctx.run([str(ctx.path(where))])
    if not res.ok:
        tried.append(f"{where}: {result_reason(res)}")
        return False
    agents = parse_rocminfo(res.stdout)
    if not agents:
        tried.append(f"{where} printed no agents ({first_line(res.stdout, 80)!r})")
        return False
    wsl_note = " (WSL)" if "WSL environment detected" in res.stdout else ""
    index = 0
    for agent in agents:
        if agent.get("Device Type", "").upper() != "GPU":
            continue
        arch = (agent.get("Name", "").split(":")[0]).strip()
        if not _GFX.fullmatch(arch):
            tried.append(f"{where}: GPU agent named {agent.get('Name')!r} is not a gfx target")
            continue
        integrated = "APU" in agent.get("Memory Properties", "").upper()
        memory = int(agent["pool_kb"]) // 1024 if agent.get("pool_kb") and not integrated else None
        name = agent.get("Marketing Name", "").strip()
        how = f"{where}{wsl_note}: agent Name {arch}"
        if not normalize_gpu_name(name):  # "" or a generic "AMD Radeon(TM) Graphics" (APUs): the arch names it
            name, note = name_for_arch(ctx.matrix, arch, memory)
            how += f"; {note}"
        integrated = integrated or _matrix_integrated(ctx.matrix, arch)
        uuid = agent.get("Uuid") or None
        f.gpus.append(GpuDevice(vendor="amd", name=name, arch=arch, memory_mib=memory, index=index,
                                uuid=None if uuid in (None, "GPU-XX") else uuid,
                                integrated=integrated, serve=not integrated, how=how))
        index += 1
    if not f.gpus:
        tried.append(f"{where}{wsl_note} lists no GPU agent (only the CPU)")
        return False
    f.how["amd_gpus"] = "; ".join(tried + [f"{where}{wsl_note}"])
    return True


# -- 3. amd-smi ---------------------------------------------------------------------------------
def parse_amd_smi_static(text: str) -> List[Dict[str, str]]:
    """``GPU: n`` blocks of ``amd-smi static`` text: ``{"gpu": "0", "MARKET_NAME": …, "TARGET_GRAPHICS_VERSION": …}``."""
    gpus: List[Dict[str, str]] = []
    for line in text.splitlines():
        mt = re.fullmatch(r"GPU:\s*(\d+)\s*", line)
        if mt:
            gpus.append({"gpu": mt.group(1)})
            continue
        mt = re.match(r"\s+(MARKET_NAME|TARGET_GRAPHICS_VERSION):\s*(.*?)\s*$", line)
        if mt and gpus and mt.group(1) not in gpus[-1]:
            gpus[-1][mt.group(1)] = mt.group(2)
    return gpus


def _from_amd_smi(ctx: ProbeContext, f: Finding, tried: List[str]) -> bool:
    res = ctx.run(["amd-smi", "static", "--asic"])
    if not res.ok:
        tried.append(f"amd-smi: {result_reason(res)}")
        return False
    for row in parse_amd_smi_static(res.stdout):
        arch = row.get("TARGET_GRAPHICS_VERSION", "")
        if not _GFX.fullmatch(arch):
            continue
        name = row.get("MARKET_NAME") or ""
        how = f"amd-smi static --asic: TARGET_GRAPHICS_VERSION {arch}"
        if not name or name.upper() == "N/A":
            name, note = name_for_arch(ctx.matrix, arch, None)
            how += f"; {note}"
        integrated = _matrix_integrated(ctx.matrix, arch)
        f.gpus.append(GpuDevice(vendor="amd", name=name, arch=arch, index=int(row["gpu"]),
                                integrated=integrated, serve=not integrated, how=how))
    if not f.gpus:
        tried.append(f"amd-smi static --asic named no gfx target ({first_line(res.stdout, 80)!r})")
        return False
    f.how["amd_gpus"] = "; ".join(tried + ["amd-smi static --asic"])
    return True


# -- ROCm ---------------------------------------------------------------------------------------
def _rocm_version(ctx: ProbeContext, f: Finding) -> None:
    text, why = ctx.read(ROCM_INFO)
    if text is not None:
        mt = re.match(r"\s*(\d+\.\d+(?:\.\d+)?)", text)
        if mt:
            f.set("rocm", mt.group(1), f"{ROCM_INFO} ({first_line(text, 40)})")
            return
        f.missing("rocm", f"{ROCM_INFO} holds no version ({first_line(text, 60)!r})")
        return
    target = ctx.link_name("/opt/rocm")
    mt = re.fullmatch(r"rocm-(\d+\.\d+(?:\.\d+)?)", target or "")
    if mt:
        f.set("rocm", mt.group(1), f"/opt/rocm → {target}")
        return
    f.missing("rocm", f"ROCm not found ({why})")
