"""``plan``: resolve the matrix for a machine — named by flags, read from a machine file, or this
one (probe) — and make the install plan. No argparse, no printing."""

from __future__ import annotations

from envcheck.record import field, record, replace
from envcheck.errors import UsageError
from envcheck.jsontypes import JSON, JSONObject, cast

TYPE_CHECKING = False  # typing and pathlib are not imported at run time (start-up, issue #9)
if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path
    from typing import Callable, Dict, List, Optional, Sequence, Tuple

    from envcheck.machine.model import Machine
    from envcheck.matrix import Matrix
    from envcheck.resolve.plan import Plan
    from envcheck.resolve.types import Request, Resolution

#: the target-machine fields that, when any is given, mean "a described machine" (no probe)
TARGET_FIELDS = ("gpus", "wsl", "os", "arch", "glibc", "distro", "macos")


@record
class Target:
    """The machine to plan for, as the user described it (all optional; nothing → this machine).

    ``gpus`` holds one entry per ``--gpu`` occurrence, each the words given after it
    (``["RTX", "4090"]`` is one GPU; ``["a100", "h100"]`` two): see :func:`gpu_names`.
    """

    gpus: List[List[str]] = field(default_factory=list)
    wsl: bool = False
    os: Optional[str] = None
    arch: Optional[str] = None
    driver: Optional[str] = None
    python: Optional[str] = None
    glibc: Optional[str] = None
    distro: Optional[str] = None
    macos: Optional[str] = None
    machine_file: Optional[Path] = None
    for_gpu: Optional[str] = None

    @property
    def named(self) -> bool:
        return any(getattr(self, f) for f in TARGET_FIELDS)


@record
class PlanRequest:
    """Everything ``plan`` needs: the target, what to install, where the matrix is, how to write."""

    target: Target = field(default_factory=Target)
    torch: Optional[str] = None
    backend: str = "auto"
    compile: bool = False
    prefer: str = "complete"
    mirrors: Sequence[str] = ()
    hashes: bool = False
    matrices: Optional[Path] = None
    without: Sequence[str] = ()


@record
class PlanResult:
    """The matrix read, the resolution (every candidate with its reasons) and the plan (``None``
    when no build fits)."""

    matrix: Matrix
    resolution: Resolution
    plan: Optional[Plan]

    @property
    def exit_code(self) -> int:
        return 0 if self.plan is not None else 1


def gpu_names(matrix: Matrix, groups: List[List[str]]) -> List[str]:
    """The GPU names of the ``--gpu`` values: each group is the words given after one ``--gpu``.

    A value holding a space was quoted as a whole name: it is one GPU. Single words (unquoted) are
    one name or several: ``--gpu RTX 4090`` is one GPU, ``--gpu a100 h100`` two, and ``--gpu H100 AMD
    Ryzen 9 7940HS w/ Radeon 780M Graphics`` two (see :func:`_word_names`). Joined blindly, the APU's
    ``w/`` split or a ``(gfxN)`` suffix would read several names as one GPU and drop the others.

    Raises:
        UnknownGpuError: a name matches no GPU (exit 2, with close matches).
    """
    names: List[str] = []
    for tokens in groups:
        words: List[str] = []
        for tok in tokens:
            if len(tok.split()) > 1:
                names += _word_names(matrix, words)
                words = []
                _known(matrix, tok)
                names.append(tok)
            else:
                words.append(tok)
        names += _word_names(matrix, words)
    return names


def _known(matrix: Matrix, name: str) -> None:
    """Raises UnknownGpuError when ``name`` names no GPU (an architecture or a ``(gfxN)`` suffix counts)."""
    from envcheck.machine.describe import gpu_from_arch, split_count
    from envcheck.matrix import printed_target

    text, _ = split_count(name)
    if gpu_from_arch(text) is None and not printed_target(text):  # "… (gfx906:sramecc+:xnack-)"
        matrix.find_gpu(text)


