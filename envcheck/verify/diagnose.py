"""diagnose(Facts, Lock, Machine) → one :class:`Check` per verify check: a pure function.

Each check reads the facts a probe collected and decides ``pass`` / ``fail`` / ``skip`` / ``warn``.
A probe that raised, crashed or hung is a ``fail`` whose error text goes through the rules of
``matrices/diagnoses.toml`` (:mod:`envcheck.verify.rules`) for its cause and fix; the checks that
compare facts with the matrix (arch list vs GPU, driver vs CUDA, lock vs installed) say what is
wrong in their own words and ask the resolver for the build that would fix it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from envcheck.jsontypes import JSONObject
from envcheck.machine.model import Machine
from envcheck.matrix import Matrix
from envcheck.matrix.model import vkey
from envcheck.verify.context import Context, option_words, short_list, site_of
from envcheck.lock import Lock
from envcheck.verify.checks import BY_NAME, CHECKS
from envcheck.verify.facts import Facts, build_words, public_version, same_build
from envcheck.verify.rules import (
    HELPERS,
    Garbled,
    arch_report,
    companion_mismatch,
    load_rules,
    load_tolerances,
    match,
)

STATUSES = ("pass", "fail", "skip", "warn")


@dataclass
class Check:
    """One line of the verify report.

    Attributes:
        name: the check (:data:`envcheck.verify.checks.CHECKS`).
        status: ``pass`` | ``fail`` | ``skip`` | ``warn``.
        seconds: wall time of the probe behind it (0 for checks that only compare facts).
        detail: what was seen, and for a failure why it fails.
        fix: what to do ("" when nothing).
        rule: the diagnoses.toml rule that explained the failure, if any.
    """

    name: str
    status: str
    seconds: float = 0.0
    detail: str = ""
    fix: str = ""
    rule: str = ""

    def to_dict(self) -> JSONObject:
        d: JSONObject = {"name": self.name, "status": self.status, "seconds": round(self.seconds, 3),
             "detail": self.detail, "fix": self.fix}
        if self.rule:
            d["rule"] = self.rule
        return d


def diagnose(facts: Facts, lock: Optional[Lock] = None, machine: Optional[Machine] = None,
             matrix: Optional[Matrix] = None, checks: Optional[Sequence[str]] = None) -> List[Check]:
    """Judge ``facts`` (against ``lock`` and ``machine`` when given) check by check.

    Args:
        facts: collected or replayed facts.
        lock: the plan to compare with (the ``lock`` check skips without one).
        machine: the machine the facts come from (default: the one saved in the facts, else the
            lock's); supplies GPUs and the driver when torch cannot see them.
        matrix: the compatibility matrix (default: :func:`envcheck.matrix.load_matrix`).
        checks: which checks, in report order (default: all of :data:`CHECKS`).

    Returns:
        One :class:`Check` per requested check — and ``import_torch`` first, also when not asked
        for (``--checks matmul``, ``--skip import_torch``), if torch does not import (every other
        check would only skip) or its import warns (NumPy missing or outside the plan's range, what
        ``import torch`` printed, two copies of torch): that is about the environment every check
        ran in, and narrowing the checks must not hide it (breaker3 F10).
    """
    if matrix is None:
        from envcheck.matrix import load_matrix

        matrix = load_matrix()
    ctx = Context(facts, matrix, lock, machine)
    judge = _Judge(ctx)
    names = list(checks or CHECKS)
    imp = facts.run("import_torch")
    broken = (imp is not None and imp.get("outcome") != "ok") or (imp is None and facts.section("collector").get("error"))
    if broken and "import_torch" not in names:
        names.insert(0, "import_torch")  # the checks asked for cannot run: say why, as a failure
    out = [judge.check(name) for name in names]
    if "import_torch" not in names and imp is not None:
        said = judge.check("import_torch")
        if said.status == "warn":  # what the import warned holds for every check that ran
            out.insert(0, said)
    return judge.one_answer(out)


#: the variants of GPU builds (a lock pinning one expects torch to have a GPU backend built in)
GPU_VARIANTS = ("cu", "rocm", "xpu")


class _Judge:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.facts = ctx.facts
        self.rules = load_rules(ctx.matrix)
        self.tolerances = load_tolerances(ctx.matrix)
        self.installing: Set[str] = set()  # checks whose fix installs something

    # -- dispatch -------------------------------------------------------------------------------
    def check(self, name: str) -> Check:
        """The check ``name``, noting whether its fix says to install something (:meth:`one_answer`)."""
        self.ctx.installs = 0
        c = self._check(name)
        if self.ctx.installs:
            self.installing.add(name)
        return c

    def one_answer(self, checks: List[Check]) -> List[Check]:
        """With a lock the environment does not match, what to install is the lock's — one answer
        (newcomer6 #6: the lock said cu130, the torchvision check said ``torchvision==…+cpu``): every
        other check whose fix installs something says to install the lock's pins instead, and keeps
        its own finding. Fixes that install nothing (a driver, /dev/shm, a variable) stay."""
        if self.ctx.lock is None:
            return checks
        lock = next((c for c in checks if c.name == "lock"), None) or self.check("lock")
        if lock.status != "fail" or not lock.fix:
            return checks
        for c in checks:
            if c.name != "lock" and c.fix and c.status in ("fail", "warn") and c.name in self.installing:
                c.fix = f"This environment is not the lock's ({self.ctx.lock.path}); what to install is the lock's: {lock.fix}"
        return checks

    def _check(self, name: str) -> Check:
        spec = BY_NAME[name]
        own: Callable[[], Check] = getattr(self, spec.judge)
        if spec.probe is None:  # judges facts other probes collected
            return own()
        run = self.facts.run(name)
        col_error = self.facts.section("collector").get("error")
        if run is None and name == "import_torch" and col_error:
            return Check(name, "fail", detail=str(col_error),
                         fix="Give --python an interpreter that runs (Python ≥ 3.7): a venv's bin/python, a conda "
                             "env's python, or the environment folder itself.")
        if run is None:
            return Check(name, "skip", detail=self.not_run_reason(name))
        outcome = run.get("outcome")
        secs = float(run.get("seconds") or 0.0)
        if outcome == "skip":
            return Check(name, "skip", secs, run.get("reason") or "does not apply here")
        if outcome != "ok":
            return self.failure(name, run)
        c = own()
        c.seconds = secs
        return c

    def not_run_reason(self, name: str) -> str:
        imp = self.facts.run("import_torch")
        if imp is not None and imp.get("outcome") != "ok":
            return "not run: torch does not import (see import_torch)"
        col = self.facts.section("collector")
        if col.get("error"):
            if imp is not None:
                return f"not run: {col['error']}"
            return "not run: the interpreter could not run the collector (see import_torch)"
        return "not run (not in --checks, or not in these facts)"

    def build_unread(self) -> Optional[str]:
        """Why the build's facts (CUDA, arch list, driver) are unknown — ``"cuda_build did not run"``,
        ``"cuda_build failed"``, ``"torch does not import; see import_torch"`` — else ``None``."""
        run = self.facts.run("cuda_build")
        if run is not None and run.get("outcome") == "ok":
            return None
        imp = self.facts.run("import_torch")
        if imp is not None and imp.get("outcome") != "ok":
            return "torch does not import; see import_torch"
        return "cuda_build did not run" if run is None else "cuda_build failed"

    def failure(self, name: str, run: Dict[str, Any]) -> Check:
        """A probe that raised, crashed or hung: what happened, and the rule that explains it."""
        outcome = run.get("outcome")
        secs = float(run.get("seconds") or 0.0)
        err = run.get("error") or {}
        stderr = run.get("stderr") or ""
        if outcome == "crash":
            sig = run.get("signal")
            seen = (f"the check killed its process ({sig})" if sig else
                    f"the check ended its process ({run.get('exit') or 'no result'})")
        elif outcome == "timeout":
            seen = f"no result within {_num(run.get('timeout'))} s; the worker was killed"
        elif err.get("type") == "KeyboardInterrupt":
            seen = ("KeyboardInterrupt raised inside the check — by the code under test, not by you: envcheck's "
                    "workers run in their own session and never get your Ctrl-C")
        else:
            msg = (err.get("message") or "").strip()
            first = msg.splitlines()[0] if msg else ""
            seen = f"{err.get('type') or 'error'}: {first}" if first else (err.get("type") or "error")
        text = "\n".join(x for x in (err.get("message"), err.get("traceback"), stderr,
                                     f"envcheck: timed out after {_num(run.get('timeout'))} s" if outcome == "timeout" else "")
                         if x)
        hits = match(self.rules, text, self.ctx, check=name)
        tail = _last_lines(stderr, 3) if outcome == "crash" and stderr and not hits else ""
        if hits:
            f = hits[0]
            return Check(name, "fail", secs, f"{seen} — {f.cause}", f.fix, f.rule)
        pkg = name[: -len("_compat")] if name in ("torchvision_compat", "torchaudio_compat") else ""
        if pkg and companion_mismatch(self.ctx, pkg):
            # whatever the failure says ("'_OpNamespace' 'torchvision' object has no attribute 'nms'"),
            # a companion built for another torch is the cause the facts show
            self.ctx.groups = {"pkg": pkg}
            try:
                cause, fix = HELPERS["companion_cause"](self.ctx), HELPERS["companion_fix"](self.ctx)
            finally:
                self.ctx.groups = {}
            return Check(name, "fail", secs, f"{seen} — {cause}", fix,
                         "torchvision-op-missing" if pkg == "torchvision" else "")
        generic = GENERIC_FIX.get(outcome or "", "")
        limit = run.get("timeout")
        if outcome == "timeout" and isinstance(limit, (int, float)) and limit < SHORT_TIMEOUT:
            generic = SHORT_TIMEOUT_FIX.format(t=_num(limit), check=name)
        detail = seen + (f"; last stderr lines: {tail}" if tail else "")
        return Check(name, "fail", secs, detail, generic.format(check=name, py=self.ctx.py_command()))

    # -- per-check judgement of facts ------------------------------------------------------------
    def check_import_torch(self) -> Check:
        t = self.facts.torch
        detail = f"torch {t.get('version')} from {site_of(t.get('file'))}"
        copies = self.facts.packages("torch")
        loaded = public_version(t.get("version"))
        others = [d for d in copies if public_version(d.get("version")) != loaded]
        if len(copies) > 1 and others:
            listed = "; ".join(f"{d.get('version')} at {d.get('location')}" for d in copies)
            return Check("import_torch", "warn", detail=f"{detail}; {len(copies)} copies of torch are installed "
                         f"({listed}) — the first on sys.path wins",
                         fix=f"Remove the copies you do not use (`{self.ctx.py_command('-m', 'pip', 'uninstall', 'torch')}`, "
                             "~/.local, PYTHONPATH) so one torch is installed.")
        for text in t.get("warnings") or []:  # what `import torch` warned, when a family knows it
            hits = match(self.rules, str(text), self.ctx, check="import_torch")
            if hits:
                said = str(text).split(" (Triggered internally")[0].strip()[:200]
                return Check("import_torch", "warn", detail=f"{detail}; import torch warned: {said} — {hits[0].cause}",
                             fix=hits[0].fix, rule=hits[0].rule)
        outside = self.ctx.numpy_outside()  # the NumPy of the plan for this torch (matrices/numpy.toml)
        if outside:
            from envcheck.verify.rules import numpy_fix

            return Check("import_torch", "warn", detail=f"{detail}; {outside}", fix=numpy_fix(self.ctx),
                         rule="numpy-abi" if self.facts.packages("numpy") else "numpy-not-available")
        return Check("import_torch", "pass", detail=detail)

    def check_cuda_build(self) -> Check:
        b = self.facts.build
        ctx = self.ctx
        errs = b.get("errors") or {}
        detail = _build_summary(self.facts.torch_version, b)
        if not (b.get("cuda") or b.get("hip") or b.get("xpu")):
            vendors = {g.vendor for g in ctx.gpus()}
            gpus = ", ".join(f"{g.name} ({g.arch})" for g in ctx.gpus())
            if vendors & {"nvidia", "amd", "intel"}:
                return Check("cuda_build", "fail",
                             detail=f"{detail}, but this machine has {gpus}: torch cannot use it",
                             fix=HELPERS["cuda_build_fix"](ctx), rule="cpu-only-build")
            if "apple" in vendors and b.get("mps_built") is False:
                return Check("cuda_build", "fail",
                             detail=f"{detail}, without MPS (torch.backends.mps.is_built() is False), but this Mac "
                                    f"has {gpus}: torch cannot use it",
                             fix=HELPERS["install_fix"](ctx), rule="cpu-only-build")
            lock = ctx.lock
            if lock is not None and str(lock.variant).startswith(GPU_VARIANTS):  # newcomer6 #6
                return Check("cuda_build", "fail",
                             detail=f"{detail}, but the lock {lock.path} pins a GPU build "
                                    f"(torch {lock.expect.get('torch_version') or lock.torch}, {lock.variant})",
                             fix=HELPERS["install_fix"](ctx), rule="cpu-only-build")
            if "apple" in vendors and b.get("mps_available"):
                return Check("cuda_build", "pass", detail=detail + "; MPS (the Apple GPU) is available")
            return Check("cuda_build", "pass", detail=detail + "; no NVIDIA/AMD/Intel GPU on this machine")
        for key in ("cudnn", "nccl", "arch_list"):
            if key in errs:
                hits = match(self.rules, errs[key], ctx, check="cuda_build")
                if hits:
                    return Check("cuda_build", "fail", detail=f"{detail}; reading {key} failed: {hits[0].cause}",
                                 fix=hits[0].fix, rule=hits[0].rule)
                return Check("cuda_build", "warn", detail=f"{detail}; reading {key} failed: {errs[key]}")
        if not b.get("devices"):
            return Check("cuda_build", "pass", detail=f"{detail}; {self.no_device_reason()}")
        return Check("cuda_build", "pass", detail=detail)

    def no_device_reason(self, short: bool = False) -> str:
        """Why torch sees no GPU, with torch's own first sentence unless ``short``."""
        b = self.facts.build
        unread = self.build_unread()
        if unread:
            return f"unknown: the build was not read ({unread})"
        init = (b.get("errors") or {}).get("init", "")
        said = init.split(":", 1)[-1].strip().split(". ")[0].rstrip(".") if init else ""
        quote = f" (torch: \"{said}\")" if said and not short else ""
        if b.get("cuda"):
            drv = self.facts.driver
            if "no NVIDIA driver" in init or (drv.get("error") and not drv.get("version")):
                return "no NVIDIA driver is visible" + quote
            if init:
                return "no CUDA device is usable" + quote
            return "no CUDA device is visible (CUDA_VISIBLE_DEVICES?)"
        if b.get("hip"):
            return "no ROCm device is visible" + quote
        return "CPU-only build"

    def check_environment(self) -> Check:
        """Wheels of two CUDA majors, CUDA libraries loaded from outside the wheels that provide
        them, a small /dev/shm in a container — each named with the family it causes."""
        from envcheck.verify.evidence import host_warnings, limit, mixed_majors, shadowing, shm_mib, shm_small
        from envcheck.verify.rules import HELPERS

        f = self.facts
        data = f.probe_data("environment")
        problems: List[Tuple[str, str]] = []  # (detail, family)
        for mm in mixed_majors(f):
            listed = "; ".join(f"cu{k}: {', '.join(v)}" for k, v in sorted(mm.majors.items()))
            family = {"nvidia-nccl": "nccl-symbol-mismatch", "nvidia-nvjitlink": "nvjitlink-symbol-mismatch",
                      "nvidia-cusparse": "nvjitlink-symbol-mismatch"}.get(mm.base, "cublas-symbol-mismatch")
            problems.append((f"{mm.base} is installed for two CUDA majors ({listed}); only one loads, and "
                             f"torch{'' if not mm.keep else ' uses CUDA ' + mm.keep} needs its own", family))
        for soname, path in shadowing(f):
            family = ("nccl-symbol-mismatch" if "nccl" in soname else
                      "nvjitlink-symbol-mismatch" if "nvJitLink" in soname or "cusparse" in soname else
                      "cudnn-not-initialized" if "cudnn" in soname else "cublas-symbol-mismatch")
            problems.append((f"{soname} was loaded from {path}, not from its nvidia-* wheel: a copy on "
                             "LD_LIBRARY_PATH or in the system's library path shadows the wheel's", family))
        accel = data.get("accelerators") or {}
        seen = ", ".join(k for k, v in accel.items() if v) or "none"
        libs = data.get("after_cuda") or data.get("after_import")
        summary = (f"accelerators torch can drive: {seen}; {len(libs)} shared objects loaded"
                   if libs is not None else f"accelerators torch can drive: {seen}")
        pkgs = self.facts.section("packages")
        summary += f"; {sum(len(v) for v in pkgs.values() if isinstance(v, list))} distributions recorded"
        if problems:
            self.ctx.groups = {}
            fix = HELPERS["cuda_symbol_fix"](self.ctx)
            return Check("environment", "fail", detail="; ".join(p for p, _ in problems) + f" ({summary})",
                         fix=fix, rule=problems[0][1])
        plat = self.facts.section("platform")
        mib = shm_mib(self.facts)
        warns = host_warnings(self.facts)
        if shm_small(self.facts, self.ctx.matrix) and plat.get("container"):
            runtime = plat.get("container_runtime") or "a container"
            warns.append((f"/dev/shm is {mib} MiB in {runtime}, under {limit(self.ctx.matrix, 'shm_small_mib'):g} "
                          "MiB (diagnoses.toml limit shm_small_mib): NCCL's shared-memory transport and "
                          "DataLoader workers need far more (Docker's default is 64 MB)",
                          "Start the container with `--shm-size=16g` (or `--ipc=host`); in Kubernetes mount an "
                          "emptyDir with medium: Memory on /dev/shm.", "nccl-shm"))
        if warns:
            return Check("environment", "warn", detail="; ".join(d for d, _, _ in warns) + f" ({summary})",
                         fix=" ".join(f for _, f, _ in warns), rule=warns[0][2])
        return Check("environment", "pass", detail=summary)

    def check_arch_compat(self) -> Check:
        run = self.facts.run("cuda_build")
        if run is None or run.get("outcome") != "ok":
            return Check("arch_compat", "skip", detail="no build facts (cuda_build did not run)")
        b = self.facts.build
        if not (b.get("cuda") or b.get("hip")):
            return Check("arch_compat", "skip", detail="CPU-only build: no GPU kernels to match")
        rows = arch_report(self.ctx)
        if not rows:
            return Check("arch_compat", "skip", detail=f"{self.no_device_reason()}; arch list "
                         f"{short_list(b.get('arch_list') or [], 14)}")
        bad = [r for r in rows if r["serves"] is None]
        arch = b.get("arch_list") or []
        if bad:
            r = bad[0]
            cap = f", compute capability {r['capability']}" if r.get("capability") else ""
            ctx = self.ctx
            ctx.groups = {"sm": str(r["arch"])}
            try:
                fix = HELPERS["arch_fix"](ctx)
            except Garbled as exc:  # a capability no GPU has ([0, 0]): say so, suggest nothing
                fix = f"The facts look edited: {exc}."
            finally:
                ctx.groups = {}
            why = ("a cubin runs only on GPUs of its own major with an equal or higher minor, PTX only on newer "
                   "GPUs" if not str(r["arch"]).startswith("gfx") else "an AMD target runs only code built for it")
            return Check("arch_compat", "fail",
                         detail=f"{r['name']} is {r['arch']}{cap}; torch {self.facts.torch_version} carries arch list "
                                f"{short_list(arch, 14)} — nothing in it runs on {r['arch']} ({why}). "
                                "torch.cuda.is_available() can still be True.",
                         fix=fix)
        gapped = self._blas_gapped(rows)
        if gapped is not None:
            return gapped
        served = "; ".join(f"{r['name']} {r['arch']}: {'PTX ' if r['serves'] == 'ptx' else ''}{r['by']}" for r in rows)
        if any(r["serves"] == "ptx" for r in rows):
            return Check("arch_compat", "warn", detail=f"{served} — served only by PTX, JIT-compiled at first "
                         "use (slow first start; needs the full toolkit driver)")
        return Check("arch_compat", "pass", detail=served)

    def _blas_gapped(self, rows: List[Dict[str, Any]]) -> Optional[Check]:
        """arch_compat's failure for a GPU the installed build lists but whose bundled library has no code
        for it — ROCm's rocBLAS (matrices/rocm-libs.toml), NVIDIA's cuDNN (matrices/cuda.toml
        [[cudnn_floor]]): the resolver's rules; the fix is the plan's build."""
        from envcheck.resolve.rules import blas_gap, cudnn_floor

        build_row = self.ctx.build_row()
        if build_row is None:
            return None
        for r in rows:
            arch = str(r["arch"])
            floor = cudnn_floor(self.ctx.matrix, build_row, arch)
            gap = None if floor is not None else blas_gap(self.ctx.matrix, build_row, arch)
            if floor is not None:
                why = (f"cuDNN it bundles ({build_row.cudnn}) supports {floor.sm_min} and newer: convolutions fail "
                       f"(CUDNN_STATUS_ARCH_MISMATCH; {', '.join(floor.source[:1])})")
            elif gap is not None:
                why = (f"rocBLAS it bundles (ROCm {build_row.rocm}; from {gap.rocm_min} on) has no Tensile library for "
                       f"it: the first matrix multiply aborts ('rocBLAS error: Cannot read TensileLibrary.dat … for "
                       f"GPU arch : {arch}'; {', '.join(gap.source[:2])})")
            else:
                continue
            self.ctx.groups = {"sm": arch}
            try:
                fix = HELPERS["arch_fix"](self.ctx)
            finally:
                self.ctx.groups = {}
            return Check("arch_compat", "fail", fix=fix,
                         detail=f"{r['name']} is {arch}; torch {self.facts.torch_version} lists it, but the {why}")
        return None

    def check_driver(self) -> Check:
        ctx = self.ctx
        cuda = self.facts.torch_cuda
        run = self.facts.run("cuda_build")
        if run is None and self.facts.run("import_torch") is None:
            return Check("driver", "skip", detail=self.not_run_reason("driver"))
        if not cuda:
            if not self.facts.torch and self.build_unread():
                return Check("driver", "skip", detail=f"unknown: the build was not read ({self.build_unread()}), "
                                                      "so whether it needs an NVIDIA driver is not known")
            return Check("driver", "skip", detail="not a CUDA build: no NVIDIA driver needed")
        drv, mx = ctx.nvidia_driver, ctx.cuda_driver_max
        if ctx.here.tegra:  # the resolver's rule (check_driver): a Jetson's driver is its JetPack's
            return Check("driver", "skip", detail=f"a Jetson: its driver{f' ({drv})' if drv else ''} comes with "
                                                  f"JetPack (the L4T BSP) and is not on the desktop driver scale; "
                                                  f"whether JetPack runs CUDA {cuda} is the GPU checks'")
        if not drv and not mx:
            unread = self.build_unread()
            why = (f"the NVIDIA driver is unknown (it is read with the build, and {unread})" if unread
                   else self.no_device_reason(short=True))
            return Check("driver", "skip", detail=f"{why}: nothing to compare CUDA {cuda} with")
        full, floor = ctx.driver_floors(cuda)
        side = "Windows" if ctx.windows_driver else "Linux"
        have = f"{side} driver {drv}" if drv else f"a driver that supports CUDA ≤ {mx}"
        if drv and (full or floor):
            if full and vkey(drv) >= vkey(full):
                return Check("driver", "pass", detail=f"{have} ≥ {full}: full CUDA {cuda} support")
            if full is None and floor and vkey(drv) >= vkey(floor):
                return Check("driver", "pass", detail=f"{have} ≥ {floor} (CUDA {cuda.split('.')[0]}.x driver floor)")
            if floor and vkey(drv) >= vkey(floor):
                return Check("driver", "warn",
                             detail=f"{have} is older than {full}, the first CUDA {'.'.join(cuda.split('.')[:2])} driver; it runs this "
                                    f"build under minor-version compatibility (≥ {floor}): no PTX JIT, limited features",
                             fix=ctx.full_support_fix(cuda, full))
        elif mx:
            mm = ".".join(cuda.split(".")[:2])
            if vkey(mx) >= vkey(mm):
                return Check("driver", "pass", detail=f"{have}; this build uses CUDA {cuda}")
            if floor and vkey(mx).release[0] == vkey(mm).release[0]:
                return Check("driver", "warn", detail=f"{have}; CUDA {cuda} runs under minor-version compatibility",
                             fix=ctx.full_support_fix(cuda, full or floor))
        else:
            return Check("driver", "warn", detail=f"{have}; no driver minimum on record for CUDA {cuda}")
        ctx.groups = {"found": None}
        try:
            fix = HELPERS["driver_fix"](ctx)
        finally:
            ctx.groups = {}
        need = f"≥ {floor}" if floor else f"≥ {full}"
        return Check("driver", "fail", detail=f"{have} is too old for CUDA {cuda} (torch {self.facts.torch_version}): "
                     f"it needs {need}" + (f"; fully supported from {full}" if full and floor else ""), fix=fix)

    def check_lock(self) -> Check:
        lock = self.ctx.lock
        if lock is None:
            return Check("lock", "skip", detail="no --lock given")
        if self.facts.run("import_torch") is None or not self.facts.torch:
            return Check("lock", "skip", detail=self.not_run_reason("lock"))
        found = lock_differences(self.ctx, lock)
        diffs = [msg for msg, fatal, _ in found if fatal]
        notes = [msg for msg, fatal, _ in found if not fatal]
        missing = [pkg for _, fatal, pkg in found if fatal and pkg]
        exp = lock.expect
        elsewhere = _lock_machine_differs(self.ctx, lock)
        if not diffs:
            detail = (f"matches {lock.path}: torch {exp.get('torch_version')} ({exp.get('variant')})"
                      + (f", Python {exp['python']}" if exp.get("python") else "")
                      + (f" (the lock was made for another machine: {elsewhere})" if elsewhere else ""))
            if notes:
                return Check("lock", "warn", detail=detail + "; but " + "; ".join(notes),
                             fix="Install what the lock names beside torch if you use it: " + self.ctx.pip_command(
                                 [p for p in lock.requirements if not p.startswith("torch==")], lock.index_option,
                                 False) + ".")
            return Check("lock", "pass", detail=detail)
        absent = set(missing) | {pkg for _, fatal, pkg in found if not fatal and pkg}
        detail = f"differs from {lock.path}: " + "; ".join(diffs + notes)
        if elsewhere:  # the reason first: the lock records the machine it was planned for
            detail = (f"differs from {lock.path}, which was made for another machine ({elsewhere}) — that is why "
                      "its pins are not this machine's: " + "; ".join(diffs + notes))
        if len(missing) == len(diffs):  # only packages the lock names are missing: install them, from its lines
            wanted = [p for p in lock.requirements if _requirement_name(p) in absent]
            return Check("lock", "fail", detail=detail,
                         fix=f"Install what the lock pins: {self.ctx.pip_command(wanted, lock.index_option, False)}.")
        return Check("lock", "fail", detail=detail,
                     fix=self._reinstall_fix(lock, any(d.startswith("python:") for d in diffs)))

    def _reinstall_fix(self, lock: Lock, other_python: bool) -> str:
        """The fix of an environment that is not the lock's, in the order a person does it: another
        machine's lock first (plan for this one), then the lock's Python, the install, its post-install steps."""
        ctx, exp = self.ctx, lock.expect
        parts = []
        elsewhere = _lock_machine_differs(ctx, lock)
        if elsewhere:
            parts.append(f"This lock is for another machine ({elsewhere}): its wheels and steps are that machine's — "
                         "plan for this one (`envcheck plan` here) and verify against that lock; on the lock's machine:")
        if other_python:
            py = exp.get("python")
            parts.append(f"make an environment with Python {py} (the lock's wheels are for {py}; this interpreter is "
                         f"{ctx.python}), then, with that environment's python:")
        if other_python or elsewhere:  # not this interpreter: the lock's own lines, for the python of that place
            parts.append("`" + ctx.command("python", "-m", "pip", "install", *lock.requirements,
                                           *option_words(lock.index_option)) + "`")
        else:
            parts.append(f"reinstall what the lock pins: {ctx.pip_command(lock.requirements, lock.index_option)} "
                         f"(or `{ctx.py_command('-m', 'pip', 'install', '--force-reinstall', '-r', 'requirements.txt')}` "
                         "from the same plan)")
        if exp.post_install:
            parts[-1] += ";"
            parts.append(f"then the lock's post-install steps, in order: {', '.join(exp.post_install)} (their commands "
                         "are the lock's [[post_install]] shell; the plan's install.sh runs them)")
        text = " ".join(parts)
        return text[0].upper() + text[1:] + "."

    def check_allocation(self) -> Check:
        rows = self.facts.probe_data("allocation").get("devices") or []
        bad = [r for r in rows if not r.get("ok")]
        text = "; ".join(_alloc_text(r) for r in rows)
        if bad:
            return Check("allocation", "fail", detail=f"wrong contents after write/read: {text}",
                         fix="The device returned wrong data: check the GPU with `nvidia-smi -q` (ECC errors, "
                             "Xid messages in `dmesg`) and the driver.")
        gpu = any(r.get("device") != "cpu" for r in rows)
        return Check("allocation", "pass", detail=text + ("" if gpu else f"; {self._no_gpu_note()}"))

    def _no_gpu_note(self) -> str:
        b = self.facts.build
        return f"CPU form only: {self.no_device_reason(short=True)}" if (b.get("cuda") or b.get("hip")) else "CPU form (CPU build)"

    def _numeric(self, name: str, rows: List[Dict[str, Any]], label: str) -> Check:
        bad, shown = [], []
        for r in rows:
            where = f"{r.get('device')} {r.get('dtype')}"
            if r.get("unsupported"):
                shown.append(f"{where} unsupported")
                continue
            err = r.get("rel_error")
            tol = self.tolerances.get((name, r.get("dtype")))
            bound = tol.rel_error if tol else None
            if err is None or r.get("nonzero") is False or (bound is not None and err > bound):
                what = "not finite" if err is None else ("all zeros" if r.get("nonzero") is False else f"{err:.1e}")
                bad.append(f"{where}: relative error {what}" + (f" > {bound:g}" if bound is not None else ""))
            else:
                shown.append(f"{where} {err:.1e}")
        if bad:
            return Check(name, "fail", detail=f"{label} gave wrong results: " + "; ".join(bad),
                         fix=NUMERIC_FIX)
        gpu = any(r.get("device") != "cpu" for r in rows)
        note = "" if gpu else f"; {self._no_gpu_note()}"
        return Check(name, "pass", detail=f"{label} vs float64 reference, relative error: " + ", ".join(shown) + note)

    def check_matmul(self) -> Check:
        return self._numeric("matmul", self.facts.probe_data("matmul").get("results") or [], "256×256 matmul")

    def check_cudnn_conv(self) -> Check:
        data = self.facts.probe_data("cudnn_conv")
        rows = data.get("results") or []
        c = self._numeric("cudnn_conv", rows, "conv2d 4×8×32×32 (3×3)")
        libs = sorted({str(r.get("library")) for r in rows if r.get("device") != "cpu"})
        if libs:
            c.detail += f" ({', '.join(libs)}" + (f" {_cudnn_text(data['cudnn'])}" if data.get("cudnn") else "") + ")"
        return c

    def check_stream_sync(self) -> Check:
        rows = self.facts.probe_data("stream_sync").get("results") or []
        bad = [r for r in rows if r.get("max_abs_error") is None or r["max_abs_error"] > 0]
        text = "; ".join(f"{r.get('device')}: pinned={r.get('pinned')}, max error {r.get('max_abs_error')}" for r in rows)
        if bad:
            return Check("stream_sync", "fail", detail=f"data changed across a non_blocking copy on a side stream: {text}",
                         fix="Results raced their copies: check the driver (`nvidia-smi`), and run "
                             "`CUDA_LAUNCH_BLOCKING=1` to see whether the failure moves.")
        return Check("stream_sync", "pass", detail=f"pinned copy on a side stream, event wait, data intact ({text})")

    def check_torch_compile(self) -> Check:
        data = self.facts.probe_data("torch_compile")
        c = self._numeric("torch_compile", data.get("results") or [], "torch.compile(sin(x) @ y + cos(y))")
        return c

    def check_distributed(self) -> Check:
        d = self.facts.probe_data("distributed")
        ranks = d.get("ranks") or []
        expected = d.get("expected")
        desc = f"{d.get('backend')} all_reduce across {d.get('world_size')} processes ({d.get('start_method')})"
        if d.get("hung_ranks"):
            run = {"outcome": "timeout", "timeout": d.get("timeout"), "seconds": 0}
            c = self.failure("distributed", run)
            c.detail = (f"{desc}: rank(s) {d['hung_ranks']} did not finish within {_num(d.get('timeout'))} s — "
                        + c.detail.split(" — ", 1)[-1])
            return c
        errors = [f"rank {r.get('rank')}: {r['error']}" for r in ranks if r.get("error")]
        if errors:
            hits = match(self.rules, "\n".join(errors), self.ctx, check="distributed")
            return Check("distributed", "fail", detail=f"{desc} failed: " + "; ".join(errors)[:600]
                         + (f" — {hits[0].cause}" if hits else ""), fix=hits[0].fix if hits else
                         "Run it with TORCH_DISTRIBUTED_DEBUG=DETAIL (and NCCL_DEBUG=INFO) to see where it fails.")
        wrong = [r for r in ranks if r.get("values") != [expected] * len(r.get("values") or [0])]
        if wrong or not ranks:
            return Check("distributed", "fail", detail=f"{desc}: expected {expected} everywhere, got "
                         + "; ".join(f"rank {r.get('rank')}: {r.get('values', r.get('exitcode'))}" for r in ranks),
                         fix="A collective returned wrong data: rerun with NCCL_DEBUG=INFO; on one machine try "
                             "NCCL_P2P_DISABLE=1 to rule out peer-to-peer copies.")
        return Check("distributed", "pass", detail=f"{desc}: {expected} on every rank")

    def _companion(self, pkg: str) -> Check:
        name = f"{pkg}_compat"
        d = self.facts.probe_data(name)
        if pkg == "torchvision":
            bad = [r for r in d.get("nms") or [] if r.get("keep") != r.get("expected")]
            op = "torchvision.ops.nms"
        else:
            o = d.get("op")
            bad = [o] if o and (o.get("max_abs_error") is None or o["max_abs_error"] > 1e-6) else []
            op = o.get("name") if o else "no op run (torchaudio.functional.lfilter missing)"
        self.ctx.groups = {"pkg": pkg}
        try:
            cause = HELPERS["companion_cause"](self.ctx)
            fix = HELPERS["companion_fix"](self.ctx)
        finally:
            self.ctx.groups = {}
        if bad:
            return Check(name, "fail", detail=f"{op} gave wrong results: {bad} — {cause}", fix=fix)
        version = d.get("version")
        want = _pairs_with(self.ctx, pkg, version)
        loaded = public_version(self.facts.torch_version)
        if want and loaded and want != loaded:
            return Check(name, "warn", detail=f"{pkg} {version} imports and {op} runs, but {cause}", fix=fix)
        return Check(name, "pass", detail=f"{pkg} {version}: {op} runs" + (f" (pairs with torch {want})" if want else ""))

    def check_torchvision_compat(self) -> Check:
        return self._companion("torchvision")

    def check_torchaudio_compat(self) -> Check:
        return self._companion("torchaudio")

    def check_wsl_libhsa(self) -> Check:
        d = self.facts.probe_data("wsl_libhsa")
        bundled = d.get("bundled") or []
        if bundled:
            return Check("wsl_libhsa", "fail",
                         detail=f"the torch wheel bundles {', '.join(bundled)}; under WSL it must use the runtime "
                                "in /opt/rocm, which reaches the GPU through /dev/dxg",
                         fix=HELPERS["libhsa_fix"](self.ctx))
        return Check("wsl_libhsa", "pass", detail=f"no bundled libhsa-runtime64.so in {d.get('libdir')}")


def _pairs_with(ctx: Context, pkg: str, version: Optional[str]) -> Optional[str]:
    if not version:
        return None
    pub = public_version(version)
    for r in ctx.matrix.releases:
        if public_version(getattr(r, pkg, "")) == pub:
            return r.version
    return None


def lock_differences(ctx: Context, lock: Lock) -> List[Tuple[str, bool, Optional[str]]]:
    """Each way the installed environment differs from ``lock``: ``(message, fatal, package)``,
    ``package`` naming a package the lock pins that is not installed at all — fatal like a wrong
    version (newcomer3 #10); the NumPy the lock names but that is missing is not fatal (a warning).
    ``[]`` = matches."""
    f = ctx.facts
    exp = lock.expect
    out: List[Any] = []
    have_v = f.torch_version or ""
    want_v = str(exp.get("torch_version", ""))
    if public_version(have_v) != public_version(want_v):
        out.append((f"torch: lock {want_v}, installed {have_v}", True, None))
    want_var = str(exp.get("variant", ""))
    have_var = ctx.variant or ""
    if want_var and have_var != want_var and not have_var.startswith(want_var + "."):
        out.append((f"variant: lock {want_var}, installed {have_var or 'unknown'}", True, None))
    if exp.get("python") and ctx.python and exp["python"] != ctx.python:
        out.append((f"python: lock {exp['python']}, this interpreter {ctx.python}", True, None))
    b = f.build
    if f.run("cuda_build") is not None and b:
        if exp.get("cuda") and b.get("cuda") and not str(b["cuda"]).startswith(str(exp["cuda"])):
            out.append((f"CUDA: lock {exp['cuda']}, torch.version.cuda {b['cuda']}", True, None))
        if exp.get("cudnn_version") and b.get("cudnn") and int(b["cudnn"]) != int(exp["cudnn_version"]):
            out.append((f"cuDNN: lock {exp.get('cudnn')} ({exp['cudnn_version']}), loaded {_cudnn_text(b['cudnn'])}", True, None))
        if exp.get("nccl") and b.get("nccl") and str(b["nccl"]) != str(exp["nccl"]):
            out.append((f"NCCL: lock {exp['nccl']}, loaded {b['nccl']}", True, None))
        want_arch = set(exp.get("arch_list") or [])
        have_arch = set(b.get("arch_list") or [])
        if want_arch and have_arch and not want_arch <= have_arch:
            out.append((f"arch list lacks {short_list(sorted(want_arch - have_arch))} the lock expects", True, None))
    for pkg in ("torchvision", "torchaudio"):
        if not exp.get(pkg):
            continue
        run = f.run(f"{pkg}_compat") or {}
        have = (run.get("data") or {}).get("version") or next((d.get("version") for d in f.packages(pkg)), None)
        if not have and (run.get("outcome") == "skip" or "packages" in f.data):
            out.append((f"{pkg}: lock {exp[pkg]}, not installed", True, pkg))
        elif have and public_version(have) != public_version(str(exp[pkg])):
            out.append((f"{pkg}: lock {exp[pkg]}, installed {have}", True, None))
        elif have and not same_build(have, str(exp[pkg])):  # same release, another build (newcomer5 #1)
            out.append((f"{pkg}: lock {exp[pkg]}, installed {have} — {build_words(have)}, not the lock's",
                        True, None))
    if exp.get("numpy") and "packages" in f.data:  # the NumPy the plan installs (matrices/numpy.toml)
        from envcheck.verify.context import satisfies

        dists = f.packages("numpy")
        have = str(dists[0].get("version") or "") if dists else ""
        if not have:
            out.append((f"numpy: lock {exp['numpy']}, not installed (torch warns at import; .numpy()/from_numpy fail)",
                        False, "numpy"))
        elif satisfies(have, str(exp["numpy"])) is False:  # a torch built against NumPy 1 cannot use NumPy 2
            out.append((f"numpy: lock {exp['numpy']}, installed {have}", True, None))
    return out


def _requirement_name(line: str) -> str:
    """``torch==2.13.0+cpu`` → ``torch``; ``numpy<2`` → ``numpy`` (a line packaging cannot read: ``""``)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(line).name
    except InvalidRequirement:
        return ""


def _lock_machine_differs(ctx: Context, lock: Lock) -> str:
    """``"Linux x86_64 (WSL2); this one: Linux x86_64"`` when the collected facts show another OS, CPU or
    WSL than the machine the lock was planned for, and the GPUs of both (``"Linux x86_64, GeForce RTX 4090
    (sm_89); this one: Linux x86_64, no GPU"``) when theirs differ from the ones seen here (newcomer5 #9: the
    lock records its target; a lock for another GPU is why its pins are not this machine's); ``""`` when they
    match or are not known."""
    theirs, f = lock.machine, ctx.facts
    if theirs is None or not f.os:
        return ""
    here = ctx.here
    other_gpus = _gpu_kinds(here) != _gpu_kinds(theirs)
    differs = (here.os != theirs.os or here.arch != theirs.arch
               or (f.wsl is not None and here.wsl != theirs.wsl) or other_gpus)
    if not differs:
        return ""
    if not other_gpus:
        return f"{_where(theirs)}; this one: {_where(here)}"
    return f"{_where(theirs)}, {_gpus_text(theirs)}; this one: {_where(here)}, {_gpus_text(here)}"


def _gpu_kinds(m: Machine) -> Set[Tuple[str, str]]:
    return {(g.vendor, g.arch) for g in m.served_gpus}


def _gpus_text(m: Machine) -> str:
    from envcheck.machine.model import gpu_labels

    return ", ".join(gpu_labels(m.served_gpus)) or "no GPU seen"


def _where(m: Machine) -> str:
    return m.describe().split(", ", 1)[0]


def _build_summary(version: Optional[str], b: Dict[str, Any]) -> str:
    """``torch 2.14.1+cu130, CUDA 13.0, cuDNN 9.24.0, NCCL 2.30.7, arch list sm_75, …``."""
    backend = next((f"{label} {b[key]}" for key, label in (("cuda", "CUDA"), ("hip", "ROCm/HIP"), ("xpu", "XPU"))
                    if b.get(key)), "CPU-only build (torch.version.cuda is None)")
    extras = (("cudnn", lambda v: f"cuDNN {_cudnn_text(v)}"), ("nccl", lambda v: f"NCCL {v}"),
              ("arch_list", lambda v: f"arch list {short_list(v, 12)}"))
    return ", ".join([f"torch {version}", backend] + [fmt(b[key]) for key, fmt in extras if b.get(key)])


def _cudnn_text(v: Any) -> str:
    """``90701`` → ``"9.7.1"``, ``8902`` → ``"8.9.2"`` (the CUDNN_VERSION encodings)."""
    try:
        n = int(v)
    except (TypeError, ValueError):
        return str(v)
    if n >= 90000:
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"


def _alloc_text(r: Dict[str, Any]) -> str:
    s = f"{r.get('device')}: {r.get('mib')} MiB written and read back"
    if r.get("total_mib"):
        s += f" (free {r.get('free_mib')} of {r['total_mib']} MiB)"
    return s


def _num(x: Any) -> str:
    return f"{x:g}" if isinstance(x, (int, float)) else str(x if x is not None else "?")


def _last_lines(text: str, n: int) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:])[-600:]


NUMERIC_FIX = ("Wrong numbers from a kernel usually mean a build whose code does not fit this GPU (see arch_compat), "
               "a driver problem, or failing hardware: check arch_compat and driver first, then `nvidia-smi -q` "
               "(ECC, Xid errors in `dmesg`).")

#: A timeout (seconds, as scaled per check) below which running out of it says more about the
#: budget than about the check: starting Python and importing torch alone take about a second.
SHORT_TIMEOUT = 1.0

SHORT_TIMEOUT_FIX = ("The timeout ({t} s) is too small to tell a slow check from a hung one: rerun with the "
                     "default, `envcheck verify --checks {check}` (60 s per check), or more.")

GENERIC_FIX = {
    "crash": ("Run the check alone to see the native stack: `{py} -X faulthandler -c \"import torch; ...\"`, "
              "or `envcheck verify --checks {check} --json` and read the stderr in its facts."),
    "timeout": ("The check hung: run `envcheck verify --checks {check} --timeout 600` to tell slow from stuck; "
                "for GPU checks look at `nvidia-smi` (a hung or busy GPU) and `dmesg`."),
    "error": "",
}
