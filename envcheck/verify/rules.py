"""The diagnosis rules of ``matrices/diagnoses.toml``: match an error text, render cause and fix.

A rule's ``cause`` and ``fix`` are templates. ``{name}`` is a named group of the rule's pattern, or
one of the :data:`HELPERS` below: small pure functions of the :class:`~envcheck.verify.context.Context`
that turn facts into words — the installed torch, the machine's glibc, the build the resolver would
pick instead. Every helper returns a sentence that still reads well when the facts are unknown
(``envcheck explain`` on a bare message).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from envcheck.errors import DataFileError
from envcheck.matrix import Matrix
from envcheck.matrix.model import Diagnosis, Tolerance, vkey
from envcheck.verify.context import Context, gfx_of, short_list, site_of, sm_of
from envcheck.verify.facts import build_words, local_label, public_version, variant_of

RULES_FILE = "diagnoses.toml"


@dataclass(frozen=True)
class Finding:
    """A rule that matched: its id, the text it matched, and the rendered cause and fix."""

    rule: str
    matched: str
    cause: str
    fix: str
    source: tuple = ()
    garbled: bool = False  # the text matched, but a value in it no real message has: no conclusion
    unknown: bool = False  # the text matched, but names what envcheck's data is too old to know: no conclusion

    def to_dict(self) -> Dict[str, object]:
        d: Dict[str, object] = {"rule": self.rule, "matched": self.matched, "cause": self.cause, "fix": self.fix,
                                "source": list(self.source)}
        if self.garbled:
            d["garbled"] = True
        if self.unknown:
            d["unknown"] = True
        return d


def load_rules(matrix: Matrix) -> List[Diagnosis]:
    """The rules in file order, each template checked against its groups and :data:`HELPERS`.

    Raises:
        DataFileError: a template names a field that is neither a group nor a helper.
    """
    rows = matrix.files.get(RULES_FILE, {}).get("diagnosis", [])
    path = matrix.directory / RULES_FILE
    for i, r in enumerate(rows):
        groups = set(re.compile(r.pattern).groupindex)
        for key in ("cause", "fix"):
            for field_name in template_fields(getattr(r, key)):
                if field_name not in groups and field_name not in HELPERS:
                    raise DataFileError(path, f"diagnosis[{i}].{key}",
                                        f"unknown field {{{field_name}}}: not a group of the pattern "
                                        f"({', '.join(sorted(groups)) or 'none'}) nor a helper in "
                                        "envcheck/verify/rules.py")
    return rows


def load_tolerances(matrix: Matrix) -> Dict[tuple, Tolerance]:
    """``{(check, dtype): Tolerance}`` from diagnoses.toml."""
    rows = matrix.files.get(RULES_FILE, {}).get("tolerance", [])
    return {(t.check, t.dtype): t for t in rows}


def template_fields(text: str) -> List[str]:
    return [f for _, f, _, _ in string.Formatter().parse(text) if f]


def applies(rule: Diagnosis, check: Optional[str], wsl: Optional[bool], os: Optional[str] = None) -> bool:
    """Whether ``rule`` may explain a text for ``check`` on a machine with this WSL / platform
    (``None``: unknown). A rule for one platform needs the platform known (from the facts, the
    text's own paths, or a machine)."""
    if check is not None and rule.checks and check not in rule.checks:
        return False
    if rule.wsl is not None and wsl is not None and rule.wsl != wsl:
        return False
    return not rule.os or rule.os == os


def match(rules: List[Diagnosis], text: str, ctx: Context, check: Optional[str] = None,
          first: bool = True) -> List[Finding]:
    """Rules whose pattern is found in ``text`` (for ``check``, or any), rendered with ``ctx``.

    With WSL unknown (``explain`` off WSL still knows; a bare replay may not), a WSL-only rule and
    its non-WSL twin would both match: the one for the known side wins, else the general one.
    """
    out: List[Finding] = []
    wsl: Optional[bool] = ctx.wsl if ctx.wsl_known else None
    os_ = ctx.os_known
    seen_patterns = set()
    for rule in rules:
        if not applies(rule, check, wsl, os_) or (wsl is None and rule.wsl is True):
            continue
        m = re.search(rule.pattern, text)
        if not m or rule.pattern in seen_patterns:
            continue
        seen_patterns.add(rule.pattern)
        out.append(render(rule, m, ctx))
        if first:
            break
    return out


class Garbled(Exception):
    """Raised by a helper when a value the pattern captured cannot come from PyTorch ("found
    version 0", "Python 2.7" in a Dynamo message, "sm_0"): the finding then says the text looks
    garbled instead of reasoning from the value. The message names the value and why."""


class Unknown(Exception):
    """Raised by a helper when a value the pattern captured is newer than all envcheck's data knows (an
    NVIDIA architecture past the newest on record): the finding says so and draws no conclusion,
    neither an explanation nor "garbled". The message names the value and the newest known."""


GARBLED_FIX = ("Copy the complete message again, unedited — best the whole output, e.g. "
               "`python train.py 2>&1 | envcheck explain -`.")


def render(rule: Diagnosis, m: re.Match[str], ctx: Context) -> Finding:
    from envcheck.verify.context import BEFORE

    ctx.groups = {k: v for k, v in m.groupdict().items()}
    ctx.before = m.string[max(0, m.start() - BEFORE):m.start()]
    try:
        for arch in _archs_read(rule, ctx):  # an architecture the data rules out is said so first (breaker6 F3)
            check_arch(ctx.matrix, arch)
        values = _Values(ctx)
        cause = string.Formatter().vformat(rule.cause, (), values)
        fix = string.Formatter().vformat(rule.fix, (), values)
    except Garbled as exc:
        cause = f"The text looks garbled or edited: {exc}, so envcheck draws no conclusion from it."
        fix = GARBLED_FIX
        garbled, unknown = True, False
    except Unknown as exc:
        from envcheck.install_hint import update_hint

        cause = f"This is unknown to envcheck's data: {exc}, so envcheck draws no conclusion from it."
        fix = (f"Update envcheck's data (`envcheck matrix update`) or envcheck itself ({update_hint()}), then explain "
               "the message again. (If the value was edited, copy the complete message again.)")
        garbled, unknown = False, True
    else:
        garbled = unknown = False
    finally:
        ctx.groups = {}
        ctx.before = ""
    return Finding(rule.id, m.group(0), _tidy(cause), _tidy(fix), rule.source, garbled=garbled, unknown=unknown)


#: template fields that read the GPU architecture the text names (its ``gpu_arch`` hint)
_GPU_FIELDS = re.compile(r"arch|gpu|device")


def _archs_read(rule: Diagnosis, ctx: Context) -> List[str]:
    """The architectures a family reads from the text: its ``sm``/``arch`` groups, and the text's GPU
    architecture (``gpu_arch`` hint: ``gfx9999`` in a HIP message) when its templates use the GPU."""
    suffix = ctx.groups.get("sm_suffix") or ""  # ptxas' 'sm_90a': the family reads sm_90, the target is sm_90a
    out = [v + (suffix if k == "sm" else "") for k, v in ctx.groups.items() if k in ("sm", "arch") and v]
    fields = {f for t in (rule.cause, rule.fix) for _, f, _, _ in string.Formatter().parse(t) if f}
    if ctx.hints.get("gpu_arch") and any(_GPU_FIELDS.search(f) for f in fields):
        out.append(ctx.hints["gpu_arch"])
    return out


def _tidy(text: str) -> str:
    return re.sub(r"\s+", " ", text).replace(" .", ".").strip()


class _Values(dict):
    """Template values: the match's groups first, then helpers (computed on first use)."""

    def __init__(self, ctx: Context):
        super().__init__()
        self.ctx = ctx

    def __missing__(self, key: str) -> str:
        value = (self.ctx.groups[key] or "") if key in self.ctx.groups else HELPERS[key](self.ctx)
        self[key] = value
        return value


def text_hints(rules: List[Diagnosis], text: str, matrix: Optional[Matrix] = None) -> Dict[str, str]:
    """Facts the text itself states, for ``explain``: ``{"cuda_driver_max": "12.8"}`` from the
    ``found`` group of a rule ("found version 12080"), ``{"gpu_arch": "sm_120"}`` from an ``sm``
    group, and (given the ``matrix``) ``{"gpu_name": "GeForce RTX 5070 Ti"}``: the GPU of that
    architecture the text names (:func:`gpu_named_in`); a garbled value gives nothing."""
    hints: Dict[str, str] = {}
    read = {"found": ("cuda_driver_max", _cuda_of_code), "sm": ("gpu_arch", _plausible_sm)}
    for rule in rules:
        for group in set(re.compile(rule.pattern).groupindex) & set(read):
            key, parse = read[group]
            m = re.search(rule.pattern, text) if key not in hints else None
            if m and m.group(group):
                try:
                    value = parse(m.group(group))
                except Garbled:
                    value = None
                if value:  # a GPU is its arch: sm_90a is a compile target of sm_90 (cuda.toml targets)
                    hints[key] = _gpu_arch(value) if key == "gpu_arch" else value
    hints.update({k: v for k, v in platform_hints(text).items() if k not in hints})
    backend = stated_backend(text)
    if backend:
        hints["backend"] = backend
    named = gpu_named_in(matrix, hints["gpu_arch"], text) if matrix is not None and hints.get("gpu_arch") else None
    if named:
        hints["gpu_name"] = named
    return hints


#: a local label that names a build (``cu121``, ``rocm6.2``, ``cpu``, ``xpu``; ``rocm6.4.1.git…`` is rocm6.4.1)
_BUILD_LABEL = r"(?:cu\d{2,3}|rocm\d{1,2}(?:\.\d{1,2}){0,2}|cpu|xpu)\b"
#: a torch, torchvision or torchaudio version with such a label, as pip prints one (``torch==2.1.0+cu121``,
#: ``torchvision 0.16.0+cu121``, ``you have torch 2.4.0+cu121``, a wheel ``torch-2.1.0+cu121-cp38-…whl``)
_LABELLED_TORCH = re.compile(r"(?<![\w.-])torch(?:vision|audio)?(?:\{[^}\n]{0,120}\})?(?:==| |-)\s{0,3}"
                             r"(\d{1,3}(?:\.\d{1,4}){1,3}\+" + _BUILD_LABEL + ")")


def label_backend(version: Optional[str]) -> Optional[str]:
    """The build a version's local label names (``0.16.0+cu121`` → ``cu121``); ``None`` without one."""
    return variant_of(version, None, None) if re.match(_BUILD_LABEL, local_label(version)) else None


def stated_backend(text: str) -> Optional[str]:
    """The build a text states for torch: the label of its first labelled torch/torchvision/torchaudio
    version (``cu121``, ``rocm6.2``, ``cpu``); ``None`` when it states none."""
    m = _LABELLED_TORCH.search(text[:20000])
    return label_backend(m.group(1)) if m else None


def gpu_named_in(matrix: Matrix, arch: str, text: str) -> Optional[str]:
    """The GPU of architecture ``arch`` that ``text`` names, by its most specific name: the longest
    name or alias on record found in the text as whole words ("RTX 5070 Ti" is not "RTX 5070", and
    neither is the first sm_120 GPU on record, the RTX 5090 — newcomer5 #5); ``None`` when the text
    names none of them."""
    best: Tuple[int, Optional[str]] = (0, None)
    for g in matrix.gpus_with_arch(arch):
        for name in (g.name, *g.aliases):
            words = re.findall(r"[A-Za-z0-9]+", name)
            if not words or not any(w.isdigit() or re.search(r"\d", w) for w in words):
                continue  # a name without a model number ("Titan") says too little on its own
            m = re.search(r"(?<![A-Za-z0-9])" + r"[\s_-]*".join(map(re.escape, words)) + r"(?![A-Za-z0-9])",
                          text[:20000], re.I)
            if m and len(m.group(0)) > best[0]:
                best = (len(m.group(0)), g.name)
    return best[1]


#: What a pasted text shows about the machine it came from, strongest evidence first. Paths are
#: the surest sign (``C:\\Users\\…``, ``/usr/lib/wsl/lib``, ``/Users/…``, ``/home/…``).
_PLATFORM_SIGNS = (
    ({"os": "linux", "wsl": "true"}, re.compile(r"/usr/lib/wsl/|microsoft-standard-WSL2|\bWSL2?\b")),
    ({"os": "windows", "wsl": "false"},
     re.compile(r"(?<![\w/])[A-Za-z]:(?:\\\\|\\)[\w$ .-]{1,80}|\[WinError \d{1,5}\]|\.dll\b|win_amd64|\.pyd\b"
                r"|DLL load failed|paging file is too small")),  # messages only Windows prints
    ({"os": "macos", "wsl": "false"}, re.compile(r"(?<![\w/])/Users/[\w.-]{1,80}/|\.dylib\b|/opt/homebrew/|macosx_\d|MPS device")),
    ({"os": "linux"}, re.compile(r"(?<![\w/])(?:/home/|/usr/(?:local/)?lib|/opt/conda|/lib64/|/root/)|\.so(?:\.\d{1,6}){0,4}\b")),
)


def platform_hints(text: str) -> Dict[str, str]:
    """``{"os": "windows", "wsl": "false"}`` from a ``C:\\`` path, ``{"os": "linux", "wsl": "true"}``
    from ``/usr/lib/wsl``; plus the driver and its CUDA from a pasted ``nvidia-smi`` header and an
    AMD ``gfx`` target. Empty when the text shows none of it."""
    hints: Dict[str, str] = {}
    for facts, sign in _PLATFORM_SIGNS:
        if sign.search(text):
            hints.update(facts)
            break
    m = re.search(r"Driver Version: (\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)", text)
    if m:
        hints["nvidia_driver"] = m.group(1)
    m = re.search(r"CUDA Version: (\d{1,2}\.\d{1,2})", text)
    if m:
        hints["cuda_driver_max"] = m.group(1)
    m = re.search(r"\b(gfx[0-9a-f]{3,5})\b", text)
    if m:
        hints["gpu_arch"] = m.group(1)
    # torch's own warning lists the build's arch list (torch/cuda/__init__.py): "The current PyTorch
    # install supports CUDA capabilities sm_50 sm_60 … compute_37."
    m = re.search(r"supports CUDA capabilities((?:[ \t]+(?:sm|compute)_\d{2,3}[af]?){1,40})", text)
    if m:
        hints["arch_list"] = " ".join(m.group(1).split())
    return hints


def closest(rules: List[Diagnosis], text: str, n: int = 3) -> List[Dict[str, object]]:
    """The ``n`` families whose example message shares the most words with ``text`` (for an
    unrecognised paste: what envcheck looked for). Each: rule, score (0–1], example; none that
    shares no word (empty when nothing is close)."""
    def words(t: str) -> set:
        return {w for w in re.findall(r"[a-z][a-z0-9_]{2,}", t.lower()[:20000])}

    mine = words(text)
    scored = []
    for r in rules:
        theirs = words(r.example) | words(r.id.replace("-", " "))
        if not theirs or not mine:
            continue
        score = len(mine & theirs) / len(theirs | mine) ** 0.5 / len(theirs) ** 0.5
        if round(score, 3) > 0:  # a family sharing no word with the text is not close to it
            scored.append((round(score, 3), r))
    scored.sort(key=lambda x: -x[0])
    return [{"rule": r.id, "score": sc, "example": r.example.splitlines()[0][:200]} for sc, r in scored[:n]]


def family_table(rules: List[Diagnosis], matrix: Matrix) -> List[Dict[str, Any]]:
    """One row per message family (``envcheck explain --list``): evidence, cause, fix, source —
    cause and fix as ``explain`` words them for the family's own example message, with no facts
    about any machine but what that message shows."""
    from envcheck.verify.facts import Facts

    out: List[Dict[str, Any]] = []
    for r in rules:
        if r.id == "distributed-hang":  # envcheck's own timeout note, not a message people paste
            continue
        ctx = Context(Facts(), matrix, hints=text_hints(rules, r.example, matrix))
        m = re.search(r.pattern, r.example)
        f = render(r, m, ctx) if m else None
        out.append({"family": r.id, "evidence": r.evidence or f"message: `{r.example.splitlines()[0][:160]}`",
                    "cause": f.cause if f else r.cause, "fix": f.fix if f else r.fix, "source": list(r.source),
                    "platform": r.os or ("wsl" if r.wsl else ""), "example": r.example})
    return out


# -- helpers ------------------------------------------------------------------------------------

Helper = Callable[[Context], str]
HELPERS: Dict[str, Helper] = {}


def helper(fn: Helper) -> Helper:
    HELPERS[fn.__name__] = fn
    return fn


@helper
def torch_desc(ctx: Context) -> str:
    """``" 2.6.0+cu126"`` or ``""`` (so templates say "torch 2.6.0+cu126" or "torch")."""
    v = ctx.facts.torch_version
    return f" {v}" if v else ""


@helper
def openblas_install(ctx: Context) -> str:
    """The install command of recipe.toml's jetson-openblas step, which a Jetson plan carries (one source
    for plan, its Dockerfile and this fix: newcomer4 #5)."""
    row = next((r for r in ctx.matrix.recipe if r.key == "jetson-openblas"), None)
    return f"`{row.commands.strip()}`" if row is not None else "your distribution's OpenBLAS package"


@helper
def arch_list(ctx: Context) -> str:
    arch = ctx.facts.build.get("arch_list")
    if arch:
        return short_list(arch, 14)
    said = ctx.hints.get("arch_list")
    if said:
        return short_list(said.split(), 14) + " (as the message says)"
    row = ctx.build_row()
    if row is not None and (row.sm or row.gfx):
        return short_list(list(row.sm) + list(row.ptx) + list(row.gfx), 14) + " (matrix)"
    return "unknown here (`python -c \"import torch; print(torch.cuda.get_arch_list())\"` prints it)"


@helper
def device_desc(ctx: Context) -> str:
    gpus = ctx.gpus()
    if not gpus:
        return ""
    # a GPU only the text's architecture shows is not named after the first GPU of that architecture on
    # record (newcomer5 #5): the text's own name (text_hints' gpu_name), else the architecture alone
    return " (" + ", ".join(g.arch if g.how == "the explained text" and not ctx.hints.get("gpu_name")
                            else f"{g.name}, {g.arch}" for g in gpus) + ")"


@helper
def named_gpu(ctx: Context) -> str:
    """``" (NVIDIA GeForce RTX 5090 D)"``: the GPU named just before the match ("<name> with CUDA
    capability …"), without a prefix such as ``UserWarning:``; ``""`` when none is named."""
    text = ctx.before.rsplit("\n", 1)[-1]
    if not text.rstrip().endswith(" with") and text.rstrip() != "with":
        return ""
    name = text.rstrip()[:-4].rsplit(": ", 1)[-1].strip(" \t:")
    return f" ({name})" if name and len(name) <= 80 else ""


def _plausible_sm(arch: Optional[str]) -> Optional[str]:
    """``arch`` if it reads like a GPU architecture: ``sm_`` and 2–3 digits (no leading zero), or an
    AMD ``gfx`` target."""
    if arch and not re.fullmatch(r"sm_[1-9]\d{1,2}[af]?|gfx[0-9a-f]{3,5}", arch):
        raise Garbled(f"{arch!r} is not a CUDA architecture (sm_ and a two- or three-digit compute "
                      "capability, such as sm_86 or sm_120)")
    return arch


def _gpu_for_arch(ctx: Context, arch: str):
    from envcheck.machine.model import GpuDevice

    for g in ctx.gpus():
        if g.arch == arch:
            return g
    known = ctx.matrix.gpus_with_arch(arch)
    vendor = "amd" if arch.startswith("gfx") else "nvidia"
    return GpuDevice(vendor, known[0].name if known else arch, arch)


def _machine_plan(ctx: Context, gpus: Optional[List[Any]] = None, **overrides: Any) -> Tuple[Any, Any]:
    """``plan``'s answer for this machine — or, when ``gpus`` names a GPU the machine is not known
    to have (the one an error message names), for this machine with that GPU; ``overrides``: other
    machine facts (``python=None``: for any Python)."""
    here = {(g.vendor, g.arch) for g in ctx.gpus()}
    if gpus is None or {(g.vendor, g.arch) for g in gpus} <= here:
        return ctx.plan(**overrides)
    return ctx.plan(gpus=gpus, **overrides)


def driver_table(ctx: Context, res: Any) -> str:
    """With the NVIDIA driver unknown: which builds of the chosen release need which driver."""
    chosen = res.chosen
    if chosen is None:
        return ""
    rows: Dict[str, Any] = {}
    for c in res.accepted:
        if c.release.version == chosen.release.version and c.build.cuda and not c.build.tegra:
            rows.setdefault(c.build.variant, c)
    if not rows:
        return ""
    side = "Windows" if ctx.windows_driver else "Linux"
    need = "; ".join(f"{v} needs {_driver_need(c.fit.driver_full, c.fit.driver_floor)}"
                     for v, c in sorted(rows.items(), key=lambda kv: vkey(kv[1].build.cuda or "0")))
    return (f" This machine's NVIDIA driver is not known here; of torch {chosen.release.version}'s CUDA builds "
            f"({side} driver): {need} (`nvidia-smi` shows yours; `envcheck plan --driver VERSION` picks for it).")


@helper
def arch_fix(ctx: Context) -> str:
    """The build ``plan`` picks for this machine (with the GPU named in the message: its ``sm``, or
    its compute capability as ``cc_major``/``cc_minor``)."""
    return _arch_fix(ctx, compiler=False)


@helper
def compiler_arch_fix(ctx: Context) -> str:
    """``arch_fix`` for a compiler a build carries (NVRTC, Triton's ptxas): the first release that
    would do is the first whose CUDA targets the GPU (cuda.toml [[arch]] first_cuda), not the first
    with a cubin for it (1.8.0+cu111 has sm_86 cubins for an RTX 4090, but its NVRTC is CUDA 11.1's)."""
    return _arch_fix(ctx, compiler=True)


@helper
def rocm_arch_fix(ctx: Context) -> str:
    """``arch_fix`` for a message only a ROCm (HIP) build prints: on a machine whose GPUs are known
    and none is AMD's, no ROCm fix and no other build — the text does not fit this machine (breaker5
    F3: a HIP error on an RTX 4090 got a ROCm fix and a CUDA fix at once)."""
    return _arch_fix(ctx, compiler=False, vendor="amd")


def _bf16_verdict(ctx: Context) -> Tuple[str, List[Any]]:
    """Whether this machine's known GPUs lack native bfloat16: ``("lacks", gpus)`` for NVIDIA GPUs
    below the ``bf16_min_compute_capability`` limit (diagnoses.toml, torch.cuda.is_bf16_supported's
    rule) or GPUs not known, ``("has", gpus)`` when every NVIDIA GPU is at or above it, ``("other",
    gpus)`` when none is NVIDIA's (the message is a CUDA build's cuBLAS)."""
    from envcheck.verify.evidence import limit

    own = _own_gpus(ctx)
    if not own:
        return "lacks", []
    nvidia = [g for g in own if g.vendor == "nvidia"]
    if not nvidia:
        return "other", own
    floor = limit(ctx.matrix, "bf16_min_compute_capability")
    caps = [ctx.matrix.nv_arch(g.arch) for g in nvidia]
    if all(c is not None and c.compute_capability and vkey(c.compute_capability) >= vkey(f"{floor:.1f}")
           for c in caps):
        return "has", nvidia
    return "lacks", [g for g, c in zip(nvidia, caps) if c is None or vkey(c.compute_capability or "0") < vkey(f"{floor:.1f}")]


@helper
def bf16_cause(ctx: Context) -> str:
    """gpu-no-bf16's cause for this machine: the GPU lacks bf16 — claimed only for a GPU below the
    limit (breaker5 F3: an RTX 4090 / H100 was told it lacks bf16), else why the text does not fit."""
    from envcheck.verify.evidence import limit

    floor = f"{limit(ctx.matrix, 'bf16_min_compute_capability'):.1f}"
    verdict, gpus = _bf16_verdict(ctx)
    names = ", ".join(dict.fromkeys(f"{g.name}, {g.arch}" for g in gpus))
    if verdict == "other":
        return (f"cuBLAS — a CUDA build's NVIDIA library — refused a bfloat16 matrix multiply (CUDA_R_16BF), but this "
                f"machine's GPU is the {names}: the text comes from another machine (an NVIDIA GPU below compute "
                f"capability {floor}).")
    if verdict == "has":
        return (f"cuBLAS refused a bfloat16 matrix multiply (CUDA_R_16BF), yet this machine's GPU ({names}) has "
                f"compute capability {floor} or higher and runs bfloat16 natively: the GPU is not the cause here. The "
                f"text comes from another GPU — an older one in this machine (CUDA_VISIBLE_DEVICES picks which) or "
                f"another machine's.")
    on = f" on this GPU ({names})" if names else ""
    return (f"cuBLAS refused a bfloat16 matrix multiply (CUDA_R_16BF){on}. bfloat16 is native from compute "
            f"capability {floor} (NVIDIA's Ampere GPUs); older GPUs run bf16 GEMMs only where cuBLAS emulates them, and "
            f"on Maxwell and Pascal GPUs (Tesla M40, P100) it does not, so code that picks bf16 (a model's "
            f"torch_dtype, autocast's dtype, a precision setting) fails there. No torch build adds bf16 to a GPU "
            f"that lacks it.")


@helper
def bf16_fix(ctx: Context) -> str:
    from envcheck.verify.evidence import limit

    floor = f"{limit(ctx.matrix, 'bf16_min_compute_capability'):.1f}"
    verdict, gpus = _bf16_verdict(ctx)
    where = ("On the GPU that raised it, run" if verdict != "lacks" else "Run")
    first = ""
    if verdict == "has":
        first = ("Check which GPU raised it (`nvidia-smi -L`, CUDA_VISIBLE_DEVICES); on this one bfloat16 works "
                 "(`torch.cuda.is_bf16_supported()` is true). ")
    elif verdict == "other":
        first = (f"`{ctx.command('envcheck', 'plan', '--gpu', gpus[0].name, *_machine_words(ctx))}` picks this "
                 "machine's build. ")
    return (f"{first}{where} the model in float16 or float32 — the project's dtype/precision switch (e.g. "
            f"`torch_dtype=torch.float16`, `--precision fp32`) — and choose bf16 only when "
            f"`torch.cuda.is_bf16_supported()` is true; a GPU of compute capability {floor} or newer runs bf16.")


@helper
def triton_arch_fix(ctx: Context) -> str:
    """triton-arch-unsupported's fix: plan's build (:func:`compiler_arch_fix`), then what to do until
    then — for the platform given: PyTorch's Windows wheels install no Triton (the community
    triton-windows package is torch.compile's GPU backend there) and a Linux `export` is no Windows
    command (breaker5 F3). Nothing about plan's Triton when the message is not this machine's GPU."""
    first = compiler_arch_fix(ctx)
    if _another_machines(ctx) is not None:
        return first
    if ctx.os == "windows" and not ctx.wsl:
        return (f"{first} PyTorch's Windows wheels install no Triton: torch.compile's GPU backend there is the "
                "community triton-windows package (`envcheck plan --compile` adds it), which must be one that knows "
                "the GPU. Until then run without torch.compile (`$env:TORCHDYNAMO_DISABLE=1`).")
    return (f"{first} The Triton paired with plan's torch (pip installs it with torch) knows the GPU. Until then: "
            "point Triton at the ptxas of a CUDA toolkit new enough for the GPU "
            "(`export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas`), or run without torch.compile "
            "(`TORCHDYNAMO_DISABLE=1`).")


def _machine_words(ctx: Context) -> List[str]:
    """The flags that make ``envcheck plan`` answer for this machine's platform (``--wsl``,
    ``--os windows``): a suggested command without them plans a Linux install (breaker5 F3)."""
    if ctx.wsl:
        return ["--wsl"]
    return ["--os", ctx.os] if ctx.os in ("windows", "macos") else []


def _own_gpus(ctx: Context) -> List[Any]:
    """The GPUs this machine is known to have (``--gpu``, probed, the facts), not the one the
    explained text alone names."""
    seen = [g for g in ctx.gpus() if g.how != "the explained text"]
    return seen or (list(ctx.machine.gpus) if ctx.machine is not None else [])


def _not_this_machine(ctx: Context, what: str, own: List[Any]) -> str:
    names = ", ".join(dict.fromkeys(f"{g.name} ({g.arch})" for g in own))
    return (f"{what}, but this machine's GPU is the {names}: the text comes from another machine or another "
            f"GPU, so no build is recommended for it here. "
            f"`{ctx.command('envcheck', 'plan', '--gpu', own[0].name, *_machine_words(ctx))}` picks this machine's build.")


def _message_arch(ctx: Context) -> Optional[str]:
    """The GPU architecture the matched message names (``sm``, or ``cc_major``/``cc_minor``)."""
    cc = (ctx.groups.get("cc_major"), ctx.groups.get("cc_minor"))
    arch = _plausible_sm(ctx.groups.get("sm") or (sm_of(cc) if all(cc) else None))
    return _gpu_arch(arch) if arch else arch


def _gpu_arch(arch: str) -> str:
    """The GPU architecture of a compile target: sm_90a (arch-specific) and sm_120f (family-specific) are
    targets of sm_90 and sm_120 GPUs (cuda.toml ``targets``); any other architecture is itself."""
    return re.sub(r"^(sm_\d+)[af]$", r"\1", arch)


def _another_machines(ctx: Context, vendor: str = "") -> Optional[str]:
    """The fix when the message cannot come from this machine's known GPUs — a ``vendor``-only message
    (HIP: ``amd``) without such a GPU, or an architecture none of them has; ``None`` otherwise."""
    arch = _message_arch(ctx)
    own = _own_gpus(ctx)
    if vendor and own and not any(g.vendor == vendor for g in own):
        # easydiffusion#1477, modal-examples#681: on an NVIDIA machine a HIP message most often means the ROCm
        # build got installed there by mistake; plan's build for the machine is the cure either way
        return _not_this_machine(ctx, "The message comes from a ROCm (HIP) build of torch, for an AMD GPU", own) + (
            " If this machine printed it, the torch installed here is a ROCm build, which cannot use this GPU: "
            "uninstall it and install the build that command names.")
    if arch and own and not any(g.arch == arch for g in own):
        return _not_this_machine(ctx, f"The message is about a GPU of architecture {arch}", own)
    return None


def _arch_fix(ctx: Context, compiler: bool, vendor: str = "") -> str:
    arch = _message_arch(ctx)
    other = _another_machines(ctx, vendor)
    if other is not None:
        return other
    gpus = [_gpu_for_arch(ctx, arch)] if arch else ctx.gpus()
    if not gpus:
        return ("Install a build whose arch list includes your GPU's architecture: `envcheck plan --gpu "
                "\"<your GPU>\"` picks one and explains the rest.")
    plan, res = _machine_plan(ctx, gpus)
    names = ", ".join(dict.fromkeys(g.arch for g in gpus))
    if plan is None:
        explain = ctx.command('envcheck', 'plan', '--gpu', gpus[0].name, *_machine_words(ctx), '--explain')
        # what stops a build that carries the GPU's code (the OS, Python…) before the arch itself: the
        # arch is the blocker only when no build for it is on record (breaker5 F3: Windows + gfx1100)
        archs = {g.arch for g in gpus}
        carriers = [c for c in res.rejected if archs <= set(c.build.sm) | set(c.build.ptx) | set(c.build.gfx)]
        if carriers:
            newest = max(carriers, key=lambda c: vkey(c.release.version))
            why = "; ".join(dict.fromkeys(r.message for r in newest.reasons))
            return (f"No build on record runs on this machine: the builds with code for {names} do not run here "
                    f"(e.g. {why}). `{explain}` lists every candidate and what this machine can use instead.")
        why = next((r.message for c in res.rejected for r in c.reasons if r.code == "gpu-arch"), "")
        return (f"No build on record runs on {names} on this machine{': ' + why if why else ''}. "
                f"`{explain}` lists every candidate and why it fails.")
    from envcheck.resolve.rules import name_of

    floor = None
    if compiler:
        firsts = [row.first_cuda for g in gpus if g.vendor == "nvidia"
                  for row in [ctx.matrix.nv_arch(g.arch)] if row is not None and row.first_cuda]
        floor = max(firsts, key=vkey) if firsts else None
    first = ctx.earliest(res, with_code=True, cuda_floor=floor)
    # the first release with code for the GPU on ANY Python: the resolver's answer without this machine's
    # Python (newcomer6 #5: on Python 3.11 it was 1.13.0, while 1.12.1's sm_60 cubins run on sm_61)
    first_any = ctx.earliest(_machine_plan(ctx, gpus, python=None)[1], with_code=True, cuda_floor=floor) \
        if ctx.python else first
    tail = ""
    if first_any is not None and first_any.release.version != plan.release.version:
        # a lower bound for someone held to an older torch, not a second answer (newcomer4 #10: "the first
        # release … is torch 1.8.0" read as if 1.8.0 were needed, and it has no wheel for today's Pythons)
        what = f"whose CUDA ({floor} or newer) compiles for {names}" if floor else f"with code for {names}"
        here = ""
        if first is not None and first.release.version != first_any.release.version:
            here = f"; with this machine's Python {ctx.python}, {name_of(first)}"
        elif first is None and ctx.python:
            here = f"; none has a wheel for this machine's Python {ctx.python}"
        tail = (f" Held to an older torch? The first release {what} is {name_of(first_any)}"
                + (f" (e.g. on Python {first_any.python})" if ctx.python and here else
                   "" if ctx.python else " (for the Pythons it has wheels for)")
                + f"{here}; an older one is not.")
    drv = plan.driver or {}
    need = ""
    if all(g.vendor == "nvidia" for g in gpus) and not ctx.nvidia_driver and not ctx.cuda_driver_max:
        need = driver_table(ctx, res)
    elif drv.get("vendor") == "nvidia" and (drv.get("floor") or drv.get("full")):
        full, floor = drv.get("full"), drv.get("floor")
        have = ""
        if ctx.nvidia_driver:
            if not full or vkey(ctx.nvidia_driver) >= vkey(full):
                have = f"; this driver ({ctx.nvidia_driver}) is enough"
            else:  # the plan accepted it: at or above the floor, under minor-version compatibility only
                have = (f"; this driver ({ctx.nvidia_driver}) is enough only under minor-version compatibility "
                        f"(limited features, no PTX JIT; full support from {full})")
        if drv.get("last_branch"):
            need = (f" It needs an NVIDIA driver ≥ {floor} on the R{drv['last_branch']} branch (the last that drives "
                    f"this GPU), under minor-version compatibility{have}.")
        else:
            need = f" It needs an NVIDIA driver {_driver_need(full, floor)}{have}."
    return (f"Install the build `envcheck plan` picks for this machine, which carries {names}: "
            f"{ctx.install_command(plan)} ({plan.title}).{need}{tail}")


def _driver_need(full: Optional[str], floor: Optional[str]) -> str:
    """``"≥ 570.124.06 (≥ 525.60.13 under minor-version compatibility)"``."""
    text = f"≥ {full or floor}"
    if full and floor and floor != full:
        text += f" (≥ {floor} under minor-version compatibility)"
    return text


#: Plausible cudaDriverGetVersion codes: major×1000 + minor×10, CUDA 1.0 up to 99.9.
_CUDA_CODE = range(1000, 100000)


def _cuda_of_code(code: Optional[str]) -> Optional[str]:
    """cudaDriverGetVersion's integer (``11040``) → ``"11.4"``.

    Raises:
        Garbled: a number that is no such code (``0``, ``12345``, twenty digits).
    """
    if not code or not code.isdigit():
        return None
    n = int(code) if len(code) <= 12 else -1
    if n not in _CUDA_CODE or n % 10:
        raise Garbled(f"\"found version {code[:24]}{'…' if len(code) > 24 else ''}\" is not a CUDA version code "
                      "(major×1000 + minor×10, such as 12080 for CUDA 12.8)")
    return f"{n // 1000}.{n % 1000 // 10}"


@helper
def found_cuda(ctx: Context) -> str:
    return _cuda_of_code(ctx.groups.get("found")) or ctx.cuda_driver_max or "?"


@helper
def torch_cuda(ctx: Context) -> str:
    cuda = ctx.facts.torch_cuda
    if cuda:
        return cuda
    row = ctx.build_row()
    return (row.cuda or "") if row else "version"


@helper
def driver_fix(ctx: Context) -> str:
    """Upgrade the driver (to what), or install a build this driver runs (which)."""
    # the driver's CUDA: the message's code, else the machine's (reported, or its version's per cuda.toml) —
    # so every family whose fix is the driver's (too old, 804 forward compatibility…) names plan's build
    drv_cuda = _cuda_of_code(ctx.groups.get("found")) or ctx.driver_cuda()
    cuda = ctx.facts.torch_cuda
    parts = []
    if cuda:
        full, floor = ctx.driver_floors(cuda)
        from envcheck.resolve.rules import driver_branch, gpu_driver_bounds

        last = gpu_driver_bounds(ctx.matrix, [g for g in ctx.gpus() if g.vendor == "nvidia"],
                                 ctx.windows_driver).last_branch
        if full and floor and last and driver_branch(full) > int(last) >= driver_branch(floor):
            parts.append(f"Upgrade the NVIDIA driver to ≥ {floor} on the R{last} branch (the last that drives this GPU; "
                         f"CUDA {cuda} then runs under minor-version compatibility)")
        elif full or floor:
            extra = f"; ≥ {floor} runs it under minor-version compatibility" if floor and floor != full else ""
            parts.append(f"Upgrade the NVIDIA driver to ≥ {full or floor} (full CUDA {cuda} support{extra})")
    if not parts:
        from envcheck.resolve.rules import gpu_driver_bounds

        bounds = gpu_driver_bounds(ctx.matrix, [g for g in ctx.gpus() if g.vendor == "nvidia"], ctx.windows_driver)
        nvidia = ", ".join(dict.fromkeys(g.name for g in ctx.gpus() if g.vendor == "nvidia"))
        target = _upgrade_target(ctx, drv_cuda) if nvidia else None
        if target is not None:
            parts.append(target)
        elif bounds.low:  # the arch's first driver (cuda.toml driver_min_*): a floor whatever torch was built with
            parts.append(f"Upgrade the NVIDIA driver to ≥ {bounds.low} (the first known to drive a GPU of the "
                         f"{nvidia}'s arch) and to one that supports the CUDA version torch was built with "
                         "(`python -c \"import torch; print(torch.version.cuda)\"`)")
        else:
            parts.append("Upgrade the NVIDIA driver to one that supports the CUDA version torch was built with "
                         "(`python -c \"import torch; print(torch.version.cuda)\"`)")
    if drv_cuda:
        if any(g.vendor == "nvidia" for g in ctx.gpus()):
            plan, _ = ctx.plan()  # the machine's driver is the one the message reports (converter)
        else:  # the GPU is not known here: plan's answer for a CUDA build on this driver
            plan, _ = ctx.plan(backend="cuda")
        if plan is not None:
            unknown = "" if any(g.vendor == "nvidia" for g in ctx.gpus()) else (
                " — the GPU is not known here, so whether it carries the GPU's arch is not checked: "
                "`--gpu \"<your GPU>\"` checks it")
            parts.append(f"or install a build this driver runs (CUDA ≤ {drv_cuda}, or the same major under "
                         f"minor-version compatibility): {ctx.install_command(plan)}{unknown}")
        elif not any("the first that drives" in p for p in parts):
            parts.append(f"no CUDA build on record runs on a driver limited to CUDA {drv_cuda}")
    return ", ".join(parts) + "."


def _upgrade_target(ctx: Context, drv_cuda: Optional[str]) -> Optional[str]:
    """"Upgrade the NVIDIA driver to ≥ X (what plan's build for this GPU needs)" — plan's answer for
    the GPU with no driver given (the build `envcheck plan --gpu` picks), and only when X is newer
    than the driver the message shows (newcomer4 F4: "found version 11040", an R470 driver, was told
    to upgrade to the sm_86 arch's first driver 455.23.04). ``None`` when plan has no such build."""
    plan, _ = ctx.plan(nvidia_driver=None, cuda_driver_max=None)
    d = plan.driver if plan is not None else {}
    if not d or d.get("vendor") != "nvidia":
        return None
    need = d.get("full") or d.get("floor")
    if not need:
        return None
    if drv_cuda:  # the toolkit driver of the CUDA the driver reports: the user has at least that one
        have, _ = ctx.driver_floors(drv_cuda)
        if have and vkey(need) <= vkey(have):
            return None
    tail = (f"; ≥ {d['floor']} under minor-version compatibility" if d.get("full") and d.get("floor")
            and d["floor"] != d["full"] and not d.get("last_branch") else "")
    return f"Upgrade the NVIDIA driver to ≥ {need} (what {plan.title}, plan's build for this GPU, needs{tail})"


@helper
def lib_name(ctx: Context) -> str:
    lib = ctx.groups.get("lib")
    return lib.rsplit("/", 1)[-1] if lib else "A library torch loads"


@helper
def host_glibc(ctx: Context) -> str:
    g, need = ctx.glibc, ctx.groups.get("need")
    if not g:
        return "`ldd --version` shows this system's glibc"
    if need and vkey(g) >= vkey(need):
        return (f"this system has glibc {g}, which is new enough — the message comes from another machine, "
                "a container, or a conda sysroot with an older glibc")
    return f"this system has glibc {g}"


@helper
def glibc_floor(ctx: Context) -> str:
    row = ctx.build_row()
    if row is None:
        return ""
    plat = ctx.target_machine().platform
    tag = row.wheel_tag.get(plat, "")
    floor = ctx.matrix.glibc_floor(tag) or row.glibc
    if not floor:
        return ""
    return f"The torch {public_version(ctx.facts.torch_version)} {row.variant} wheels ({tag}) need glibc ≥ {floor}."


@helper
def glibc_fix(ctx: Context) -> str:
    g, need = ctx.glibc, ctx.groups.get("need")
    base = ("glibc belongs to the operating system and cannot be upgraded inside a Python or conda "
            "environment. ")
    where = ""
    if need and (not g or vkey(g) >= vkey(need)):
        # the machine that raised it has a glibc older than `need` (this one is new enough, or is not
        # known: --no-probe, another machine's paste) — plan for that one (newcomer5 #4)
        major, minor = (int(x) for x in need.split(".")[:2])
        g = f"{major}.{max(minor - 1, 0)}"
        where = f"On the machine that raised it (glibc older than {need}; `ldd --version` shows which): "
    if not g:
        return base + ("Install a build made for your glibc (`ldd --version` shows it; `envcheck plan --glibc "
                       "<that version>` lists the builds that fit), run torch in a container with a newer glibc, "
                       "or upgrade the OS.")
    torch = public_version(ctx.facts.torch_version)
    plan, _ = ctx.plan(torch=torch, glibc=g) if torch and ctx.release(torch) else (None, None)
    if plan is None:
        plan, _ = ctx.plan(glibc=g)
    pick = ""
    if plan is not None:
        pick = f" — e.g. {ctx.install_command(plan, reinstall=False)} ({plan.title}"
        if plan.build.variant == "cpu" and not ctx.gpus():
            pick += "; CPU-only, as no GPU is known here: `--gpu NAME` picks for one"
        pick += ")"
    return base + (f"{where}Install a build whose wheels need glibc ≤ {g}{pick}; or run torch in a container "
                   f"with a newer glibc (`envcheck plan --format docker`), or upgrade the OS. "
                   f"`envcheck plan --glibc {g}{_gpu_flags(ctx)}` lists what fits.")


def _gpu_flags(ctx: Context) -> str:
    """`` --gpu 'Tesla V100-SXM2-16GB'``: the GPUs known here as ``plan`` flags (``""`` when none)."""
    import shlex

    names = list(dict.fromkeys(g.name for g in ctx.gpus() if g.name))
    return " --gpu " + " ".join(shlex.quote(n) for n in names) if names else ""


def _cuda_major(ctx: Context) -> Optional[str]:
    row = ctx.build_row()
    cuda = ctx.facts.torch_cuda or (row.cuda if row else None)
    return cuda.split(".")[0] if cuda else None


@helper
def cudnn_package(ctx: Context) -> str:
    major = _cuda_major(ctx)
    return f"nvidia-cudnn-cu{major}" if major else "the nvidia-cudnn-cu12 / nvidia-cudnn-cu13 package"


@helper
def cudnn_fix(ctx: Context) -> str:
    rel = ctx.release()
    pin = rel.pypi_pins.get("cudnn") if rel else None
    major = _cuda_major(ctx)
    pkg = f"nvidia-cudnn-cu{major}" if major else "nvidia-cudnn-cu12"
    if rel and pin and major:
        how = f"{ctx.pip_command([f'{pkg}=={pin}'])} (the cuDNN torch {rel.version} pins)"
    else:
        how = f"reinstall torch with its dependencies from the index it came from ({pkg} comes with it)"
    return (f"Install the cuDNN torch was built for: {how}; remove LD_LIBRARY_PATH entries that point at "
            "another cuDNN; in conda, `conda install cudnn` for the environment's CUDA. A library other than torch "
            "that loads cuDNN itself (CTranslate2, onnxruntime) needs the cuDNN major it was built for (the `_8` / "
            "`.so.8` in the name): that cuDNN's package (nvidia-cudnn-cu11/-cu12 for cuDNN 8/9) or archive, its "
            "folder on LD_LIBRARY_PATH (Windows: PATH).")


@helper
def cuda_lib_fix(ctx: Context) -> str:
    again = _reinstall_same(ctx)
    # a Jetson (JetPack) build links the system's CUDA, so it does not load on a machine without one (pytorch#86676)
    jetson = (" A torch built for Jetson (JetPack) loads these from the system's CUDA, not from nvidia-* wheels: on a "
              "Jetson install JetPack's CUDA; on another machine install the build `envcheck plan` picks for it.")
    if again:
        return (f"Reinstall torch with its dependencies (no --no-deps) from its index: "
                f"{again}; unset LD_LIBRARY_PATH entries that point at a partial CUDA.{jetson}")
    return ("Reinstall torch with its dependencies (no --no-deps) from the index it came from; unset "
            f"LD_LIBRARY_PATH entries that point at a partial CUDA install.{jetson}")


def _pair_for(ctx: Context, pkg: str, version: str) -> Optional[str]:
    """The torch release a torchvision/torchaudio release pairs with (matrix)."""
    pub = public_version(version)
    for r in ctx.matrix.releases:
        if public_version(getattr(r, pkg)) == pub:
            return r.version
    return None


def _companion(ctx: Context) -> tuple:
    # "TorchAudio" in its own message; `_torch_sox` is the compiled module of torchaudio < 0.8
    pkg = (ctx.groups.get("pkg") or ("torchaudio" if ctx.groups.get("sox") else "torchvision")).lower()
    dists = ctx.facts.packages(pkg)
    run = ctx.facts.run(f"{pkg}_compat") or {}
    version = (run.get("data") or {}).get("version") or (dists[0].get("version") if dists else None)
    return pkg, version


def _requires_torch(ctx: Context, pkg: str) -> Optional[str]:
    for d in ctx.facts.packages(pkg)[:1]:
        for req in d.get("requires") or []:
            m = re.match(r"torch\s*\(?\s*==\s*([\w.+]+)", req)
            if m:
                return m.group(1)
    return None


def companion_mismatch(ctx: Context, pkg: str) -> bool:
    """Whether the installed ``pkg`` (torchvision/torchaudio) is built for another torch release than
    the one loaded: its metadata's ``Requires-Dist: torch==X``, else the matrix's pairing."""
    dists = ctx.facts.packages(pkg)
    version = dists[0].get("version") if dists else None
    want = _requires_torch(ctx, pkg) or (_pair_for(ctx, pkg, version) if version else None)
    loaded = public_version(ctx.facts.torch_version)
    return bool(want and loaded and public_version(want) != loaded)


@helper
def companion_name(ctx: Context) -> str:
    return _companion(ctx)[0]


@helper
def conflict_fix(ctx: Context) -> str:
    """pip/uv cannot install two pins of torch at once (``dep`` pins ``need``): install the torch that
    ``dep`` pins with the companions plan pairs with it, or drop the other pin."""
    dep, dep_ver, need = ctx.groups.get("dep") or "", ctx.groups.get("depver") or "", ctx.groups.get("need") or ""
    m = re.match(r"(torch(?:vision|audio)?)(?:\{[^}]*\})?==\s*([\w.+]+)", need)
    who = f"{dep} {dep_ver}".strip() or "the package that pins torch"
    if m and m.group(1) == "torch" and ctx.release(m.group(2)) is not None:
        # the build the text asks for or has (``torch==2.1.0+cu121``, ``torchvision 0.16.0+cu121``, ``you have
        # torch 2.4.0+cu121``) is the backend planned for: a CUDA message never gets a CPU build (breaker6 F2)
        backend = label_backend(m.group(2)) or label_backend(dep_ver) or ctx.hints.get("backend") or "auto"
        plan, _ = ctx.plan(torch=public_version(m.group(2)), backend=backend)
        flag = "" if backend == "auto" else f" --backend {backend}"
        if plan is not None:
            return (f"Keep one torch for the whole install: either the torch {who} was built for, installed with the "
                    f"torchvision/torchaudio that pair with it — {ctx.install_command(plan, reinstall=False)} "
                    f"(`envcheck plan --torch {plan.release.version}{flag}`) — and drop your own torch pin, or keep your torch "
                    f"and install the {dep or 'package'} release built for it.")
    return (f"Keep one torch for the whole install: drop your own torch/torchvision/torchaudio pins and let {who} bring "
            f"the torch it needs, or install the {dep or 'package'} release built for your torch; `envcheck plan --torch X.Y` "
            "pins torch with the torchvision and torchaudio that pair with it.")


@helper
def nvcc_arch_desc(ctx: Context) -> str:
    """What the matrix knows of the architecture nvcc (or Triton's ptxas) refused: its GPUs and the CUDA
    releases that target it."""
    arch = ctx.groups.get("arch") or ctx.groups.get("sm") or ""
    m = _ARCH_FORM.fullmatch(arch)
    if m is None or m.group("gfx"):
        return (f"the architecture list handed to nvcc is garbled (`{arch}`): TORCH_CUDA_ARCH_LIST or the build's own "
                "detection produced no GPU number (no GPU visible while building, or a Windows shell that did not "
                "expand the variable)")
    row = ctx.matrix.nv_arch(f"sm_{m.group('num')}")  # compute_90a is sm_90's arch-specific target (render checked it)
    if row is None or not row.first_cuda:
        return f"{arch} is not an architecture envcheck has CUDA releases on record for"
    span = f"CUDA {row.first_cuda} through {row.last_cuda}" if row.last_cuda else f"CUDA {row.first_cuda} and later"
    return (f"{arch} is compute capability {row.compute_capability} ({row.family} GPUs), which nvcc can target from "
            f"{span} only")


#: an architecture as messages write one: ``sm_90``/``compute_90`` with an optional ``a``/``f`` target suffix
#: (``sm_90a``, ``compute_120f``), or an AMD LLVM target ``gfx`` + major, minor and stepping (``gfx90a``, ``gfx1100``)
_ARCH_FORM = re.compile(r"(?P<vendor>sm|compute)_(?P<num>[0-9]{1,6})(?P<suffix>[af]?)|(?P<gfx>gfx)(?P<major>[0-9]{1,3})"
                        r"(?P<minor>[0-9a-f])(?P<step>[0-9a-f])")


def _arch_order(arch: str) -> Tuple[int, int, int]:
    """Where an architecture sits in its vendor's numbering: sm_121 → (12, 1, 0), gfx90a → (9, 0, 10)."""
    m = _ARCH_FORM.fullmatch(arch)
    if m is None:
        return (-1, 0, 0)
    if m.group("gfx"):
        return int(m.group("major")), int(m.group("minor"), 16), int(m.group("step"), 16)
    num = m.group("num")
    return int(num[:-1] or 0), int(num[-1]), 0


def check_arch(matrix: Matrix, arch: str) -> None:
    """Decide an architecture a message names with the data: every architecture up to the newest of its
    vendor is on record (NVIDIA: cuda.toml [[arch]] and the GPU rows; AMD: the GPU rows, gpu-chips.toml
    and the builds' gfx lists). Text that is no architecture at all is left to the family's helpers.

    Raises:
        Unknown: newer than every architecture of its vendor on record (``sm_999``, ``gfx9999``).
        Garbled: none of those up to the newest (``sm_85``, ``gfx000``), or a target suffix the arch does
            not have (cuda.toml ``targets``: ``sm_90a`` is one, ``sm_86a`` is not).
    """
    m = _ARCH_FORM.fullmatch(arch)
    if m is None:
        return
    amd = bool(m.group("gfx"))
    who, files = ("AMD", "matrices/gpus-amd.toml, gpu-chips.toml and the builds' gfx lists") if amd \
        else ("NVIDIA", "matrices/cuda.toml [[arch]]")
    base = arch if amd else f"sm_{m.group('num')}"
    known = [a for a in matrix.known_archs("amd" if amd else "nvidia")
             if _ARCH_FORM.fullmatch(a) and (amd or not a.endswith(("a", "f")))]
    if not known:
        return
    if base not in known:
        newest = max(known, key=_arch_order)
        if _arch_order(base) > _arch_order(newest):
            raise Unknown(f"{arch} is newer than every {who} architecture on record (the newest is {newest}, {files})")
        raise Garbled(f"{arch!r} is no {who} architecture: envcheck's data knows every one up to {newest} "
                      f"({files}), and {base} is none of them")
    if m.group("suffix"):
        row = matrix.nv_arch(base)
        targets = row.targets if row is not None else ()
        if f"{base}{m.group('suffix')}" not in targets:
            raise Garbled(f"{arch!r} is no NVIDIA target: {base}'s suffixed targets on record are "
                          f"{', '.join(targets) or 'none'} (matrices/cuda.toml [[arch]] targets)")


@helper
def companion_cause(ctx: Context) -> str:
    pkg, version = _companion(ctx)
    loaded = ctx.facts.torch_version
    if not version:
        return (f"the installed {pkg} was built for another torch release than the one loaded; each {pkg} "
                "release pairs with exactly one torch release.")
    want = _requires_torch(ctx, pkg) or _pair_for(ctx, pkg, version)
    text = f"{pkg} {version} is built for torch {want}" if want else f"{pkg} {version} is built for another torch"
    if loaded and want and public_version(want) == public_version(loaded):
        # the same release: compare builds (local labels), not releases (newcomer5 #1)
        if local_label(loaded) != local_label(version):
            text += (f" — the release loaded, but another build: the torch loaded is {build_words(loaded)} and "
                     f"{pkg} {version} is {build_words(version)}")
        else:
            text += f" — the release and build loaded ({loaded})"
    elif loaded:
        text += f", but the torch loaded is {loaded}"
        f = ctx.facts.torch.get("file")
        if f:
            text += f" (from {site_of(f)})"
    copies = ctx.facts.packages("torch")
    others = [d for d in copies if public_version(d.get("version")) != public_version(loaded)]
    if loaded and others:
        where = "; ".join(f"{d.get('version')} at {d.get('location')}" for d in others)
        text += f"; pip's metadata also lists torch {where} — an older copy shadows the new one"
    return text + "."


@helper
def companion_fix(ctx: Context) -> str:
    pkg, version = _companion(ctx)
    want = None
    if version:
        want = _requires_torch(ctx, pkg) or _pair_for(ctx, pkg, version)
    rel = public_version(want) if want else public_version(ctx.facts.torch_version)
    plan = None
    if rel and ctx.release(rel):
        plan, _ = ctx.plan(torch=rel, backend=ctx.variant or ctx.hints.get("backend") or "auto")
        if plan is None:
            plan, _ = ctx.plan(torch=rel)
    loaded = ctx.facts.torch_version
    shadowed = [d for d in ctx.facts.packages("torch") if public_version(d.get("version")) != public_version(loaded)]
    if loaded and not shadowed and ctx.release() is not None:
        # one torch, a stray companion: match the companion to the torch in place (keeps the torch)
        keep = companion_install_fix(ctx)
        if plan is not None and public_version(loaded) != rel:
            keep += f" Or, to keep {pkg} {version}, install its pair instead: {ctx.install_command(plan)}."
        return keep
    remove = (f"`{ctx.py_command('-m', 'pip', 'uninstall', '-y', 'torch', 'torchvision', 'torchaudio')}` "
              "(repeat until pip finds no copy; "
              "check ~/.local and PYTHONPATH too)")
    if plan is not None:
        again = f"{ctx.install_command(plan, reinstall=False)}"
        return f"Remove every copy, {remove}, then install the matching pair from the same index: {again}."
    return (f"Remove every copy, {remove}, then install torch and {pkg} together from the same index "
            "(`envcheck plan` pins a matching pair).")


@helper
def companion_install_fix(ctx: Context) -> str:
    """Install the missing companion in the version the matrix pairs with the installed torch build,
    from that build's index (whatever GPU the machine has: the pairing is the build's)."""
    pkg = (ctx.groups.get("pkg") or "torchvision").lower()
    rel, row = ctx.release(), ctx.build_row()
    pin = (row.pins.get(pkg) or (row.version_of(getattr(rel, pkg)) if getattr(rel, pkg) else "")) if rel and row else ""
    if pin and row is not None:
        ch = ctx.matrix.channel(row.channel)
        index = "" if row.channel == "pypi" else (
            f"{'--index-url' if ch.kind == 'simple' else '--find-links'} {ch.url_for(row.variant)}")
        cmd = ctx.pip_command([f"{pkg}=={pin}"], index, reinstall=False)
        return f"Install the {pkg} that pairs with torch {ctx.facts.torch_version}, from its index: {cmd}."
    if rel is not None:
        return (f"No {pkg} release pairs with torch {rel.version} on record; install the one {pkg}'s project lists "
                "for this torch, from the same index as torch.")
    return (f"Install {pkg} in the version paired with your torch, from the index torch came from "
            f"(`{ctx.py_command('-m', 'pip', 'install', pkg)}` alone may replace torch with another build); "
            "`envcheck plan` pins a matching pair.")


def _compile_python(ctx: Context) -> Optional[str]:
    """The Python of a Dynamo message (or the environment's).

    Raises:
        Garbled: a Python older than any torch release supports ("Python 2.7").
    """
    from envcheck.matrix.model import python_key

    py = ctx.groups.get("py")
    if py:
        oldest = ctx.oldest_python()
        try:
            ok = oldest is None or python_key(py) >= python_key(oldest)
        except ValueError:
            ok = False
        if not ok:
            raise Garbled(f"no torch release on record runs on Python {py} (the oldest Python any release "
                          f"supports is {oldest})")
        return py
    return (ctx.python or "").rstrip("t") or None


@helper
def compile_cause(ctx: Context) -> str:
    py = _compile_python(ctx)
    torch = public_version(ctx.facts.torch_version)
    rel = ctx.release(torch) if torch else None
    first = ctx.compile_min_torch(py) if py else None
    text = "torch.compile (Dynamo)"
    if rel and rel.compile_python_max:
        text += f" in torch {rel.version} supports Python ≤ {rel.compile_python_max}"
    elif torch:
        text += f" in torch {torch} does not support Python {py}"
    else:
        text += f" does not support Python {py} in the installed torch"
    if py and first:
        text += f"; Python {py} needs torch ≥ {first}"
    return text + "."


@helper
def compile_fix(ctx: Context) -> str:
    py = _compile_python(ctx)
    first = ctx.compile_min_torch(py) if py else None
    if not first:
        return f"Use an older Python for torch.compile; no torch release on record supports it on Python {py}."
    return (f"Upgrade to torch ≥ {first} (`{ctx.command('envcheck', 'plan', '--python', py or '', '--compile')}` picks a build and its "
            f"companions), or run torch.compile on an older Python with this torch.")


@helper
def compiler_desc(ctx: Context) -> str:
    run = ctx.facts.run("torch_compile") or {}
    data = run.get("data") or {}
    comps = data.get("compilers")
    if not isinstance(comps, dict):
        return ""
    found = [k for k, v in comps.items() if v]
    if found:
        return f" that works (found {', '.join(found)} on PATH)"
    cc = data.get("cc_env")
    return f" (no {', '.join(comps)} on PATH; CC is {'set to ' + cc if cc else 'not set'})"


@helper
def triton_fix(ctx: Context) -> str:
    if ctx.os == "windows":  # no official Triton for Windows: never "the Triton paired with your torch"
        torch = public_version(ctx.facts.torch_version)
        row = ctx.matrix.triton_windows.get(".".join(torch.split(".")[:2])) if torch else None
        base = ("PyTorch publishes no Triton for Windows (its Windows wheels require none); torch.compile's GPU "
                "backend needs the community package triton-windows (not official)")
        if row is None:
            return (f"{base}; no triton-windows release for torch {torch or '?'} is on record — "
                    "`envcheck plan --os windows --compile` picks a torch that has one, or run torch.compile under WSL2.")
        step = ctx.matrix.steps.get(row.step)
        cmd = ctx.pip_command([f"triton-windows=={row.version}"], reinstall=False)
        return (f"{base}: triton-windows {row.version} (Triton {row.triton}) pairs with torch {row.torch}: {cmd}"
                + (f" ({step.description})" if step else "") + ".")
    for d in ctx.facts.packages("torch")[:1]:
        for req in d.get("requires") or []:
            m = re.match(r"((?:pytorch-)?triton(?:-rocm)?)\s*\(?\s*==\s*([\w.+]+)", req)
            if m:
                pin = f"{m.group(1)}=={m.group(2)}"
                return (f"Install the Triton this torch was released with: {ctx.pip_command([pin], reinstall=False)} "
                        "(torch's own requirement).")
    return ("Install the Triton release paired with your torch (`pip show torch` lists it under Requires: "
            "triton / pytorch-triton-rocm), from the same index as torch.")


@helper
def cuda_build_fix(ctx: Context) -> str:
    """The GPU build for the machine's accelerator: CUDA (NVIDIA), ROCm (AMD), XPU (Intel), or —
    on a Mac, which has no CUDA — the MPS device of the build it has."""
    torch = public_version(ctx.facts.torch_version)
    gpus = ctx.gpus()
    vendors = {g.vendor for g in gpus}
    if ctx.os == "macos":
        return ("macOS has no CUDA: torch on a Mac uses the Apple GPU through MPS — use `torch.device(\"mps\")` "
                "(`torch.backends.mps.is_available()`) instead of \"cuda\"; the macOS wheels on PyPI have MPS built in.")
    if vendors and vendors <= {"intel"}:
        return xpu_build_fix(ctx)
    if not gpus:
        # no GPU known: plan's answer for this machine is a CPU build, and which GPU build fits depends on
        # the GPU (CUDA 13 builds carry no sm_50-sm_70 code): say so and ask for it, never guess a CUDA build
        plan, _ = ctx.plan()
        seen = ctx.machine is not None or bool(ctx.facts.section("runs") or ctx.facts.data.get("machine"))
        known = ("envcheck sees no NVIDIA, AMD or Intel GPU on this machine" if seen
                 else "no GPU is known here (nothing was probed)")
        picks = (f", so `envcheck plan` picks the CPU build {plan.title} for it" if plan is not None
                 and plan.build.backend == "cpu" else "")
        return (f"Which GPU build fits depends on the GPU, and {known}{picks}. Name the GPU to get plan's "
                f"build for it and its driver: `envcheck explain --gpu \"<your GPU>\" …` or "
                f"`envcheck plan --gpu \"<your GPU>\"`.")
    plan, _ = ctx.plan()
    if plan is not None and plan.build.backend in ("cuda", "rocm", "xpu", "mps"):
        keep = ""
        if torch and ctx.release(torch) and plan.release.version != torch:
            same, _ = ctx.plan(torch=torch)  # plan --torch X for this machine: the same release's GPU build
            if same is not None and same.build.backend == plan.build.backend:
                keep = f" (to stay on torch {torch}: {ctx.install_command(same)}, `envcheck plan --torch {torch}`)"
            else:
                keep = f" (to stay on torch {torch}: `envcheck plan --torch {torch}`)"
        return (f"Install the build `envcheck plan` picks for this machine: {ctx.install_command(plan)} — its "
                f"index is {plan.index_url}{keep}.")
    return ("Install a GPU build from https://download.pytorch.org/whl/<variant> (e.g. cu128); "
            "`envcheck plan --gpu \"<your GPU>\"` picks the variant for your GPU and driver.")


@helper
def cpu_build_fix(ctx: Context) -> str:
    nvidia = [g for g in ctx.gpus() if g.vendor == "nvidia"]
    if nvidia:  # never a CPU reinstall on a machine known to have the GPU: the driver is the fix
        names = ", ".join(dict.fromkeys(g.name for g in nvidia))
        return (f"this machine has an NVIDIA GPU ({names}), so fix its driver rather than give it up; "
                "`envcheck plan --backend cpu` plans a CPU build if you mean to.")
    plan, _ = ctx.plan()
    if plan is None:
        return "`envcheck plan --backend cpu` picks one."
    return f"{ctx.install_command(plan)}."


@helper
def libhsa_fix(ctx: Context) -> str:
    step = ctx.matrix.steps.get("remove-bundled-libhsa")
    bundled = ((ctx.facts.run("wsl_libhsa") or {}).get("data") or {}).get("bundled") or []
    where = f" (found: {', '.join(bundled)})" if bundled else ""
    if step is None:
        return f"Remove the libhsa-runtime64.so that the torch wheel bundles in torch/lib{where}."
    # one line the user can paste: the step's lines joined by && (newlines are lost in a one-line fix,
    # and `location=… cd "${location}…"` on one line expands ${location} before the assignment)
    shell = " && ".join(line.strip() for line in step.shell.splitlines() if line.strip())
    return f"{step.description}{where}: `{shell}`"


def _reinstall_same(ctx: Context) -> Optional[str]:
    """The command that reinstalls the installed torch build (same release and variant), if on record."""
    torch = public_version(ctx.facts.torch_version)
    if torch and ctx.release(torch) and ctx.variant:
        plan, _ = ctx.plan(torch=torch, backend=ctx.variant)
        if plan is not None:
            return ctx.install_command(plan)
    return None


@helper
def torch_lib_fix(ctx: Context) -> str:
    again = (_reinstall_same(ctx)
             or f"`{ctx.py_command('-m', 'pip', 'install', '--force-reinstall', 'torch')}` (from the index it came from)")
    return (f"If `import torch` itself fails, the torch install is incomplete: reinstall it, {again}, after "
            f"`{ctx.py_command('-m', 'pip', 'uninstall', '-y', 'torch')}` until no copy is left. If an extension fails, "
            "`import torch` before importing it, and rebuild the extension against the installed torch "
            "(`pip install --no-build-isolation --force-reinstall --no-cache-dir <package>`).")


def _torch_without_cuda(ctx: Context) -> bool:
    """The facts show a torch with no CUDA libraries: the CPU-only build (``+cpu``), a ROCm or XPU one."""
    v = ctx.variant or ""
    return bool(v) and not v.startswith("cu")


@helper
def cpu_torch_desc(ctx: Context) -> str:
    """What the facts say of the installed torch, for a CUDA-only library that is missing."""
    v = ctx.facts.torch_version or ""
    if ctx.variant == "cpu":
        return f"The installed torch {v} is the CPU-only build: it has no CUDA libraries at all. ".replace("  ", " ")
    if _torch_without_cuda(ctx):
        return f"The installed torch {v} is a {ctx.variant} build: it has no CUDA libraries. ".replace("  ", " ")
    if ctx.variant and v:
        return (f"The installed torch {v} is a {ctx.variant} build, so its own copy is incomplete "
                "(a mixed or interrupted install) or the extension was built for another torch release. ")
    return ""


@helper
def cuda_lib_torch_fix(ctx: Context) -> str:
    """A GPU build for this machine (plan's answer, never a reinstall of the CPU build), and the
    extension rebuilt against it — or, to stay on the CPU, the extension's CPU build."""
    if _torch_without_cuda(ctx) or not ctx.variant:
        gpu = cuda_build_fix(ctx)
    else:
        again = _reinstall_same(ctx) or f"`{ctx.py_command('-m', 'pip', 'install', '--force-reinstall', 'torch')}`"
        gpu = f"Reinstall the installed CUDA build: {again}."
    return (f"{gpu} Then rebuild the extension against the installed torch "
            "(`pip install --no-build-isolation --force-reinstall --no-cache-dir <package>`), or install the "
            "extension's build made for that torch. To keep the torch you have instead, install or build the "
            "extension for it (its CPU or ROCm build) — never a CUDA one.")


@helper
def python_dev(ctx: Context) -> str:
    """``python3.11-dev``: the Debian/Ubuntu package with this Python's headers."""
    py = (ctx.python or "").rstrip("t")
    return f"python{py}-dev" if re.fullmatch(r"3\.\d+", py) else "python3-dev"


@helper
def python_devel(ctx: Context) -> str:
    """``python3.11-devel``: the RHEL/Fedora package with this Python's headers."""
    return python_dev(ctx)[: -len("-dev")] + "-devel"


@helper
def interpreter(ctx: Context) -> str:
    """The interpreter's path as prose (``in this interpreter (/venv/bin/python)``)."""
    return ctx.facts.interpreter


@helper
def interpreter_cmd(ctx: Context) -> str:
    """The interpreter as the first word of a command (quoted for the environment's shell)."""
    return ctx.py_command()


@helper
def unpublished_torch(ctx: Context) -> str:
    """For a ``torch==X.Y.Z`` pin inside the span torch-releases.toml covers (every PyPI release from its
    first row on) that is not one of its rows: that release does not exist on PyPI, whatever the Python
    or platform (e2e-coref-pytorch#1: a README's ``torch==1.15.0`` for 1.5.0). ``""`` otherwise."""
    m = re.fullmatch(r"torch\s*===?\s*(\d+\.\d+(?:\.\d+)?)(?:\+[\w.]+)?", (ctx.groups.get("req") or "").strip())
    if not m:
        return ""
    want = m.group(1) if m.group(1).count(".") == 2 else m.group(1) + ".0"
    known = sorted(ctx.matrix.release_by_version, key=vkey)
    if not known or ctx.release(want) is not None or not vkey(known[0]) <= vkey(want) <= vkey(known[-1]):
        return ""
    below = [v for v in known if vkey(v) < vkey(want)][-1]
    above = next(v for v in known if vkey(v) > vkey(want))
    return (f" There is no torch {want} on PyPI at all (envcheck's list of PyPI's torch releases, {known[0]} to "
            f"{known[-1]}, goes from {below} to {above}): check the version in the pin — a typo, or a release that "
            "exists only on another index.")


@helper
def install_fix(ctx: Context) -> str:
    lock = ctx.lock
    if lock is not None and lock.pins:  # `verify --lock`: the plan the user chose, not a new one for this host
        name = lock.expect.torch_version or f"{lock.torch}+{lock.variant}"
        want, have = lock.expect.python, ctx.python
        py = ""
        if want and have and want.rstrip("t") != ".".join(have.split(".")[:2]):
            py = (f" The lock is for Python {want} and this interpreter is Python {have}: its wheels do not "
                  f"install here; make a Python {want} environment first (the lock's install.sh/install.ps1 "
                  f"does), or plan for this one with `envcheck plan --python {'.'.join(have.split('.')[:2])}`.")
        return (f"Install the lock's pins (torch {name}, {lock.path}): "
                f"{ctx.pip_command(lock.pins, lock.index_option, reinstall=False)}.{py}")
    # the message names the build being installed (torch==1.11.0+cu113, torch-2.1.0+cu121-…whl): with no GPU
    # known here its backend decides, never a CPU default for a CUDA message (breaker6 F2's class)
    stated = ctx.hints.get("backend") if not ctx.gpus() else None
    family = re.sub(r"^cu\d+$", "cuda", re.sub(r"^rocm[\d.]+$", "rocm", stated or ""))
    plan, _ = ctx.plan(backend=family) if family else ctx.plan()
    if plan is None:
        return "`envcheck plan` explains which build fits this machine and how to install it."
    which = "picks for this machine" if not family else f"picks for the {family} build the message names"
    cmd = "envcheck plan" + (f" --backend {family}" if family else "")
    return (f"Install the build `{cmd}` {which}: {ctx.install_command(plan, reinstall=False)} "
            f"({plan.title}), or write all install files with `{cmd} -o DIR`.")


@helper
def python(ctx: Context) -> str:
    return ctx.python or "?"


# -- evidence helpers: wheels of two CUDA majors, shadowing libraries, host facts ----------------

def _before_lib(ctx: Context) -> Optional[str]:
    """The shared object named just before the match (``…/libcusparse.so.12: undefined symbol``)."""
    found = re.findall(r"([^\s'\"()]{0,400}?[\w.+-]{1,80}\.(?:so(?:\.\d{1,6}){0,4}|dll|dylib))", ctx.before)
    return found[-1] if found else None


@helper
def failing_lib(ctx: Context) -> str:
    """``/venv/…/nvidia/cusparse/lib/libcusparse.so.12`` — the file the loader was resolving — or a phrase."""
    lib = _before_lib(ctx)
    return lib if lib else "A library torch loads"


@helper
def shadow_desc(ctx: Context) -> str:
    """What the facts show: wheels of two CUDA majors, libraries loaded from outside the wheel."""
    from envcheck.verify.evidence import mixed_majors, shadowing

    parts = []
    for mm in mixed_majors(ctx.facts):
        parts.append(f"installed: {', '.join(d for ds in mm.majors.values() for d in ds)}")
    for soname, path in shadowing(ctx.facts)[:4]:
        parts.append(f"{soname} was loaded from {path}, not from the nvidia wheel")
    return (" Here " + "; ".join(parts) + ".") if parts else ""


@helper
def cuda_symbol_fix(ctx: Context) -> str:
    """The exact uninstall for mixed majors, the shadowing folder to drop, else the general way."""
    from envcheck.verify.evidence import ld_path_suspects, mixed_majors, shadowing

    steps = []
    for mm in mixed_majors(ctx.facts):
        if mm.remove:
            steps.append(f"`{ctx.py_command('-m', 'pip', 'uninstall', '-y', *mm.remove)}` (torch uses CUDA {mm.keep})")
        else:
            steps.append(f"uninstall the {mm.base}-cuNN wheels of the CUDA major torch does not use "
                         f"({', '.join('cu' + k for k in sorted(mm.majors))} are installed)")
    shadows = shadowing(ctx.facts)
    if shadows:
        import os.path

        dirs = sorted({os.path.dirname(p) for _, p in shadows})
        steps.append(f"remove {', '.join(dirs)} from LD_LIBRARY_PATH (and /etc/ld.so.conf.d) so torch loads the "
                     "libraries of its nvidia-* wheels")
    elif ld_path_suspects(ctx.facts):
        steps.append(f"unset or trim LD_LIBRARY_PATH (here {':'.join(ld_path_suspects(ctx.facts))}): the loader "
                     "searches it before the nvidia-* wheels torch was built against")
    if steps:
        return "Fix the environment: " + "; then ".join(steps) + "."
    again = _reinstall_same(ctx)
    return ("List the CUDA wheels with `" + ctx.py_command("-m", "pip", "list") + " | grep nvidia-` and uninstall those of a CUDA major "
            "torch does not use (torch's own are in `pip show torch`); unset LD_LIBRARY_PATH entries that point at "
            "a CUDA toolkit (/usr/local/cuda*/lib64) or another package's copy; then reinstall torch with its "
            "dependencies" + (f": {again}" if again else " from the index it came from") + ".")


@helper
def stdcxx_lib(ctx: Context) -> str:
    m = re.findall(r"(\S{0,300}libstdc\+\+\.so\.6)", ctx.before)
    if m:
        return f" ({m[-1].lstrip(':')})"
    from envcheck.verify.evidence import loaded

    libs = loaded(ctx.facts, "libstdc++.so")
    return f" ({libs[0]})" if libs else ""


@helper
def numpy_desc(ctx: Context) -> str:
    dists = ctx.facts.packages("numpy")
    if dists:
        return f" (numpy {dists[0].get('version')} at {dists[0].get('location')})"
    if ctx.facts.section("packages"):
        return " (no numpy distribution is installed in this interpreter)"
    return ""


@helper
def numpy_built(ctx: Context) -> str:
    """Whether the installed torch itself is the module built for NumPy 1, per its plan's NumPy
    requirement (matrices/numpy.toml): a sentence fragment after "torch 2.1.2+cu121"."""
    want, _ = ctx.numpy_requirement()
    if want is None:
        return " (which NumPy it was built against is not on record here)" if ctx.facts.torch_version else ""
    from envcheck.verify.context import satisfies

    if satisfies("2.0.0", want):
        return " runs with NumPy 2 (its plan: " + want + "), so the module built for NumPy 1 is another extension"
    return " was built against NumPy 1 (its plan: " + want + ")"


@helper
def numpy_plan(ctx: Context) -> str:
    """``"; the plan for this torch installs numpy<2 (the lock …)"``: the NumPy requirement, or ``""``."""
    want, where = ctx.numpy_requirement()
    return f"; the plan for this torch installs {want} ({where})" if want else ""


@helper
def numpy_fix(ctx: Context) -> str:
    """Install the NumPy the plan for the installed torch names (the lock's, else the resolver's)."""
    want, where = ctx.numpy_requirement()
    if want is None:
        which = ("this build's is not on record" if ctx.facts.torch_version
                 else "`envcheck verify` reads the installed torch and says its own")
        return ("Keep NumPy 1 while a module built for it is loaded: `" + ctx.py_command("-m", "pip", "install", "numpy<2")
                + f"`. `envcheck plan` names the NumPy each torch build runs with (matrices/numpy.toml); {which}.")
    from envcheck.verify.context import satisfies

    install = "`" + ctx.py_command("-m", "pip", "install", want) + "`"
    if satisfies("2.0.0", want):
        return (f"torch{torch_desc(ctx)} runs with any NumPy ({where}): if NumPy is missing, {install}; if an "
                "extension built for NumPy 1 is what fails, upgrade it (the traceback names it) or keep NumPy 1 — "
                f"`{ctx.py_command('-m', 'pip', 'install', 'numpy<2')}` — until it has a NumPy 2 build.")
    return (f"Install the NumPy torch{torch_desc(ctx)} runs with ({where}): {install}; or move to a torch built "
            "against NumPy 2 (`envcheck plan` picks one).")


@helper
def dll_desc(ctx: Context) -> str:
    dll = ctx.groups.get("dll")
    return dll.replace("\\\\", "\\") if dll else "a torch DLL"


@helper
def vcrt_desc(ctx: Context) -> str:
    from envcheck.verify.evidence import vcruntime_missing

    have = ctx.facts.section("platform").get("vcruntime")
    missing = vcruntime_missing(ctx.facts)
    if missing:
        found = f" (found: {', '.join(have)})" if have else ""
        return f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing from System32 on this machine{found}."
    if isinstance(have, list):
        return f"this machine has {', '.join(have)}, so a missing dependency of torch's own DLLs is more likely."
    return "a fresh Windows or a minimal Python install often lacks them."


@helper
def host_desc(ctx: Context) -> str:
    """What the host itself rules out: WSL 1 (no GPU at all), a macOS virtual machine (no Metal GPU
    for MPS) — from the collector's platform facts."""
    plat = ctx.facts.section("platform")
    if plat.get("wsl") and plat.get("wsl_version") == 1:
        return (" This Linux runs under WSL 1, which has no GPU access at all: GPU compute (CUDA, ROCm) needs WSL 2"
                " (`wsl --set-version <distro> 2` in Windows).")
    if plat.get("os") == "macos" and plat.get("vm") is True:
        return (" This macOS runs in a virtual machine (kern.hv_vmm_present = 1): Apple's Virtualization framework gives"
                " it no Metal GPU for MPS, although torch.backends.mps.is_available() may say True (hosted CI runners).")
    return ""


@helper
def visible_desc(ctx: Context) -> str:
    env = ctx.facts.section("env")
    if "CUDA_VISIBLE_DEVICES" in env:
        return f" Here CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']!r}."
    return ""


@helper
def accelerator_desc(ctx: Context) -> str:
    gpus = ctx.gpus()
    if not gpus:
        return ""
    return " This machine's GPUs: " + ", ".join(f"{g.name} ({g.vendor})" for g in gpus) + "."


@helper
def xpu_build_fix(ctx: Context) -> str:
    """The XPU build for an Intel GPU; else the device this machine really has (MPS, CUDA, ROCm)."""
    gpus = ctx.gpus()
    vendors = {g.vendor for g in gpus}
    if "intel" in vendors:
        plan, _ = ctx.plan(backend="xpu")
        if plan is not None:
            return f"Install the XPU build: {ctx.install_command(plan)} ({plan.title})."
        return "No XPU build on record fits this machine: `envcheck plan --backend xpu --explain` says why."
    if not gpus:  # the machine is not known: the XPU build only if it has an Intel GPU, else ask for the GPU
        plan, _ = ctx.plan(backend="xpu")
        xpu = f"install the XPU build: {ctx.install_command(plan)} ({plan.title})" if plan is not None else (
            "`envcheck plan --backend xpu` picks the XPU build")
        return (f"The build depends on the machine's GPU, which is not known here. With an Intel GPU, {xpu}. With "
                "another GPU, the code must not ask for \"xpu\": name the GPU (`envcheck explain --gpu \"<your GPU>\" …`, "
                "`envcheck plan --gpu \"<your GPU>\"`) for plan's build and the device to use.")
    if vendors & {"apple"}:
        return "This is a Mac: there is no XPU here; use `torch.device(\"mps\")` (the Apple GPU) instead of \"xpu\"."
    plan, _ = ctx.plan()
    if plan is not None:
        return (f"This machine has no Intel GPU; use the device it has (\"cuda\" for NVIDIA and AMD ROCm builds) with "
                f"the build `envcheck plan` picks: {ctx.install_command(plan)} ({plan.title}).")
    return "Use the device this machine has; `envcheck plan` picks the build for it."


def _group_in_parens(ctx: Context, group: str, label: str = "") -> str:
    """`` (label value)`` of a pattern group the message had, or nothing."""
    value = ctx.groups.get(group)
    return f" ({label}{value})" if value else ""


@helper
def named_arch(ctx: Context) -> str:
    return _group_in_parens(ctx, "sm")


@helper
def shm_desc(ctx: Context) -> str:
    from envcheck.verify.evidence import shm_mib, shm_small

    mib = shm_mib(ctx.facts)
    if mib is None:
        return ""
    where = " in a container" if ctx.facts.section("platform").get("container") else ""
    small = " — too small" if shm_small(ctx.facts, ctx.matrix) else ""
    return f" Here /dev/shm is {mib} MiB{where}{small}."


@helper
def python_desc(ctx: Context) -> str:
    sec = ctx.facts.section("python")
    py, bits = ctx.python, sec.get("bits")
    if not py:
        return ""
    text = f" This interpreter is Python {py}" + (f", {bits}-bit" if bits else "")
    arch = ctx.facts.section("platform").get("arch")
    return text + (f", {arch}" if arch else "") + "."


@helper
def wheel_desc(ctx: Context) -> str:
    wheel = ctx.groups.get("wheel") or ""
    m = re.search(r"-cp(\d)(\d{1,2})", wheel)
    want = f" (it is for Python {m.group(1)}.{m.group(2)}" if m else ""
    if want and ctx.python:
        want += f"; this interpreter is Python {ctx.python}"
    return want + ")" if want else ""


@helper
def need_desc(ctx: Context) -> str:
    """The size an out-of-memory message says was asked for, and on which device."""
    need, backend = ctx.groups.get("need"), ctx.groups.get("backend")
    if need:
        return f"{backend or 'the GPU'} was asked for {need} more"
    return "the size is in the full message"


@helper
def count_desc(ctx: Context) -> str:
    dev, count = ctx.groups.get("dev"), ctx.groups.get("count")
    if dev is not None and count is not None:
        return (f"this process has no CUDA device {dev}: it sees {count} GPU{'s' if count != '1' else ''}, "
                f"numbered from 0 (a machine with fewer GPUs than the one that saved it, or CUDA_VISIBLE_DEVICES "
                f"hiding some)")
    return ("this process sees no usable CUDA GPU (torch.cuda.is_available() is False): the machine has no NVIDIA "
            "GPU, or torch cannot use it — a CPU-only torch build, no working driver, or CUDA_VISIBLE_DEVICES "
            "hiding it")


@helper
def cc_desc(ctx: Context) -> str:
    return _group_in_parens(ctx, "cc", "compute capability ")


@helper
def ext_desc(ctx: Context) -> str:
    """Which extension a mismatch message names, and the torch it says it was built for."""
    if ctx.groups.get("xformers"):
        built, have = ctx.groups.get("built_for"), ctx.groups.get("have")
        if built and have:
            cpu = "; the installed torch is a CPU-only build" if have.endswith("+cpu") else ""
            return f"xFormers, built for torch {built} while torch {have} is installed{cpu}"
        return "xFormers"
    lib = ctx.groups.get("lib")
    return lib.replace("\\", "/").rsplit("/", 1)[-1] if lib else "a package with compiled C++/CUDA code"


@helper
def pkg_desc(ctx: Context) -> str:
    pkg = ctx.groups.get("pkg")
    return f"package {pkg}" if pkg else "package it was asked for"


@helper
def pkg_conflict(ctx: Context) -> str:
    pkg = ctx.groups.get("pkg")
    return f" (the conflict it names is over {pkg})" if pkg else ""


@helper
def lib_found(ctx: Context) -> str:
    lib = ctx.groups.get("lib")
    return f" ({lib} is not in the installed bitsandbytes)" if lib else ""


@helper
def compile_windows_torch(ctx: Context) -> str:
    """The first release whose torch.compile does not refuse Windows (matrix [release.compile] windows)."""
    ok = [r.version for r in ctx.matrix.releases if r.compile_python_max and r.compile_windows is not False]
    return min(ok, key=vkey) if ok else "a newer release"


def arch_report(ctx: Context) -> List[Dict[str, object]]:
    """Per visible GPU: its arch and what in the installed build serves it (for arch_compat)."""
    from envcheck.resolve.rules import arch_serves
    from envcheck.verify.context import split_arch_list

    arch = list(ctx.facts.build.get("arch_list") or [])
    sm, ptx = split_arch_list(arch)
    out = []
    for d in ctx.facts.devices:
        gfx = gfx_of(d.get("gcn_arch"))
        row: Dict[str, object] = {"name": d.get("name") or "GPU", "index": d.get("index")}
        if gfx:
            row.update(arch=gfx, serves="exact" if gfx in arch else None, by=gfx if gfx in arch else None)
        else:
            cap = d.get("capability") or [0, 0]
            row["arch"] = sm_of(cap)
            row["capability"] = f"{cap[0]}.{cap[1]}"
            exact, compat, jit = arch_serves(sm, ptx, int(cap[0]), int(cap[1]))
            if exact:
                row.update(serves="exact", by=exact[0])
            elif compat:
                row.update(serves="cubin", by=max(compat)[1])
            elif jit:
                row.update(serves="ptx", by=max(jit)[1])
            else:
                row.update(serves=None, by=None)
        out.append(row)
    return out


__all__ = ["Finding", "Garbled", "load_rules", "load_tolerances", "match", "HELPERS", "arch_report", "text_hints"]