#: the most unquoted words read as GPU names (longer runs are refused: quote each name); sourced from
#: nothing but sense — the longest names as tools print them are 8-9 words — and it bounds the split's work
MAX_GPU_WORDS = 16


def _word_names(matrix: Matrix, words: List[str]) -> List[str]:
    """Unquoted words as GPU names; no word is ever dropped. The words are one GPU when together
    they are one name (``RTX 4090``: one look-up, the common case; or a name as tools print it:
    :meth:`Matrix.names_one_gpu`); several GPUs when they split completely into such names (``H100
    80GB A100``, ``GA100 H100``, ``H100 AMD Ryzen 9 7940HS w/ Radeon 780M Graphics``), the split with
    the fewest names. Words left over, or two splits as short, are an error that says how to quote.

    Raises:
        UnknownGpuError: words that are no GPU name on record (exit 2, naming them).
        UsageError: more than :data:`MAX_GPU_WORDS` words, or words that split two ways (exit 2).
    """
    from envcheck.machine.describe import gpu_from_arch, split_count

    if not words:
        return []
    joined = " ".join(words)
    if len(words) == 1:
        _known(matrix, joined)
        return [joined]
    if len(words) > MAX_GPU_WORDS:
        raise UsageError(f"--gpu {_shown_words(words[:8])} …: {len(words)} unquoted words; at most {MAX_GPU_WORDS} "
                         f"are read as GPU names. {QUOTE_HINT}")
    n = len(words)
    one: Dict[Tuple[int, int], bool] = {}

    def names(i: int, j: int) -> bool:  # words[i:j] name one GPU, every word understood
        if (i, j) not in one:
            try:
                text = split_count(" ".join(words[i:j]))[0]  # "2x A100"
                one[(i, j)] = gpu_from_arch(text) is not None or matrix.names_one_gpu(text.split())
            except UsageError:  # "0x H100", "gfx942:xnack+:xnack+": not a name here (one word is checked alone)
                one[(i, j)] = False
        return one[(i, j)]

    if names(0, n):  # one name ("RTX 4090": one look-up)
        return [joined]
    # splits[i]: the fewest names words[i:] split into — up to two such splits (two: ambiguous)
    splits: List[List[List[str]]] = [[] for _ in range(n)] + [[[]]]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n + 1):
            if splits[j] and names(i, j):
                found = [[" ".join(words[i:j])] + rest for rest in splits[j]]
                if not splits[i] or len(found[0]) < len(splits[i][0]):
                    splits[i] = found[:2]
                elif len(found[0]) == len(splits[i][0]):
                    splits[i] = (splits[i] + found)[:2]
    if len(splits[0]) == 1:
        return splits[0][0]
    if splits[0]:
        a, b = (" ".join(shlex_quote(x) for x in s) for s in splits[0])
        raise UsageError(f"--gpu {_shown_words(words)}: the words name GPUs in two ways ({a} or {b}). {QUOTE_HINT}")
    raise _not_understood(matrix, words, names)


QUOTE_HINT = ("Quote each GPU's name as one value: --gpu 'NAME A' --gpu 'NAME B' (or --gpu 'NAME A' 'NAME B'); "
              "unquoted words are read only as whole GPU names, and none is dropped")


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text) if text.isprintable() else ascii(text)


def _shown_words(words: List[str]) -> str:
    return " ".join(shlex_quote(w) for w in words)


