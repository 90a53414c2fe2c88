"""probe: describe the machine envcheck runs on, each fact with the method that found it.

``probe_machine(matrix)`` returns a :class:`~envcheck.machine.model.Machine` — the same type
``plan --machine FILE`` reads — whose ``how`` says, per fact, how it was learned and whose
``unknown`` says, per fact, why it could not be. Steps, in order:

* :mod:`.host` — OS, CPU arch, Python, glibc, distribution, container;
* :mod:`.wsl` — WSL1 / WSL2;
* then side by side: :mod:`.nvidia` (NVML → nvidia-smi → /proc), :mod:`.amd` (KFD → rocminfo →
  amd-smi, ROCm), :mod:`.intel` (sysfs DRM), :mod:`.apple` (sysctl), :mod:`.docker`;
* last :mod:`.jetson` (L4T release file, device tree), which names a Jetson's GPU when the
  NVIDIA step listed none.

Every path is read under ``root`` and every command goes through ``runner``, so tests replay
whole machines from recorded trees and outputs. Nothing a machine does — a missing tool, an
unreadable file, garbage output, a non-zero exit, a hang (killed after ``timeout`` seconds) —
raises: it becomes an entry in ``Machine.unknown``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from envcheck.machine.model import Machine
from envcheck.probe.context import DEFAULT_TIMEOUT, Finding, ProbeContext
from envcheck.runner import Runner, run

__all__ = ["probe_machine", "DEFAULT_TIMEOUT"]

_GPU_KEYS = ("nvidia_gpus", "amd_gpus", "intel_gpus", "apple_gpus")


def probe_machine(
    matrix: Any = None,
    *,
    root: Union[str, Path] = "/",
    runner: Optional[Runner] = None,
    timeout: float = DEFAULT_TIMEOUT,
    docker: bool = True,
    nvml: Any = None,
    env: Optional[Mapping[str, str]] = None,
    parallel: bool = True,
) -> Machine:
    """Everything probe can learn about this machine (or the tree under ``root``).

    Args:
        matrix: the loaded matrix (distro ids, GPU names); ``None`` leaves those unknown.
        root: file-system root to read ``/sys``, ``/proc``, ``/etc``, ``/dev``, ``/opt``,
            ``/usr/lib/wsl`` under; anything but ``/`` is a replayed tree (no live interpreter
            facts such as ``os.confstr`` or NVML are used for it).
        runner: runs commands (default :func:`envcheck.runner.run`; tests pass a ``Replay``).
        timeout: seconds each external tool may take.
        docker: also ask ``docker info`` (at most 5 s).
        nvml: ``None`` = read NVML (libnvidia-ml, through ctypes) when a driver is present;
            ``True`` = try it even on a replayed tree; ``False`` = never; or a loaded NVML library
            (a stand-in with NVML's C functions, for tests).
        env: environment of the probed session (default: ``os.environ`` when live, else empty).
        parallel: run the GPU and Docker steps side by side (threads; they mostly wait on tools).

    Returns:
        The Machine. Never raises for anything the machine does.
    """
    root = Path(root)
    live = os.path.realpath(root) == os.path.realpath("/")
    ctx = ProbeContext(root=root, runner=runner or run, timeout=timeout, live=live,
                       env=env if env is not None else (dict(os.environ) if live else {}),
                       matrix=matrix, nvml=nvml)
    m = Machine(how={}, unknown={})
    merge(m, _guard("host", lambda: _host(ctx)))
    if m.os == "linux":
        merge(m, _guard("wsl", lambda: _wsl(ctx)))
    for finding in _run_steps(_steps(ctx, m, docker), parallel):
        merge(m, finding)
    if m.os == "linux":
        have_nvidia = any(g.vendor == "nvidia" for g in m.gpus)
        merge(m, _guard("jetson", lambda: _jetson(ctx, have_nvidia)))
    _summarise_gpus(m)
    _clean_strings(m)
    return m


def _clean_strings(m: Machine) -> None:
    """Tool output and files are outside values: every name probe learned (a GPU name from
    nvidia-smi or rocminfo, the distro's PRETTY_NAME…) becomes printable text on one line, capped
    in length, before it can reach a rendered file or the terminal — and the same machine saved
    with ``probe -o`` reads back through the machine-file checks."""
    from envcheck.edge import clean_name
    from envcheck.record import fields

    def clean_map(d: Dict[str, Any], cap: int) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for k, v in d.items():
            key = clean_name(str(k), 64) or "?"
            out[key] = (clean_name(v, cap) or "?") if isinstance(v, str) else v
        return out

    for f in fields(m):
        v = getattr(m, f.name)
        if isinstance(v, str):
            setattr(m, f.name, clean_name(v) or None if f.name not in ("os", "arch", "python_implementation") else v)
    m.how = clean_map(m.how, 1000)
    m.unknown = clean_map(m.unknown, 1000)
    m.docker = clean_map(m.docker, 1000)
    for g in m.gpus:
        g.name = clean_name(g.name) or f"{g.vendor} GPU"
        g.how = clean_name(g.how, 1000) or ""
        if g.uuid is not None:
            g.uuid = clean_name(g.uuid)


def _host(ctx: ProbeContext) -> Finding:
    from envcheck.probe.host import probe_host

    return probe_host(ctx)


def _wsl(ctx: ProbeContext) -> Finding:
    from envcheck.probe.wsl import probe_wsl

    return probe_wsl(ctx)


def _jetson(ctx: ProbeContext, have_nvidia: bool) -> Finding:
    from envcheck.probe.jetson import probe_jetson

    return probe_jetson(ctx, have_nvidia)


def _steps(ctx: ProbeContext, m: Machine, docker: bool) -> List[Callable[[], Finding]]:
    steps: List[Callable[[], Finding]] = []
    wsl = bool(m.wsl)
    if m.os in ("linux", "windows"):
        from envcheck.probe.nvidia import probe_nvidia

        steps.append(_named("nvidia", lambda: probe_nvidia(ctx, wsl=wsl, windows=m.os == "windows")))
    if m.os == "linux":
        from envcheck.probe.amd import probe_amd
        from envcheck.probe.intel import probe_intel

        steps.append(_named("amd", lambda: probe_amd(ctx, wsl=wsl)))
        steps.append(_named("intel", lambda: probe_intel(ctx)))
    if m.os == "macos" and m.arch in ("arm64", "aarch64"):
        from envcheck.probe.apple import probe_apple

        steps.append(_named("apple", lambda: probe_apple(ctx)))
    if docker:
        from envcheck.probe.docker import probe_docker

        steps.append(_named("docker", lambda: probe_docker(ctx)))
    return steps


def _named(name: str, fn: Callable[[], Finding]) -> Callable[[], Finding]:
    return lambda: _guard(name, fn)


def _guard(name: str, fn: Callable[[], Finding]) -> Finding:
    """Run one step; a bug in it becomes a stated unknown instead of a crash of ``probe``."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - probe must finish; the message names the step
        f = Finding()
        f.unknown[f"probe_{name}"] = f"the {name} step failed: {type(exc).__name__}: {exc}"
        return f


def _run_steps(steps: List[Callable[[], Finding]], parallel: bool) -> List[Finding]:
    if not parallel or len(steps) < 2:
        return [s() for s in steps]
    results: List[Optional[Finding]] = [None] * len(steps)

    def work(i: int) -> None:
        results[i] = steps[i]()

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(steps))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [r if r is not None else Finding() for r in results]


def merge(m: Machine, f: Finding) -> None:
    """Apply a step's Finding to the Machine (facts, GPUs, how, unknown)."""
    for name, value in f.fields.items():
        setattr(m, name, value)
        m.unknown.pop(name, None)
    m.gpus.extend(f.gpus)
    m.how.update(f.how)
    for name, why in f.unknown.items():
        if name not in f.fields:
            m.unknown[name] = why


def _summarise_gpus(m: Machine) -> None:
    parts = [f"{k.split('_')[0]}: {m.how[k]}" for k in _GPU_KEYS if k in m.how]
    if m.gpus:
        m.how["gpus"] = "; ".join(parts) if parts else "probe"
        skipped = [g.name for g in m.gpus if not g.serve]
        if skipped:
            m.how["gpus"] += "; integrated, not served: " + ", ".join(skipped)
    else:
        why = [k for k in ("nvidia_driver",) + _GPU_KEYS if k in m.unknown]
        m.how["gpus"] = "none found" + (f" (see unknown: {', '.join(why)})" if why else "")


def load_probe_matrix(directory: Optional[Path] = None) -> Any:
    """The part of the matrix probe needs — GPU names (``gpus*.toml``) and distros (``platforms.toml``).

    Loading those files instead of all keeps ``envcheck probe`` fast; each comes through the parsed
    matrix cache (:func:`envcheck.matrix.load_file_cached`), so a run parses no TOML.

    Raises:
        DataFileError: the folder is missing or one of those files is malformed.
    """
    from envcheck.errors import DataFileError
    from envcheck.matrix import Matrix, default_matrix_dir
    from envcheck.matrix import load_file_cached as load_file

    d = Path(directory) if directory else default_matrix_dir()
    if not d.is_dir():
        raise DataFileError(d, "", "matrix folder not found (set --matrices or ENVCHECK_MATRICES)")
    wanted = [p for p in sorted(d.glob("*.toml")) if p.name.startswith("gpus") or p.name == "platforms.toml"]
    return Matrix(d, {p.name: load_file(p) for p in wanted})
