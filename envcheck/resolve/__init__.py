"""resolve(Machine, Request, Matrix) → Resolution: a pure function, no I/O, never imports torch.

Every candidate — each torch release × each of its builds × each Python — is checked against
every constraint in :mod:`envcheck.resolve.rules`; all failures are kept. Accepted candidates are
ranked by :func:`rank_key` — the one ranking rule (README "How the choice is made" and
``plan --explain`` say the same):

1. a complete, verified set first: the newest release with at least one accepted build that has
   its paired torchvision on record (and torchaudio, which the release row names where one was
   released with it — torchaudio stopped pairing after 2.11) and no ``unverified`` row beats any
   newer release that lacks companions or rests on unverified rows (``--prefer newest`` turns
   this off);
2. then the newest torch release;
3. then the best fit for the GPUs: an exact cubin/gfx target, then a same-major cubin, then PTX
   JIT; a build whose CUDA predates the GPU's architecture ranks below one made for it (one that
   reaches the GPU only through PTX is rejected: its cuDNN/cuBLAS have no code for the arch);
4. then driver fit: full support, then driver unknown, then minor-version compatibility;
5. then verified rows before ``unverified`` ones, then fewer other caveats;
6. then the build variant: with a known driver, the newest CUDA/ROCm it fully supports; with the
   driver unknown, the variant plain PyPI serves for that platform (PyTorch's own default), then
   the newest;
7. then the channel (PyPI, then download.pytorch.org), and the Python, when the machine did not
   say: the distribution's own python3 when the build has it, else a GIL CPython that
   torch.compile supports and that the previous release supported too, newest first.
"""

from __future__ import annotations


from envcheck.machine.model import Machine
from envcheck.matrix import Matrix
from envcheck.matrix.model import Build, python_key, vkey
from envcheck.resolve.rules import (
    VENDOR_NAMES,
    Context,
    build_pythons,
    check_gpu_backend,
    check_gpus,
    check_platform,
    floor_from_gpus,
    name_of,
    py_span,
    pythons_of,
    run_checks,
)
from envcheck.resolve.index_only import index_only_candidates
from envcheck.resolve.types import REASON_CODES, Candidate, Reason, Request, Resolution

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["resolve", "rank_key", "RANKING_RULE", "Request", "Resolution", "Candidate", "Reason", "REASON_CODES"]

_GPU_CODES = {"gpu-arch", "backend", "wsl", "driver", "compile"}


def enumerate_candidates(matrix: Matrix, machine: Machine) -> List[Candidate]:
    """Every (release × build × Python) to consider for ``machine``.

    A build is a release's (variant, channel); its rows may be split by Python (e.g. free-threaded
    wheels with another macOS tag) — for each Python the row that has its wheel on the machine's
    platform is used. With the machine's Python known, one candidate per build for that Python;
    otherwise one per Python the build has on the platform (one with ``python=None`` when the
    build has no wheel for the platform at all).
    """
    out: List[Candidate] = []
    platform = machine.platform
    for release in matrix.releases:
        groups: Dict[Tuple[str, str], List] = {}
        for build in matrix.builds_for(release.version):
            groups.setdefault((build.variant, build.channel), []).append(build)
        for rows in groups.values():
            on_platform = [b for b in rows if platform in b.platforms] or rows
            if len(on_platform) == 1:  # most builds: one row has every Python
                only = on_platform[0]
                pys: List[Optional[str]] = ([machine.python] if machine.python
                                            else list(dict.fromkeys(pythons_of(release, only, platform))))
                out += [Candidate(release, only, py) for py in pys or [None]]
                continue
            by_python: Dict[Optional[str], Build] = {}
            for b in on_platform:
                for listed in pythons_of(release, b, platform):
                    by_python.setdefault(listed, b)
            pys = [machine.python] if machine.python else list(by_python)
            out += [Candidate(release, by_python.get(py, on_platform[0]), py) for py in pys or [None]]
    return out


def distro_python(matrix: Matrix, machine: Machine) -> Optional[str]:
    """The Python the machine's distribution ships as python3 (``"3.10"`` on Ubuntu 22.04)."""
    if machine.python or not machine.distro:
        return None
    row = next((d for d in matrix.distros if d.id == machine.distro), None)
    return row.python3 if row and row.python3 else None