def _not_understood(matrix: Matrix, words: List[str], names: Callable[[int, int], bool]) -> Exception:
    """The error for words that do not split into names: it names the words no name takes (the split
    that leaves the fewest out), with close matches for the first of them."""
    from envcheck.errors import UnknownGpuError

    n = len(words)
    # best[i]: (words left out, the parts (start, end, named)) of the split of words[i:] that leaves fewest out
    best: List[Tuple[int, List[Tuple[int, int, bool]]]] = [(0, [])] * (n + 1)
    for i in range(n - 1, -1, -1):
        cand = (best[i + 1][0] + 1, [(i, i + 1, False)] + best[i + 1][1])
        for j in range(i + 1, n + 1):
            if names(i, j) and best[j][0] < cand[0]:
                cand = (best[j][0], [(i, j, True)] + best[j][1])
        best[i] = cand
    runs: List[List[str]] = []
    after_named = True
    for i, j, named in best[0][1]:
        if not named:
            if after_named:
                runs.append([])
            runs[-1] += words[i:j]
        after_named = named
    first = " ".join(runs[0]) if runs else " ".join(words)
    try:
        matrix.find_gpu(first)
        suggestions: List[str] = []
        generic = False
    except UnknownGpuError as e:
        suggestions, generic = e.suggestions, e.generic
    others = [" ".join(r) for r in runs[1:]]
    return UnknownGpuError(first, suggestions, generic=generic, among=_shown_words(words), also=others)


def build_machine(target: Target, matrix: Matrix) -> Machine:
    """The Machine to plan for: the machine file, the named flags, or this machine (probe)."""
    from envcheck.machine.describe import apply_flags

    names = gpu_names(matrix, target.gpus)
    if target.machine_file:
        from envcheck.machine.io import load_machine  # (its schema tables: only to read a machine file)

        base = load_machine(target.machine_file, matrix)
    elif target.named:
        base = None
    else:
        from envcheck.probe import probe_machine

        base = probe_machine(matrix)
    return apply_flags(matrix, base, gpus=names, wsl=target.wsl, os=target.os, arch=target.arch,
                       driver=target.driver, python=target.python, glibc=target.glibc,
                       distro=target.distro, macos=target.macos, for_gpu=target.for_gpu,
                       described=target.named or bool(target.machine_file))


def check_request(request: Request, matrix: Matrix) -> None:
    """--torch must match a release on record and --backend name a variant on record.

    Raises:
        UsageError: they do not (exit 2), listing what is known.
    """
    versions = matrix.versions()
    if request.nightly:  # planned from the nightly index with the nearest release's facts
        return
    if request.torch is not None and not any(request.torch.contains(v, prereleases=True) for v in versions):
        newer_than_known(request, matrix)
        raise UsageError(f"--torch {request.torch_text}: no torch release on record matches (envcheck knows "
                         f"{versions[-1]} … {versions[0]}; `envcheck matrix show` lists them)")
    family = {"auto", "cpu", "cuda", "rocm", "xpu", "mps"}
    variants = {b.variant for b in matrix.builds}
    want = request.backend
    if want not in family and not any(v == want or v.startswith(want + ".") for v in variants):
        known = sorted(v for v in variants if v.startswith(("cu", "rocm")))
        raise UsageError(f"--backend {want}: no build on record has that variant; known: " + ", ".join(known))


def newer_than_known(request: Request, matrix: Matrix) -> None:
    """A --torch that names a release newer than the newest on record is said as such (the data is
    older than the release), not as "no release matches".

    Raises:
        UsageError: the spec asks for a release newer than any envcheck knows (exit 2).
    """
    from packaging.version import InvalidVersion, Version

    from envcheck.matrix.freshness import data_date, newest_release

    assert request.torch is not None
    spec = request.torch
    newest = newest_release(matrix)
    parts = [int(x) for x in newest.split(".")[:3]]
    later = [f"{parts[0]}.{parts[1]}.{parts[2] + 1}", f"{parts[0]}.{parts[1] + 1}.0", f"{parts[0] + 1}.0.0"]
    later += [sp.version.replace(".*", ".0") for sp in spec]  # the versions the spec names

    def newer(v: str) -> bool:
        try:
            return Version(v) > Version(newest) and spec.contains(v, prereleases=True)
        except InvalidVersion:
            return False

    if any(newer(v) for v in later):
        from envcheck.install_hint import update_hint

        day, what = data_date(matrix)
        raise UsageError(f"--torch {request.torch_text}: newer than any release envcheck knows (newest: "
                         f"{newest}; data of {day.isoformat() if day else '?'}, {what}) — update envcheck "
                         f"({update_hint()}) or its index data (`envcheck matrix update`)")


