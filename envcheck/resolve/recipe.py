"""A plan as a recipe: the ordered, typed steps from the OS as it comes to a passing ``envcheck verify``.

The steps come from data: ``matrices/recipe.toml`` (host driver, system runtime, Python + venv,
install, verify — chosen by each row's ``when``) and the build's own post-install steps
(``post_install`` keys → ``[[step]]`` rows). Every renderer prints this one list.
"""

from __future__ import annotations

import re
import shlex

from envcheck.record import field, record
from envcheck.jsontypes import JSONObject
from envcheck.matrix.model import RECIPE_KINDS, RecipeRow, Step, vkey

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Mapping, Sequence, Tuple

if TYPE_CHECKING:
    from envcheck.matrix import Matrix
    from envcheck.resolve.plan import Plan

LOCK_NAME = "envcheck.lock.toml"


@record(frozen=True)
class RecipeStep:
    """One step of a plan's recipe, placeholders filled in.

    Attributes:
        kind: ``host``, ``system``, ``python``, ``install``, ``post-install`` or ``verify``.
        key: a stable name (``rocm-wsl-runtime``, ``remove-bundled-libhsa``…).
        title: what the step achieves, in words.
        runs_in: ``windows``, ``linux`` or ``macos`` — the OS whose shell runs it (on WSL the
            host steps run in Windows, the others in the Linux guest).
        shell: ``bash``, ``powershell`` or ``manual`` (a person does it; scripts check it).
        root: needs administrator rights (``sudo`` / an elevated PowerShell).
        commands: what to run (may be several lines); ``check``: a command that shows it worked;
            ``skip_if``: a command whose success means it is already done.
        url: the page to download from / read.
        env: environment variables torch needs set at run time.
        container: also a step of a Dockerfile (``False``: the host does it).
        apt: the Debian/Ubuntu packages the step installs: a Dockerfile installs them in its image.
    """

    kind: str
    key: str
    title: str
    runs_in: str
    shell: str = "bash"
    root: bool = False
    commands: str = ""
    check: str = ""
    skip_if: str = ""
    url: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    container: bool = True
    apt: Tuple[str, ...] = ()
    source: Tuple[str, ...] = ()
    confidence: str = "official"

    @property
    def marker(self) -> str:
        """``[system] rocm-wsl-runtime``: how every rendered file names the step."""
        return f"[{self.kind}] {self.key}"

    @property
    def where(self) -> str:
        """``Linux, as root`` / ``Windows (PowerShell), as administrator`` / ``by hand on Windows``."""
        osname = {"windows": "Windows", "linux": "Linux", "macos": "macOS"}[self.runs_in]
        if self.shell == "manual":
            return f"by hand on {osname}" + ((" (administrator)" if self.runs_in == "windows" else " (root)")
                                              if self.root else "")
        shell = " (PowerShell)" if self.shell == "powershell" else ""
        root = (" as administrator" if self.runs_in == "windows" else " as root") if self.root else ""
        return f"{osname}{shell}{root}"

    def lines(self) -> List[str]:
        return [ln for ln in self.commands.strip().splitlines() if ln.strip()]

    def to_dict(self) -> JSONObject:
        d: JSONObject = {"kind": self.kind, "key": self.key, "title": self.title, "runs_in": self.runs_in,
                             "shell": self.shell, "root": self.root}
        for name in ("commands", "check", "skip_if", "url"):
            if getattr(self, name):
                d[name] = getattr(self, name).strip()
        if self.env:
            d["env"] = dict(self.env)
        d["source"] = list(self.source)
        d["confidence"] = self.confidence
        return d


def _fill(text: str, values: Mapping[str, str]) -> str:
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values.get(m.group(1), m.group(0)), text)


#: ``when.os_id`` value for a known distribution that no row's ``os_id`` lists
OTHER_DISTRO = "*other*"


def os_id(plan: Plan, matrix: Matrix, listed: Sequence[str]) -> str:
    """The machine's distribution as ``when.os_id`` names it: its os-release ``ID`` (platforms.toml),
    ``""`` when no distribution is known, :data:`OTHER_DISTRO` when no recipe row lists it."""
    distro = plan.machine.distro
    if not distro:
        return ""
    row = next((d for d in matrix.distros if d.id == distro), None)
    ident = (row.os_release.get("ID", "") if row else "") or distro
    return ident if ident in listed else OTHER_DISTRO


def _matches(when: Mapping[str, Any], plan: Plan, compile_: bool, distro_id: str = "") -> bool:
    m, b = plan.machine, plan.build
    for key, want in when.items():
        if key == "os_id" and distro_id not in want:
            return False
        if key == "os" and m.os not in want:
            return False
        if key == "wsl" and bool(m.wsl) != bool(want):
            return False
        if key == "tegra" and bool(m.tegra) != bool(want):
            return False
        if key == "backend" and b.backend not in want:
            return False
        if key == "vendor" and not any(g.vendor in want for g in m.served_gpus):
            return False
        if key in ("rocm_min", "rocm_max"):
            if not b.rocm:
                return False
            have, edge = vkey(b.rocm), vkey(str(want))
            if (key == "rocm_min" and have < edge) or (key == "rocm_max" and have > edge):
                return False
        if key == "compile" and bool(want) != compile_:
            return False
        if key == "freethreaded" and bool(want) != plan.python.endswith("t"):  # 3.13t: a free-threaded build
            return False
    return True


