"""Facts of one machine that cannot all be true: the cross-field rules of a Machine, wherever it
comes from (a machine file, the machine inside saved facts or a lock, flags on top of either).

Two kinds, one place:

* :func:`contradiction` — what the fields alone rule out (WSL2 is Linux, a Jetson has an aarch64
  CPU, glibc is Linux's, an Apple-silicon GPU sits only in a Mac). It is the ``rule`` of the
  ``[machine]`` table (:data:`envcheck.machine.io.MACHINE`), so every reader of that table applies it.
* :func:`contradiction_with_data` — what the matrix's sourced facts rule out: the glibc a known distro
  ships (``matrices/platforms.toml``), the CUDA a driver runs (``matrices/cuda.toml``), the OS a
  GPU's systems run (a GPU row's ``host_os``: a Grace-Hopper server is never Windows or a WSL guest). Applied where a
  matrix is at hand: a machine file read for a plan, and the machine flags describe.

Both return ``(".key", message)`` — the key the user has to change — or ``None``.
"""

from __future__ import annotations


from envcheck.jsontypes import JSON

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Mapping, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.matrix import Matrix

if TYPE_CHECKING:  # pragma: no cover
    Problem = Tuple[str, str]


def contradiction(fields: Mapping[str, JSON]) -> Optional[Problem]:
    """The first pair of ``[machine]`` fields that contradict each other (``None``: none do)."""
    m: Mapping[str, Any] = fields  # values of any JSON shape: each rule reads the ones it knows
    os, arch = m.get("os"), m.get("arch")
    if m.get("wsl") and os not in (None, "linux"):
        return ".wsl", f"WSL2 runs Linux: wsl = true describes os = \"linux\", not os = {os!r}"
    if m.get("wsl_version") is not None and m.get("wsl") is False:
        return ".wsl_version", "set, but wsl = false"
    if m.get("jetpack") is not None and m.get("tegra") is False:
        return ".jetpack", "JetPack runs only on a Jetson (Tegra) board, and tegra = false"
    if m.get("tegra"):
        if arch not in (None, "aarch64", "arm64"):
            return ".tegra", f"a Jetson (Tegra) board has an aarch64 CPU, not arch = {arch!r}"
        if os not in (None, "linux"):
            return ".tegra", f"a Jetson (Tegra) board runs Linux (JetPack), not os = {os!r}"
        if m.get("wsl"):
            return ".wsl", "a Jetson (Tegra) board runs Linux (JetPack) on the board itself, never as a WSL guest"
    problem = _driver_grammar(m)
    if problem:
        return problem
    for key, where in (("glibc", "linux"), ("distro", "linux"), ("macos", "macos")):
        if m.get(key) is not None and os not in (None, where):
            return f".{key}", f"describes {'Linux' if where == 'linux' else 'macOS'}, but os = {os!r}"
    for i, g in enumerate(m.get("gpus") or ()):
        if g.get("vendor") != "apple":
            continue
        if os not in (None, "macos"):  # (not its CPU: an x86_64 Python under Rosetta 2 probes x86_64)
            return f".gpus[{i}].vendor", f"the {g.get('name')} is an Apple-silicon GPU, only in Macs; os = {os!r}"
    return None


def amd_driver_store_number(value: str) -> bool:
    """Whether ``value`` is the number Windows gives an AMD display driver (Device Manager, dxdiag,
    ``Win32_VideoController.DriverVersion``: ``32.0.22029.9039``, ``31.0.24027.1012``) rather than the
    Adrenalin release AMD's pages and matrices name (``25.10.2``, ``24.10.21.01``). The two are different
    numberings of one driver; only the release can be compared with a ROCm-on-WSL floor."""
    parts = value.split(".")
    return len(parts) == 4 and all(p.isdigit() for p in parts) and int(parts[0]) >= 26 and parts[1] == "0"