#: The ranking rule in words: ``plan --explain`` prints it, README.md carries it verbatim (a test
#: checks both), and :func:`rank_key` implements it.
RANKING_RULE = (
    "A complete, verified set comes first: the newest release that has its paired torchvision on record "
    "(and torchaudio where one was released with it) and no unverified row beats a newer release without "
    "them (--prefer newest turns this off). Then: the newest release; the best fit for the GPUs (an exact "
    "cubin or gfx target, then a same-major cubin, then PTX; a build whose CUDA predates the GPU's "
    "architecture last, and never one that reaches it only through PTX); the driver fit (full, unknown, "
    "minor-version compatibility); verified rows, then "
    "fewer other caveats; with a known driver the newest CUDA/ROCm it fully supports, with the driver "
    "unknown the variant plain PyPI serves for the platform; PyPI before download.pytorch.org; and, when "
    "no Python was given, a Python torchvision and torchaudio have wheels for too, then the distribution's "
    "python3, else a GIL CPython that torch.compile supports and the previous release supported too."
)


def complete_set(c: Candidate) -> bool:
    """torch with its paired torchvision on record (every release pairs one; torchaudio stopped
    pairing after 2.11, so it counts where the release names one), and no row behind it ``unverified``."""
    has = bool(c.build.pins.get("torchvision") or c.release.torchvision) and "torchvision" not in c.fit.companions_missing
    return has and c.build.confidence != "unverified" and c.release.confidence != "unverified"


def complete_releases(accepted: Sequence[Candidate]) -> set:
    """The releases of ``accepted`` with a :func:`complete_set` (each release's candidates asked until one is)."""
    out: set = set()
    for c in accepted:
        if c.release.version not in out and complete_set(c):
            out.add(c.release.version)
    return out


def ranking(release_index: Dict[str, int], machine: Machine, prefer_python: Optional[str] = None,
            complete: Optional[set] = None) -> Callable[[Candidate], Tuple]:
    """The sort key of accepted candidates on ``machine`` (smaller = better); see the module docstring.
    What depends on the machine alone is worked out here, once, not for each candidate.

    Args:
        complete: releases with a complete, verified accepted set (rule 1); ``None`` = rule off.
    """
    driver_known = bool(machine.nvidia_driver or machine.cuda_driver_max)
    platform = machine.platform
    python_given = bool(machine.python)
    variant_prefs: Dict[Tuple[int, int], Tuple] = {}  # (release, build) -> rule 6 (one build, several Pythons)

    def variant_pref(c: Candidate) -> Tuple:
        b = c.build
        toolkit = b.cuda or b.rocm or "0"
        newest_first = tuple(-x for x in vkey(toolkit).release)
        pypi_default = c.release.pypi.get(platform) == b.variant
        return (0 if driver_known or pypi_default else 1, newest_first)

    def key(c: Candidate) -> Tuple:
        b = c.build
        pref = variant_prefs.get((id(c.release), id(b)))
        if pref is None:
            pref = variant_prefs[id(c.release), id(b)] = variant_pref(c)
        py = c.python
        fit = c.fit
        if python_given or py is None:
            py_pref: Tuple = ()
        else:
            major, minor, ft = python_key(py)
            py_pref = (ft, len(fit.companions_missing), py != prefer_python if prefer_python else False,
                       fit.compile is False,
                       fit.python_new, -major, -minor)
        warnings = c.warnings
        unverified = bool(warnings) and any(w.code == "unverified" for w in warnings)
        others = sum(1 for w in warnings if w.code not in ("unverified", "gpu-arch", "companion")) if warnings else 0
        return (
            complete is not None and c.release.version not in complete,
            release_index.get(c.release.version, 1 << 30),
            fit.arch_fit,
            fit.arch_predates,
            fit.driver_rank,
            unverified,
            others,
            pref,
            _CHANNEL_RANK.get(b.channel, 2),
            py_pref,
        )

    return key


_CHANNEL_RANK = {"pypi": 0, "pytorch": 1}


