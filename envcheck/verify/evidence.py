"""What the collected evidence shows beyond the checks' own results: wheels of two CUDA majors, a
library loaded from outside the wheel that should provide it, a small /dev/shm in a container.

Pure functions of :class:`~envcheck.verify.facts.Facts`, shared by the ``environment`` check
(:mod:`envcheck.verify.diagnose`) and the rule helpers (:mod:`envcheck.verify.rules`), so a pasted
``undefined symbol: ncclCommRegister`` and a replayed facts file name the same culprit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from envcheck.matrix import Matrix
from envcheck.verify.facts import Facts

#: ``nvidia-nccl-cu12`` → (``nvidia-nccl``, ``12``).
_CU_SUFFIX = re.compile(r"^(?P<base>nvidia-[a-z0-9-]+?)-cu(?P<major>\d{2})$")

#: Shared objects that torch's CUDA wheels take from nvidia-* wheels (soname stems).
CUDA_LIBS = re.compile(r"^lib(?:cublas|cublasLt|cudnn\w*|nccl|nvJitLink|cudart|cusparse|cusparseLt|cufft|curand|"
                       r"cusolver|nvrtc|cupti|nvToolsExt|cufile)\.so(?:\.\d+)*$")


#: nvidia-* distributions that carry no CUDA library.
NOT_CUDA = frozenset({"nvidia-ml-py", "nvidia-ml-py3", "nvidia-pyindex"})


@dataclass(frozen=True)
class MixedMajors:
    """One CUDA library installed as wheels of several CUDA majors (``nvidia-nccl-cu12`` and ``-cu13``)."""

    base: str
    majors: Dict[str, List[str]]  # "12" → ["nvidia-nccl-cu12 2.21.5"]
    keep: Optional[str]  # the major torch uses, when known
    remove: Tuple[str, ...]  # distribution names to uninstall


def dist_name(key: str, dist: Dict[str, object]) -> str:
    """The distribution's name as pip spells it (``nvidia-nccl-cu12``)."""
    name = dist.get("name") if isinstance(dist.get("name"), str) else key
    return re.sub(r"[-_.]+", "-", str(name)).lower()


def torch_cuda_major(facts: Facts) -> Optional[str]:
    """The CUDA major torch was built with: torch.version.cuda, else the ``-cuNN`` of the nvidia-*
    wheels torch's metadata requires, else the local version label (``+cu130``)."""
    cuda = facts.torch_cuda
    if cuda:
        return str(cuda).split(".")[0]
    for d in facts.packages("torch")[:1]:
        for req in d.get("requires") or []:
            m = re.match(r"nvidia-[a-z0-9-]+-cu(\d{2})\b", str(req))
            if m:
                return m.group(1)
    m = re.search(r"\+cu(\d{2})\d", facts.torch_version or "")
    return m.group(1) if m else None


def mixed_majors(facts: Facts) -> List[MixedMajors]:
    """Every nvidia-* library installed for more than one CUDA major, with what to uninstall."""
    groups: Dict[str, Dict[str, List[str]]] = {}
    for key, dists in facts.section("packages").items():
        if not isinstance(dists, list):
            continue
        for d in dists:
            if not isinstance(d, dict):
                continue
            name = dist_name(key, d)
            m = _CU_SUFFIX.match(name)
            if m:
                groups.setdefault(m.group("base"), {}).setdefault(m.group("major"), []).append(
                    f"{name} {d.get('version') or '?'}")
    keep = torch_cuda_major(facts)
    out = []
    for base, majors in sorted(groups.items()):
        if len(majors) < 2:
            continue
        remove = tuple(f"{base}-cu{mj}" for mj in sorted(majors) if keep and mj != keep)
        out.append(MixedMajors(base, majors, keep if keep in majors else None, remove))
    return out


def loaded_libraries(facts: Facts) -> List[str]:
    """Paths of the shared objects the interpreter had mapped (after the first CUDA call when that
    was recorded, else right after ``import torch``)."""
    data = facts.probe_data("environment")
    libs = data.get("after_cuda") or data.get("after_import") or []
    return [p for p in libs if isinstance(p, str)]


def _in_site(path: str) -> bool:
    return bool(re.search(r"[\\/](?:site|dist)-packages[\\/]", path))