def placeholders(plan: Plan, matrix: Matrix) -> Dict[str, str]:
    """The values of ``{{name}}`` in recipe rows, for this plan."""
    b = plan.build
    rel = matrix.rocm_wsl_release(b.rocm) if (b.rocm and b.wsl) else None
    pins = [shlex.quote(r) for r in plan.requirements()]
    return {
        "python": plan.python or "3",
        "torch": plan.pins.get("torch", ""),
        "driver_min": _driver_min(plan),
        "driver_check": _driver_check(plan),
        "rocm": b.rocm or "",
        **_jetpack_values(plan, matrix),
        "ubuntu": " or ".join(rel.ubuntu) if rel and rel.ubuntu else "",
        "pip_args": " ".join(([plan.index_option] if plan.index_option else []) + pins),
        "lock": LOCK_NAME,
    }


def _minor_compat(plan: Plan) -> bool:
    """Whether the resolver accepted the machine's driver under minor-version compatibility only
    (older than the build's toolkit driver, at least the floor): the recipe then asks for the floor
    it accepted, never the toolkit driver (newcomer4 F1: install.sh refused the planned machine).
    ``plan.driver_caveat`` says so: the resolver's warning, or the conda choice's (Plan.conda_plan)."""
    return bool(plan.driver_caveat) and bool(plan.driver.get("floor"))


def _driver_check(plan: Plan) -> str:
    """The bare driver version the recipe's check compares with (``sort -V`` / ``[version]``)."""
    d = plan.driver
    if d.get("last_branch") or _minor_compat(plan):
        return d.get("floor") or d.get("full") or "0"
    return d.get("full") or d.get("floor") or "0"


def _driver_min(plan: Plan) -> str:
    """``{{driver_min}}``: the driver the step asks for, with the resolver's caveat when the plan
    runs under minor-version compatibility (its own warning text: one answer)."""
    d = plan.driver
    if d.get("last_branch"):
        return (f"{d.get('floor')} on the R{d['last_branch']} branch (stay on {d['last_branch']}.xx: "
                "later branches no longer drive this GPU)")
    if _minor_compat(plan):
        return f"{d['floor']} ({plan.driver_caveat})"
    return d.get("full") or d.get("floor") or "(the newest)"


def _jetpack_values(plan: Plan, matrix: Matrix) -> Dict[str, str]:
    """``{{jetpack}}``/``{{jetpack_check}}`` for a Jetson: the JetPack generation the build is made
    for (its channel), else the one the machine runs (its JetPack or Ubuntu), from platforms.toml."""
    if not plan.machine.tegra:
        return {"jetpack": "", "jetpack_check": ""}
    major = (plan.build.cuda or "").split(".")[0]
    gen = (matrix.jetpack_of_channel(plan.build.channel)
           or matrix.jetpack_of_machine(plan.machine.jetpack, plan.machine.distro)
           or next((j for j in matrix.jetpacks if j.sbsa_cuda and j.sbsa_cuda == major), None))
    if gen is None:
        return {"jetpack": "the JetPack NVIDIA ships for this board",
                "jetpack_check": "test -e /etc/nv_tegra_release"}
    return {"jetpack": f"JetPack {gen.major} (Jetson Linux L4T R{gen.l4t}, {gen.distro})",
            "jetpack_check": f"grep -q '^# R{gen.l4t} ' /etc/nv_tegra_release"}


def _from_row(row: RecipeRow, plan: Plan, values: Mapping[str, str]) -> RecipeStep:
    runs_in = row.runs_in
    if runs_in == "host":
        runs_in = "windows" if plan.machine.wsl else plan.machine.os
    elif runs_in == "linux" and plan.machine.os == "macos":
        runs_in = "macos"
    return RecipeStep(
        kind=row.kind, key=row.key, title=_fill(row.title, values), runs_in=runs_in, shell=row.shell,
        root=row.root, commands=_fill(row.commands, values), check=_fill(row.check, values),
        skip_if=_fill(row.skip_if, values), url=row.url, env=dict(row.env),
        container=bool(row.when.get("container", True)), apt=tuple(row.apt), source=tuple(row.source),
        confidence=row.confidence,
    )


def _from_step(step: Step, plan: Plan) -> RecipeStep:
    return RecipeStep(kind="post-install", key=step.key, title=step.description, runs_in=plan.machine.os,
                      commands=step.shell, env=dict(step.env), source=tuple(step.source),
                      confidence=step.confidence)


def build_recipe(plan: Plan, matrix: Matrix, compile_: bool = False, post: Sequence[Step] = ()) -> List[RecipeStep]:
    """The recipe of ``plan``: matching ``recipe.toml`` rows plus the build's post-install steps,
    in kind order (host → system → python → install → post-install → verify), data order within."""
    values = placeholders(plan, matrix)
    listed = [i for r in matrix.recipe for i in r.when.get("os_id", ())]  # type: ignore[attr-defined]
    distro_id = os_id(plan, matrix, listed)
    steps = [_from_row(r, plan, values) for r in matrix.recipe if _matches(r.when, plan, compile_, distro_id)]
    steps += [_from_step(s, plan) for s in post]
    order = {k: i for i, k in enumerate(RECIPE_KINDS)}
    return sorted(steps, key=lambda s: order[s.kind])  # stable: data order within a kind