def rank_key(c: Candidate, release_index: Dict[str, int], machine: Machine,
             prefer_python: Optional[str] = None, complete: Optional[set] = None) -> Tuple:
    """:func:`ranking`'s sort key of one candidate."""
    return ranking(release_index, machine, prefer_python, complete)(c)


def resolve(machine: Machine, request: Request, matrix: Matrix) -> Resolution:
    """Check every candidate for ``machine`` against every constraint and rank the survivors.

    Returns:
        A :class:`Resolution` whose ``candidates`` are accepted-best-first, then rejected (in
        matrix order: newest release first). ``status`` is ``ok``, ``no_build`` or
        ``no_official_build``.
    """
    res, ctx, release_index, accepted, rejected = _ranked(machine, request, matrix)
    res.alternatives = _alternatives(res, ctx, release_index, accepted, rejected)
    res.assumptions = _assumptions(res, ctx)
    return res


def _ranked(machine: Machine, request: Request,
            matrix: Matrix) -> Tuple[Resolution, Context, Dict[str, int], List[Candidate], List[Candidate]]:
    """:func:`resolve` without the alternatives and assumptions: every candidate checked and ranked
    (what a question like "which build with a newer driver?" needs, and nothing more)."""
    ctx = Context(matrix, machine, request)
    cands = enumerate_candidates(matrix, machine)
    if request.nightly:
        from envcheck.resolve.nightly import nightly_candidates

        cands += nightly_candidates(matrix, machine, request.nightly)
    run_checks(cands, ctx)
    cands += index_only_candidates(matrix, machine)
    release_index = {r.version: i for i, r in enumerate(matrix.releases)}
    for c in cands:  # a nightly ranks as a release of its own, after those on record
        release_index.setdefault(c.release.version, len(release_index))
    prefer = distro_python(matrix, machine)
    ok: List[Candidate] = []
    rejected: List[Candidate] = []
    for c in cands:
        (ok if c.accepted else rejected).append(c)
    complete = None if request.prefer == "newest" else complete_releases(ok)
    accepted = sorted(ok, key=ranking(release_index, machine, prefer, complete))
    res = Resolution(machine, request, accepted + rejected)
    if not accepted:
        res.status, res.fallback = _no_build_status(matrix, machine, request, release_index)
    return res, ctx, release_index, accepted, rejected


def _serves_arch(c: Candidate, machine: Machine) -> bool:
    """Does the build carry code for every served GPU (ignoring driver, Python, glibc…)?"""
    for g in machine.served_gpus:
        if g.vendor == "nvidia":
            if c.build.backend != "cuda":
                return False
            arch_msgs = [r for r in c.reasons if r.code == "gpu-arch"]
            if arch_msgs:
                return False
        elif g.vendor == "amd" and machine.os == "macos":
            if not c.build.mps:
                return False
        elif g.vendor == "amd":
            if c.build.backend != "rocm" or g.arch not in c.build.gfx:
                return False
        elif g.vendor == "intel":
            if c.build.variant != "xpu" or not g.arch.startswith("xpu-"):
                return False
        elif g.vendor == "apple" and not c.build.mps:
            return False
    return True


def _no_build_status(
    matrix: Matrix, machine: Machine, request: Request, release_index: Dict[str, int]
) -> Tuple[str, Optional[Candidate]]:
    if not machine.served_gpus or request.backend == "cpu" or machine.python_bits == 32:
        return "no_build", None
    cpu_request = Request(request.torch, request.torch_text, "cpu", request.compile, request.prefer)
    cpu_ctx = Context(matrix, machine, cpu_request)
    cpu = [c for c in enumerate_candidates(matrix, machine) if c.build.backend in ("cpu", "mps")]
    run_checks(cpu, cpu_ctx)
    fallback = [c for c in cpu if c.accepted]
    complete = None if request.prefer == "newest" else complete_releases(fallback)
    fallback.sort(key=ranking(release_index, machine, None, complete))
    best = fallback[0] if fallback else None
    ctx = Context(matrix, machine, Request(backend="auto"))
    any_serves = False
    for c in enumerate_candidates(matrix, machine):
        if machine.platform not in c.build.platforms or c.build.backend in ("cpu",):
            continue
        for check in (check_platform, check_gpu_backend, check_gpus):
            check(c, ctx)
        if _serves_arch(c, machine) and not any(r.code in ("os", "arch") for r in c.reasons):
            any_serves = True
            break
    return ("no_build" if any_serves else "no_official_build"), best