def _driver_grammar(m: Mapping[str, Any]) -> Optional[Problem]:
    """An NVIDIA driver numbers its branch in the hundreds (R470, R580: ``570.124.06``, Windows
    ``572.16``); AMD's Adrenalin driver is year.month.release (``24.12.1``; WSL builds add a fourth
    part: ``24.10.21.01``). A version of the other shape is the other vendor's driver given for this GPU
    (or a typo), not a very old or very new one."""
    nv, amd, cuda = m.get("nvidia_driver"), m.get("amd_driver"), m.get("cuda_driver_max")
    for key, value, ok, shape in (
            ("nvidia_driver", nv, lambda major, n: 100 <= major <= 999 and n <= 3, "an NVIDIA driver is NNN.NN[.NN] "
             "(570.124.06, Windows 572.16)"),
            ("cuda_driver_max", cuda, lambda major, n: major < 100 and n <= 2, "it is the CUDA version nvidia-smi "
             "prints, MAJOR.MINOR (12.8); a driver version such as 570.124.06 belongs in nvidia_driver"),
            ("amd_driver", amd, lambda major, n: major < 100 and n <= 4, "AMD's Adrenalin driver is "
             "year.month.release (24.12.1)")):
        if not isinstance(value, str):
            continue
        parts = value.split(".")
        if not parts[0].isdigit() or not ok(int(parts[0]), len(parts)):
            if key == "cuda_driver_max":
                return f".{key}", f"{value} is not a CUDA version: {shape}"
            other = " — that is the shape of the other vendor's driver" if len(parts) <= 3 else ""
            return f".{key}", f"{value} is not a version of this driver: {shape}{other}"
    return None


def contradiction_with_data(fields: Mapping[str, JSON], matrix: Matrix) -> Optional[Problem]:
    """The first field the matrix's facts contradict (``None``: none, or the matrix has no row to say)."""
    m: Mapping[str, Any] = fields
    from envcheck.matrix.model import vkey

    distro, glibc = m.get("distro"), m.get("glibc")
    if distro and glibc:
        row = next((d for d in matrix.distros if d.id == distro), None)
        if row is not None and row.glibc and vkey(glibc).release[:2] != vkey(row.glibc).release[:2]:
            return ".glibc", (f"{row.name} ships glibc {row.glibc} (matrices/platforms.toml), "
                              f"not {glibc}: drop one of distro/glibc or correct it")
    for g in m.get("gpus") or ():
        gpu = next((r for r in matrix.gpus if r.name == g.get("name")), None) if isinstance(g, dict) else None
        if gpu is None or not gpu.host_os:
            continue
        # under WSL the GPU is driven by the Windows host's driver: its systems must run Windows
        where = "windows" if m.get("wsl") else m.get("os")
        if where is not None and where not in gpu.host_os:
            key, what = (".wsl", "a WSL2 guest (its GPU is the Windows host's)") if m.get("wsl") else (".os", f"os = {where!r}")
            return key, (f"the {gpu.name} comes only in systems that run {' or '.join(gpu.host_os)} "
                         f"(matrices/gpus: host_os), not {what}")
    amd = m.get("amd_driver")
    releases = [r.adrenalin_min for r in matrix.rocm_wsl if r.adrenalin_min]
    if amd and releases:
        newest = max(releases, key=vkey)
        # Adrenalin is year.month.release: a year past the next one is no release (32.0.21013 is Device
        # Manager's number missing its last part), not a driver newer than every floor
        if vkey(amd).release[0] > vkey(newest).release[0] + 1:
            return ".amd_driver", (f"no Adrenalin release {amd}: it is year.month.release, the newest on record "
                                   f"{newest} (matrices/rocm-wsl.toml); Device Manager's number has four parts "
                                   "(32.0.21013.1000) and is taken as it is")
    driver, cuda_max = m.get("nvidia_driver"), m.get("cuda_driver_max")
    if cuda_max and matrix.toolkits:
        newest = matrix.toolkits[-1].version
        # a driver can run a CUDA newer than the matrix knows (a new release since the data's date),
        # but not a major after the next one: "99.0" is a typo, not a driver's CUDA
        if vkey(cuda_max).release[0] > vkey(newest).release[0] + 1:
            return ".cuda_driver_max", (f"no CUDA {cuda_max} exists: the newest on record is {newest} "
                                        "(matrices/cuda.toml); give the CUDA Version nvidia-smi prints (12.8)")
    if driver and cuda_max:
        windows = m.get("os") == "windows" or bool(m.get("wsl"))
        side = "Windows" if windows else "Linux"
        # only below: a driver reports the newest CUDA it runs, never less — while more is real (a beta
        # driver ahead of the toolkit's table row; CUDA forward compatibility's newer libcuda)
        runs = matrix.cuda_for_driver(driver, windows)
        if runs and vkey(cuda_max).release[:2] < vkey(runs).release[:2]:
            return ".cuda_driver_max", (f"the NVIDIA {side} driver {driver} runs CUDA {runs} (matrices/cuda.toml), "
                                        f"not at most {cuda_max}: drop cuda_driver_max or correct nvidia_driver")
    return None