def companions_left_out(values: Sequence[str]) -> List[str]:
    """``--without torchaudio,torchvision`` → the package names.

    Raises:
        UsageError: a name that is not a companion (torch itself cannot be left out).
    """
    out: List[str] = []
    for v in values:
        for name in (x.strip().lower() for x in v.split(",")):
            if not name:
                continue
            if name not in ("torchvision", "torchaudio"):
                raise UsageError(f"--without {name}: only the companions can be left out (torchvision, torchaudio)")
            out.append(name)
    return out


def extra_plans(result: PlanResult, extras: str, req: PlanRequest) -> List[Plan]:
    """``--extras cpu,cu130``: the plan of each named backend for the same machine and --torch, from
    the resolver (one answer everywhere).

    Raises:
        UsageError: a backend the matrix does not know, or one no build of which fits (exit 2).
    """
    from envcheck.resolve import Request, resolve
    from envcheck.resolve.plan import make_plan, parse_mirrors

    res, matrix = result.resolution, result.matrix
    mirrors = parse_mirrors(list(req.mirrors))
    without = companions_left_out(req.without)
    out = []
    for name in (x.strip().lower() for x in (extras or "").split(",")):
        if not name:
            continue
        request = Request(torch=res.request.torch, torch_text=res.request.torch_text,
                          backend=Request.parse_backend(name), compile=res.request.compile,
                          prefer=res.request.prefer)
        check_request(request, matrix)
        p = make_plan(resolve(res.machine, request, matrix), matrix, mirrors, without=without)
        if p is None:
            raise UsageError(f"--extras {name}: no {name} build fits this machine and --torch "
                             f"(`envcheck plan --backend {name} --explain` says why)")
        out.append(p)
    return out


def plan(req: PlanRequest) -> PlanResult:
    """Resolve ``req`` and make its plan.

    Raises:
        UsageError: a bad flag, unknown GPU, a --torch/--backend the matrix does not know (exit 2).
        DataFileError: a malformed machine file or matrix (exit 2).
    """
    from envcheck.matrix import load_matrix
    from envcheck.resolve import Request, resolve
    from envcheck.resolve.plan import make_plan, parse_mirrors

    mirrors = parse_mirrors(list(req.mirrors))
    request = Request(
        torch=Request.parse_torch(req.torch) if req.torch else None,
        torch_text=req.torch or "",
        backend=Request.parse_backend(req.backend),
        compile=req.compile,
        prefer=req.prefer,
    )
    matrix = load_matrix(req.matrices)
    if not matrix.builds or not matrix.releases:  # bad input, not "nothing fits" (0 candidates checked)
        raise UsageError(f"--matrices {matrix.directory}: holds no torch release or build "
                         "(torch-releases.toml, torch-builds*.toml): not a matrix folder envcheck can plan from")
    check_request(request, matrix)
    without = companions_left_out(req.without)
    machine = build_machine(req.target, matrix)
    res = resolve(machine, request, matrix)
    p = make_plan(res, matrix, mirrors, hashes=req.hashes, without=without)
    return PlanResult(matrix, res, p)