def _without_request_limits(res: Resolution, ctx: Context, release_index: Dict[str, int]) -> List[str]:
    """When nothing fits and the request narrowed the choice (``--torch``, ``--backend``): what the
    resolver picks without that limit, and why the limit excluded it — the first release with code
    for the GPU for ``--torch``, the backend the GPU needs for ``--backend``. One answer: each
    sentence comes from :func:`resolve` on the relaxed request, never from a second rule."""
    from envcheck.record import replace

    req = ctx.request
    out: List[str] = []
    if req.torch is not None and not req.nightly:
        free = resolve(ctx.machine, replace(req, torch=None, torch_text=""), ctx.matrix)
        if free.chosen is not None:
            first = max(free.accepted, key=lambda c: release_index.get(c.release.version, -1))
            asked = [c for c in res.candidates if not any(r.code == "torch" for r in c.reasons)]
            arch = [r.message for c in asked for r in c.reasons if r.code == "gpu-arch"]
            gpus = ", ".join(f"{g.name} ({g.arch})" for g in ctx.machine.served_gpus)
            lead = (f"the {gpus} has code in no torch matching --torch {req.torch_text}" if arch and gpus
                    else f"no build of --torch {req.torch_text} fits this machine")
            out.append(f"{lead}: the first release that fits is {name_of(first)} — raise or drop --torch "
                       f"(without it the plan is {name_of(free.chosen)})")
    if req.backend not in ("auto", "cpu"):
        free = resolve(ctx.machine, replace(req, backend="auto"), ctx.matrix)
        if free.chosen is not None and free.chosen.build.backend != "cpu":
            why = next((r.message for c in res.candidates for r in c.reasons if r.code == "backend"
                        and "cannot drive" in r.message), "")
            out.append((f"{why} — " if why else "") + f"without --backend {req.backend} the plan is "
                       f"{name_of(free.chosen)}")
    return out


def _one_gpu_only(res: Resolution, ctx: Context) -> List[str]:
    """No build serves all NVIDIA GPUs together: for each GPU model, the resolver's pick when the plan
    serves that model alone (the others hidden from CUDA) — an RTX 5090 beside a GTX 1080."""
    from envcheck.record import replace

    machine = ctx.machine
    models = list(dict.fromkeys(g.name for g in machine.served_gpus if g.vendor == "nvidia"))
    if len(models) < 2:
        return []
    out: List[str] = []
    for name in models:
        alone = replace(machine, gpus=[replace(g, serve=g.name == name) if g.vendor == "nvidia" else g
                                       for g in machine.gpus], plan_gpu=None)
        one = resolve(alone, ctx.request, ctx.matrix)
        if one.chosen is not None and one.chosen.build.backend != "cpu":
            out.append(f"or use only the {name}: {name_of(one.chosen)} serves it — hide the other GPUs with "
                       "CUDA_VISIBLE_DEVICES=<its index or UUID from `nvidia-smi -L`> (and "
                       "CUDA_DEVICE_ORDER=PCI_BUS_ID so the index matches nvidia-smi's)")
    return out