def shadowing(facts: Facts) -> List[Tuple[str, str]]:
    """``(soname, path)`` of each CUDA library loaded from outside site-packages while nvidia-*
    wheels are installed to provide it: a system copy (LD_LIBRARY_PATH, /usr/local/cuda,
    /usr/lib) shadowing the wheel's."""
    wheels = any(dist_name(k, d).startswith("nvidia-") and dist_name(k, d) not in NOT_CUDA
                 for k, ds in facts.section("packages").items() if isinstance(ds, list)
                 for d in ds if isinstance(d, dict))
    if not wheels:
        return []
    out = []
    for path in loaded_libraries(facts):
        base = re.split(r"[\\/]", path)[-1]
        if CUDA_LIBS.match(base) and not _in_site(path):
            out.append((base, path))
    return out


def loaded(facts: Facts, stem: str) -> List[str]:
    """Loaded shared objects whose file name starts with ``stem`` (``libstdc++.so``)."""
    return [p for p in loaded_libraries(facts) if re.split(r"[\\/]", p)[-1].startswith(stem)]


def shm_mib(facts: Facts) -> Optional[int]:
    v = facts.section("platform").get("shm_mib")
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def limit(matrix: Matrix, name: str) -> float:
    """The value of the ``[[limit]]`` row ``name`` of diagnoses.toml (``shm_small_mib``: below it a
    container's /dev/shm is too small for NCCL's shared-memory transport and DataLoader workers).

    Raises:
        DataFileError: the matrix has no such row (a matrices folder from before the row existed).
    """
    from envcheck.errors import DataFileError

    for row in matrix.files.get("diagnoses.toml", {}).get("limit", []):
        if row.name == name:
            return float(row.value)
    raise DataFileError(matrix.directory / "diagnoses.toml", "limit",
                        f"no [[limit]] row named {name!r} (copy it from envcheck's own matrices/diagnoses.toml)")


def shm_small(facts: Facts, matrix: Matrix) -> Optional[bool]:
    """Whether /dev/shm is below the matrix's ``shm_small_mib`` (``None``: its size is not known)."""
    mib = shm_mib(facts)
    return None if mib is None else mib < limit(matrix, "shm_small_mib")


def ld_path_suspects(facts: Facts) -> List[str]:
    """LD_LIBRARY_PATH entries outside site-packages (a CUDA toolkit's lib64, a system NCCL…): where
    a second copy of a wheel's library is found first when the loaded libraries are not known."""
    raw = facts.section("env").get("LD_LIBRARY_PATH") or ""
    return [e for e in dict.fromkeys(raw.split(":")) if e and not _in_site(e)]


#: The Visual C++ 2015-2022 runtime DLLs torch's Windows wheels load (the collector looks for these and
#: libomp140 in System32; libomp140 is only fbgemm.dll's, so its absence alone is not a finding).
VCRUNTIME_CORE = ("vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll")


def vcruntime_missing(facts: Facts) -> List[str]:
    """The core VC++ runtime DLLs a Windows collector did not find (``[]`` elsewhere or when unknown)."""
    plat = facts.section("platform")
    have = plat.get("vcruntime")
    if plat.get("os") != "windows" or not isinstance(have, list):
        return []
    got = {str(h).lower() for h in have}
    return [d for d in VCRUNTIME_CORE if d not in got]


def host_warnings(facts: Facts) -> List[Tuple[str, str, str]]:
    """``(detail, fix, family)`` for what the host rules out: WSL 1, a macOS VM with MPS, missing VC++ DLLs."""
    plat = facts.section("platform")
    out = []
    if plat.get("wsl") and plat.get("wsl_version") == 1:
        out.append(("this Linux runs under WSL 1 (kernel " + str(plat.get("release") or "?") + "): it has no GPU access",
                    "Convert the distribution to WSL 2 — in Windows: `wsl --set-version <distro> 2` (`wsl -l -v` lists "
                    "them) — then install the GPU build `envcheck plan` picks.", "no-nvidia-driver"))
    if plat.get("os") == "macos" and plat.get("vm") is True:
        b = facts.build
        mps = " and torch reports MPS available" if b.get("mps_available") else ""
        out.append((f"this macOS runs in a virtual machine (kern.hv_vmm_present = 1){mps}: there is no Metal GPU "
                    "behind MPS", "Run GPU work on a physical Mac (or a self-hosted runner); in a hosted macOS runner, "
                    "test on the CPU — skip MPS when `sysctl -n kern.hv_vmm_present` prints 1.", "mps-oom-vm"))
    missing = vcruntime_missing(facts)
    if missing:
        out.append((f"the Visual C++ runtime is incomplete: {', '.join(missing)} not in System32",
                    "Install the latest Microsoft Visual C++ Redistributable (x64), "
                    "https://aka.ms/vs/17/release/vc_redist.x64.exe, and open a new terminal.", "windows-dll-missing"))
    return out