def plan_json(res: Resolution, p: Optional[Plan], files: List[str]) -> JSONObject:
    """The ``plan --json`` object (see DESIGN.md: chosen, candidates, …)."""
    chosen: Optional[JSONObject] = None
    if p is not None:
        c = p.candidate
        chosen = {
            "torch": c.release.version,
            "variant": c.build.variant,
            "python": p.python or None,
            "torchvision": p.pins.get("torchvision"),
            "torchaudio": p.pins.get("torchaudio"),
            "index_url": p.index_url,
            "index_kind": p.index_kind,
            "channel": c.build.channel,
            "pins": cast(JSON, p.pins),
            "requires": cast(JSON, p.requires),
            "pip": cast(JSON, p.pip_lines()),
            "driver": cast(JSON, p.driver or None),
            "post_install": [{"key": s.key, "shell": s.shell} for s in p.steps],
            "steps": cast(JSON, [s.to_dict() for s in p.recipe]),
            "hosts": cast(JSON, p.hosts()),
            "mirror_not_rewritten": cast(JSON, p.mirror_report()),
            "warnings": [w.to_dict() for w in c.warnings],
            "expect": cast(JSON, p.expect().to_dict()),
        }
    fb = res.fallback
    fallback: JSON = None if fb is None else {"torch": fb.release.version, "variant": fb.build.variant,
                                              "python": fb.python}
    return {
        "status": res.status,
        "machine": res.machine.to_dict(),
        "request": {"torch": res.request.torch_text or None, "backend": res.request.backend,
                    "compile": res.request.compile, "prefer": res.request.prefer},
        "chosen": chosen,
        "fallback": fallback,
        "alternatives": cast(JSON, res.alternatives),
        "assumptions": cast(JSON, res.assumptions),
        "candidates": [c.to_dict() for c in res.candidates],
        "files": cast(JSON, files),
    }


def only_packages(p: Plan, matrix: Matrix, packages: str) -> Plan:
    """The plan pinning only ``packages`` (``--packages torch``), its recipe rebuilt to match.

    Raises:
        UsageError: a package the plan does not pin, or a list without torch.
    """
    from envcheck.docker.wheelhouse import select_pins
    from envcheck.resolve.recipe import build_recipe

    pins = select_pins(p.pins, packages.split(","))
    dropped = [f"{k}{v}" for k, v in p.requires.items()]
    notes = list(p.notes) + ([f"--packages: {', '.join(dropped)} left out of the install (torch imports without "
                              "NumPy, with a warning; install it yourself for .numpy()/from_numpy)"] if dropped else [])
    out = replace(p, pins=pins, requires={}, notes=notes,
                              hashes={k: v for k, v in p.hashes.items() if k in pins},
                              without=tuple(sorted(set(p.without) | (set(p.pins) - set(pins)))))
    out.recipe = build_recipe(out, matrix, p.resolution.request.compile, p.steps)
    return out


@record(frozen=True)
class OutputRequest:
    """What to make of a plan: the ``formats`` to render (pip, conda, docker, lock, uv…) and their
    options, ``packages`` to pin only (``torch``), the folder to write into (``output``, files
    replaced only with ``force``), a folder to gather every wheel into (``download``), and whether
    the rendered files are wanted without a folder (``print_files``: ``plan --format`` alone).
    ``explicit``: the formats the user named (not through ``all`` or the default set): one of them
    that cannot be made for the plan is an error; any other is left out with a note."""

    formats: Sequence[str] = ("pip", "conda", "docker", "lock")
    explicit: Sequence[str] = ()
    style: str = "full"
    extras: str = ""
    pin_python: bool = False
    packages: Optional[str] = None
    output: Optional[str] = None  # a path (a string: no pathlib on a plan's way, #9)
    force: bool = False
    download: Optional[Path] = None
    print_files: bool = False
    timeout: float = 600.0  # seconds the tools a format or the download runs (uv, pip) may take in all


@record(frozen=True)
class PlanOutputs:
    """The plan as made (``packages`` applied; ``None`` when no build fits), the files rendered
    (name → text; empty unless written or asked for), the paths written, and the files left out
    because this plan cannot be made in their format (``(file name, why)``)."""

    plan: Optional[Plan]
    files: Dict[str, str] = field(default_factory=dict)
    written: List[str] = field(default_factory=list)
    skipped: List[Tuple[str, str]] = field(default_factory=list)