def _driver_upgrades(ctx: Context, chosen: Optional[Candidate], driver_only: List[Candidate],
                     release_index: Dict[str, int]) -> List[str]:
    """"With driver ≥ X the plan would pick <…>": the resolver's own answer for an upgraded driver
    (NVIDIA, or AMD's Adrenalin under WSL), not the newest build the driver keeps out — the ranking
    may pass that one over (newcomer5 #8). The levels tried are the drivers the rejected builds and
    the machine's GPUs need (matrix data); the smallest one that brings a better pick is found by
    bisection (a newer driver never rejects more), and the pick with every one of them is named."""
    from envcheck.record import replace

    machine = ctx.machine
    nv = [c for c in driver_only if c.build.backend == "cuda" and (c.fit.driver_full or c.fit.driver_floor)]
    amd = [c for c in driver_only if c.fit.wsl_release is not None and c.fit.wsl_release.adrenalin_min]
    if nv:
        levels = {v for c in nv for v in (c.fit.driver_full, c.fit.driver_floor) if v}
        for g in machine.gpus_of("nvidia"):
            row = ctx.matrix.nv_arch(g.arch)
            low = row and (row.driver_min_windows if ctx.windows_driver else row.driver_min_linux)
            if low:
                levels.add(low)
        have = machine.nvidia_driver

        def upgraded(v: str) -> Machine:
            return replace(machine, nvidia_driver=v, cuda_driver_max=None)
        what = "the NVIDIA driver"
    elif amd:
        levels = {c.fit.wsl_release.adrenalin_min for c in amd if c.fit.wsl_release is not None}
        have = machine.amd_driver

        def upgraded(v: str) -> Machine:
            return replace(machine, amd_driver=v)
        what = "the AMD Windows driver (Adrenalin)"
    else:
        return []
    order = sorted((v for v in levels if not have or vkey(v) > vkey(have)), key=vkey)
    picks: Dict[str, Optional[Candidate]] = {}

    def pick(v: str) -> Optional[Candidate]:
        if v not in picks:
            picks[v] = _ranked(upgraded(v), ctx.request, ctx.matrix)[0].chosen
        return picks[v]

    def better(c: Optional[Candidate]) -> bool:
        """Another build than today's pick, of no older a release (a newer CUDA of the same release counts)."""
        return c is not None and c.build.backend != "cpu" and (chosen is None or (
            release_index[c.release.version] <= release_index[chosen.release.version]
            and name_of(c) != name_of(chosen)))

    if not order or not better(pick(order[-1])):
        return []
    top = pick(order[-1])
    lo, hi = 0, len(order) - 1  # the smallest level whose pick is better than today's
    while lo < hi:
        mid = (lo + hi) // 2
        if better(pick(order[mid])):
            hi = mid
        else:
            lo = mid + 1
    assert top is not None
    need = top.fit.driver_full if nv else top.fit.wsl_release.adrenalin_min if top.fit.wsl_release else ""
    need = need if need in levels and name_of(pick(need) or top) == name_of(top) else order[-1]
    first = pick(order[lo])
    assert first is not None
    out = f"upgrade {what} to ≥ {need} to use {name_of(top)} (the plan's pick with that driver)"
    if name_of(first) == name_of(top):
        if vkey(order[lo]) < vkey(need):
            out += f"; ≥ {order[lo]} runs it under minor-version compatibility"
    else:
        mvc = " under minor-version compatibility" if nv and first.fit.driver_full and \
            vkey(order[lo]) < vkey(first.fit.driver_full) else ""
        out += f"; the smallest upgrade that fits: ≥ {order[lo]} gives {name_of(first)}{mvc}"
    return [out]


def _alternatives(res: Resolution, ctx: Context, release_index: Dict[str, int], accepted: List[Candidate],
                  rejected: List[Candidate]) -> List[str]:
    """Other ways out, as sentences (``accepted``/``rejected``: ``res``'s candidates, split once by resolve)."""
    out: List[str] = []
    chosen = res.chosen
    machine = ctx.machine
    if chosen is None:
        out += _without_request_limits(res, ctx, release_index)
    if chosen is not None and ctx.request.prefer != "newest":
        newer = [c for c in accepted if release_index[c.release.version] < release_index[chosen.release.version]]
        if newer:
            # every newer release that fits, not only the newest: a user on the chosen 2.11 should see
            # that 2.12–2.14 fit too (newcomer4 #7), each passed over for the same reason
            others = sorted({c.release.version for c in newer} - {newer[0].release.version},
                            key=release_index.__getitem__)
            also = f" (as do torch {', '.join(others)})" if others else ""
            out.append(f"{name_of(newer[0])} is newer and fits too{also}, but "
                       f"{'none has a' if others else 'has no'} complete, verified set on record (paired torchvision, "
                       "no unverified row): --prefer newest picks it")

    def better(c: Candidate) -> bool:
        return chosen is None or release_index[c.release.version] < release_index[chosen.release.version]

    from envcheck.resolve.rules import gpu_driver_problem

    too_new = False
    for g in machine.gpus_of("nvidia"):
        problem = gpu_driver_problem(ctx, g)
        if problem:
            out.append(f"fix the NVIDIA driver first — {problem.message}")
            too_new = too_new or problem.kind == "too_new"
    # the rejected candidates newer than the choice that one kind of reason alone keeps out
    only: Dict[str, List[Candidate]] = {"driver": [], "glibc": [], "python": []}
    for c in rejected:
        # a driver upgrade may also bring a newer CUDA build of the chosen release (the hint names what
        # the plan would then pick: _driver_upgrades). The release is asked first: reading a rejected
        # candidate's reasons works them out (Candidate.defer), and most are older than the choice
        is_newer = better(c)
        if not is_newer and (chosen is None or c.release.version != chosen.release.version):
            continue
        code = c.reasons[0].code
        if not is_newer and code != "driver":
            continue
        if code in only and all(r.code == code for r in c.reasons):
            only[code].append(c)
    rank = ranking(release_index, machine)
    driver_only = only["driver"]
    if driver_only and not too_new:
        best = min(driver_only, key=rank)
        full, floor = best.fit.driver_full, best.fit.driver_floor
        if best.build.backend == "cuda" and full and best.fit.driver_last_branch and floor:
            out.append(f"use an R{best.fit.driver_last_branch} driver ≥ {floor} to use {name_of(best)} (minor-version "
                       f"compatibility: the GPU is driven by no later branch)")
        else:
            out += _driver_upgrades(ctx, chosen, driver_only, release_index)
    glibc_only = only["glibc"]
    if glibc_only:
        best = min(glibc_only, key=rank)
        out.append(f"{name_of(best)} needs glibc ≥ {best.fit.glibc_floor}: run it in a container "
                   "(`--format docker` writes a Dockerfile whose base image has it) or upgrade the OS")
    py_only = only["python"]
    if py_only and machine.python and machine.python_bits == 64:
        best = min(py_only, key=rank)
        pys = build_pythons(best, machine.platform)
        out.append(f"{name_of(best)} has wheels for Python {py_span(pys)}; with one of those it would fit")
    if machine.os == "windows":
        for g in machine.gpus_of("amd"):
            wsl_rels = [w for w in ctx.matrix.rocm_wsl if g.arch in w.gfx]
            if wsl_rels:
                out.append(f"AMD publishes ROCm wheels for the {g.name} under WSL2: `envcheck plan --gpu "
                           f"{g.arch} --wsl` plans that (ROCm {wsl_rels[-1].rocm} on WSL)")
    instead, routes = amd_routes(ctx.matrix, machine)
    out = instead + out
    fallback: List[str] = []
    if res.status == "no_official_build" and machine.os != "macos":
        for g in machine.served_gpus:
            if g.vendor == "amd" and machine.os == "linux" and not machine.wsl:
                out.append(
                    f"build torch from source for {g.arch}: PYTORCH_ROCM_ARCH={g.arch} (ROCm's and "
                    "PyTorch's build docs)"
                )
        # one source build serves every NVIDIA GPU of the machine: TORCH_CUDA_ARCH_LIST takes them all
        nv = list(dict.fromkeys((g.compute_capability, g.arch, g.name) for g in machine.served_gpus
                                if g.vendor == "nvidia"))
        if nv:
            caps = sorted(dict.fromkeys(f"{cc[0]}.{cc[1]}" if cc else arch for cc, arch, _ in nv),
                          key=lambda v: tuple(int(x) for x in v.split(".")) if v[0].isdigit() else (999,))
            names = ", ".join(dict.fromkeys(name for _, _, name in nv))
            out.append(f"build torch from source with TORCH_CUDA_ARCH_LIST=\"{';'.join(caps)}\" for the {names}")
            out += _one_gpu_only(res, ctx)
        if res.fallback:
            fallback.append(f"use the CPU build {name_of(res.fallback)} instead: re-run with --backend cpu")
    elif res.status == "no_build" and res.fallback:
        fallback.append(f"the CPU build {name_of(res.fallback)} would install: re-run with --backend cpu")
    return list(dict.fromkeys(out + routes + fallback))