def make_outputs(result: PlanResult, request: PlanRequest, out: OutputRequest,
                 say: Optional[Callable[[str], None]] = None) -> PlanOutputs:
    """Render the plan of ``result`` into ``out.formats``, write them into ``out.output`` and
    gather the wheels into ``out.download`` (``say`` hears the download's progress).

    Raises:
        UsageError: a package the plan does not pin, a file that exists (without ``force``), an
            ``explicit`` format that cannot be made for this plan.
        WheelhouseError: wheels that cannot be had (``download``).
    """
    p = result.plan
    if p is None:
        return PlanOutputs(plan=None)
    if out.packages:
        p = only_packages(p, result.matrix, out.packages)
    from envcheck.render import render_available

    options: Dict[str, Dict[str, object]] = {"pip": {"style": out.style}, "variants": {"matrix": result.matrix},
                                             "pylock": {"timeout": out.timeout}}
    if "uv" in out.formats:
        options["uv"] = {"extra_plans": extra_plans(result, out.extras, request), "pin_python": out.pin_python}
    files: Dict[str, str] = {}
    written: List[str] = []
    skipped: List[Tuple[str, str]] = []
    if out.output is not None:
        from envcheck.render.write import write_outputs

        files, skipped = render_available(p, list(out.formats), options, out.explicit)
        written = [str(x) for x in write_outputs(out.output, files, out.force)]
    if out.download is not None:
        from envcheck.download import download_plan

        written += [str(x) for x in download_plan(p, result.matrix, out.download, out.force,
                                                   say or (lambda text: None), timeout=out.timeout)]
    if out.print_files and out.output is None:
        files, skipped = render_available(p, list(out.formats), options, out.explicit)
    return PlanOutputs(plan=p, files=files, written=written, skipped=skipped)


# -- plan flags as data ---------------------------------------------------------------------------
#: ``envcheck plan`` flags a data row may carry (``[[ci_target]] args``): flag → (field, takes a value)
_DATA_FLAGS: Dict[str, Tuple[str, bool]] = {
    "--gpu": ("gpu", True), "--wsl": ("wsl", False), "--os": ("os", True), "--arch": ("arch", True),
    "--driver": ("driver", True), "--python": ("python", True), "--glibc": ("glibc", True),
    "--distro": ("distro", True), "--macos": ("macos", True), "--torch": ("torch", True),
    "--backend": ("backend", True), "--compile": ("compile", False), "--mirror": ("mirror", True),
    "--prefer": ("prefer", True),
}


def request_from_flags(flags: Sequence[str], where: str, matrices: Optional[Path] = None) -> PlanRequest:
    """A :class:`PlanRequest` from ``envcheck plan`` flags stored as data (a ``[[ci_target]]``
    row's ``args``: ``["--backend", "cpu", "--torch", "2.13.0"]``), without a command-line parser.
    Each ``--gpu`` takes one value (a row spells a name as one string).

    Raises:
        UsageError: a flag plan does not take, a missing value, or a flag given twice (names ``where``).
    """
    target = Target()
    req = PlanRequest(target=target, matrices=matrices)
    mirrors: List[str] = []
    seen = set()
    it = iter(flags)
    for flag in it:
        name, value = flag.split("=", 1) if flag.startswith("--") and "=" in flag else (flag, None)
        spec = _DATA_FLAGS.get(name)
        if spec is None:
            raise UsageError(f"{where}: {flag!r} is not an `envcheck plan` flag this row may use "
                             f"({', '.join(_DATA_FLAGS)})")
        key, takes = spec
        if takes and value is None:
            value = next(it, None)
            if value is None or value.startswith("--"):
                raise UsageError(f"{where}: {name} needs a value")
        if key not in ("gpu", "mirror") and key in seen:
            raise UsageError(f"{where}: {name} given twice")
        seen.add(key)
        if key == "gpu":
            target.gpus.append([str(value)])
        elif key == "mirror":
            mirrors.append(str(value))
        elif key == "wsl":
            target.wsl = True
        elif key == "compile":
            req.compile = True
        elif key in ("torch", "backend", "prefer"):
            setattr(req, key, value)
        else:
            setattr(target, key, value.lower() if key == "os" and value else value)
    req.mirrors = mirrors
    return req