def amd_routes(matrix: Matrix, machine: Machine) -> Tuple[List[str], List[str]]:
    """The ``matrices/amd-routes.toml`` rows for the machine's AMD GPUs, as sentences with their page:
    ``(instead, other)`` — rows that say this setup has no way (first), and the other routes and
    named unsupported workarounds."""
    instead: List[str] = []
    other: List[str] = []
    for g in machine.gpus_of("amd"):
        for r in matrix.amd_routes:
            if machine.os not in r.os or (r.wsl is not None and r.wsl != bool(machine.wsl)) or g.arch not in r.gfx:
                continue
            text = r.text.replace("{gpu}", g.name).replace("{arch}", g.arch) + (f" (source: {r.url})" if r.url else "")
            (instead if r.kind == "instead" else other).append(text)
    return instead, other


def _assumptions(res: Resolution, ctx: Context) -> List[str]:
    m = ctx.machine
    out: List[str] = []
    chosen = res.chosen
    served = m.served_gpus
    for g in m.unserved_gpus:
        kind = "integrated, " if g.integrated else ""
        why = ("an integrated GPU beside a discrete one" if g.integrated and not served[0].integrated
               else f"one build drives one vendor's GPUs and the plan is for the {served[0].name}")
        how = (f"chosen with {m.how['plan_gpu']}" if m.plan_gpu is not None and "plan_gpu" in m.how
               else "--for-gpu N|NAME plans for another one")
        out.append(f"the {g.name} ({kind}{VENDOR_NAMES.get(g.vendor, g.vendor)}) stays unused by torch: {why} "
                   f"({how})")
    if m.os == "linux" and not m.glibc:
        out.append("glibc not given: assumed new enough for each wheel's manylinux tag (give --glibc "
                   "or --distro to check it)")
    if chosen is None:
        return out
    built = ctx.matrix.jetpack_of_channel(chosen.build.channel) if chosen.build.tegra else None
    if built is not None and ctx.matrix.jetpack_of_machine(m.jetpack, m.distro) is None:
        gens = "; ".join(f"Ubuntu {j.distro.replace('ubuntu', '')} (L4T R{j.l4t}) → JetPack {j.major}"
                         for j in ctx.matrix.jetpacks)
        out.append(f"JetPack not given: planned for JetPack {built.major}; the generation follows the Jetson's "
                   f"L4T release and Ubuntu ({gens}) — --distro ubuntu20.04 plans for JetPack 5")
    if chosen.build.backend == "cuda" and not (m.nvidia_driver or m.cuda_driver_max):
        full, floor = chosen.fit.driver_full, chosen.fit.driver_floor
        side = "Windows" if ctx.windows_driver else "Linux"
        if full and chosen.fit.driver_last_branch:
            last = chosen.fit.driver_last_branch
            out.append(f"NVIDIA driver not given: {name_of(chosen)} needs a {side} driver ≥ {floor} on the R{last} "
                       f"branch ({last}.xx); `nvidia-smi` shows yours (--driver to check it)")
        elif full or floor:  # no toolkit driver on record for this side: the CUDA major's floor
            gpu = floor_from_gpus(ctx.matrix, chosen.build.cuda or "", ctx.windows_driver,
                                  [g for g in m.served_gpus if g.vendor == "nvidia"])
            first = f", the first driver for {gpu}," if gpu else ""
            out.append(f"NVIDIA driver not given: {name_of(chosen)} needs a {side} driver ≥ {full or floor}"
                       + (f" (≥ {floor}{first} under minor-version compatibility)" if full and floor and floor != full else "")
                       + "; `nvidia-smi` shows yours (--driver to check it)")
    if chosen.build.backend == "cuda" and m.cuda_driver_max and not m.nvidia_driver and chosen.fit.driver_full:
        full, floor = chosen.fit.driver_full, chosen.fit.driver_floor
        mvc = f" (≥ {floor} under minor-version compatibility)" if floor and floor != full else ""
        out.append(f"NVIDIA driver known only as CUDA ≤ {m.cuda_driver_max} (the CUDA version it supports, as "
                   f"nvidia-smi shows it): read as any driver of that CUDA release; {name_of(chosen)} needs ≥ "
                   f"{full}{mvc}, and an early driver of CUDA {m.cuda_driver_max} can be older — give the driver's "
                   "own version (`nvidia-smi --query-gpu=driver_version --format=csv,noheader`) to check it")
    if chosen.build.backend == "rocm" and chosen.build.rocm and not chosen.build.wsl:
        out.append(_amd_kernel_driver_assumption(chosen, ctx))
    rel = chosen.fit.wsl_release
    if rel is not None and rel.adrenalin_min and not m.amd_driver:
        given = m.how.get("amd_driver")  # a driver-store number (32.0.x) is not the Adrenalin release
        out.append((f"AMD Windows driver given as {given}, not as its Adrenalin release: "
                    if given else "AMD Windows driver not given: ")
                   + f"ROCm {rel.rocm} on WSL needs AMD Software: Adrenalin Edition ≥ {rel.adrenalin_min} "
                   + ("(AMD Software: System shows the release; --driver 25.x.y to check it)" if given
                      else "(--driver to check it)"))
    if not m.python and chosen.python:
        ships = distro_python(ctx.matrix, m)
        if ships and chosen.python == ships:
            out.append(f"Python not given: planned for Python {chosen.python}, the python3 "
                       f"{m.distro_name or m.distro} ships (--python to choose)")
        else:
            # the reason names only the rules that decided here: a release without torch.compile
            # (before 2.0) has no torch.compile Python range to respect
            compiles = bool(chosen.release.compile_python_max)
            out.append(f"Python not given: planned for Python {chosen.python} (the newest this build "
                       + ("has that torch.compile supports and the previous release had too" if compiles
                          else "has that the previous release had too")
                       + (f"; {m.distro_name or m.distro}'s python3 {ships} has no wheel here" if ships else "")
                       + "; --python to choose)")
    if m.os == "macos" and not m.macos:
        floor = chosen.fit.macos_floor
        mps = chosen.build.mps_min_macos if chosen.build.mps else None
        if floor or mps:
            out.append("macOS version not given: the wheel needs macOS ≥ " + (floor or "?")
                       + (f"; MPS (the Apple GPU) needs macOS ≥ {mps}" if mps else "") + " (--macos to check)")
    return out


def _amd_kernel_driver_assumption(chosen: Candidate, ctx: Context) -> str:
    """A native ROCm wheel bundles its ROCm's user space; the kernel driver is the host's, and nothing here
    compares it: name the kernel drivers AMD tests that user space on (matrices/rocm-libs.toml [[kernel_driver]])."""
    m = ctx.machine
    rocm = ".".join((chosen.build.rocm or "").split(".")[:2])
    have = (f"the amdgpu driver {m.amd_linux_driver} found is not compared with it" if m.amd_linux_driver
            else "AMD kernel driver not given")
    rows = sorted((k for k in ctx.matrix.kernel_drivers if rocm in k.user_space), key=lambda k: vkey(k.rocm))
    if rows:
        drivers = ", ".join(f"ROCm {k.rocm}" + (f" (amdgpu {k.amdgpu}.x)" if k.amdgpu else "") for k in rows)
        need = f"a host amdgpu kernel driver AMD tests ROCm {rocm} user space on (on record: those of {drivers})"
    else:
        known = sorted({v for k in ctx.matrix.kernel_drivers for v in k.user_space}, key=vkey)
        need = (f"a host amdgpu kernel driver for ROCm {rocm} user space, which AMD's kernel/user-space support "
                f"matrix on record does not list (it covers ROCm {known[0]}–{known[-1]}): the one AMD ships with "
                f"ROCm {rocm} is the safe choice" if known else f"the amdgpu kernel driver of ROCm {rocm}")
    return (f"{have}: {name_of(chosen)} needs {need}; `cat /sys/module/amdgpu/version` or `amd-smi version` shows "
            "yours — on an older one, --backend rocmX.Y plans a build for that ROCm")

