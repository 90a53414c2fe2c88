"""Text shared by every rendered file: the title, why this build, what it needs, what was rejected."""

from __future__ import annotations

from envcheck import __version__
from envcheck.edge import comment_text
from envcheck.matrix import resource_path
from envcheck.matrix.model import vkey
from envcheck.resolve.plan import Plan
from envcheck.resolve.rules import name_of
from envcheck.resolve.types import Candidate

TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, List, NoReturn


def title(plan: Plan) -> str:
    """``torch 2.7.0+cu128 · Python 3.12 · Linux x86_64 · NVIDIA GeForce RTX 5090 (sm_120)``."""
    m = plan.machine
    parts = [plan.title, f"Python {plan.python}" if plan.python else "", m.describe()]
    return comment_text(" · ".join(p for p in parts if p))


def driver_line(plan: Plan) -> str:
    """``needs NVIDIA Linux driver ≥ 570.26 (≥ 525.60.13 under minor-version compatibility)``."""
    d = plan.driver
    if not d:
        return ""
    if d.get("vendor") == "amd":
        return f"needs AMD Software: Adrenalin Edition ≥ {d['full']} on Windows (ROCm on WSL)"
    side = d.get("side", "linux").capitalize()
    full, floor = d.get("full"), d.get("floor")
    if d.get("last_branch"):
        last = d["last_branch"]
        return (f"needs an NVIDIA {side} driver ≥ {floor} on the R{last} branch ({last}.xx, the last that "
                f"drives this GPU): minor-version compatibility only (full support needs ≥ {full})")
    if not full:  # cuda.toml has no driver for this exact toolkit on this side: the CUDA major's floor
        major = (plan.build.cuda or "").split(".")[0]
        return (f"needs an NVIDIA {side} driver ≥ {floor} (the oldest {side} driver for CUDA {major}.x; "
                "NVIDIA names none for this exact toolkit)")
    first = f", the first driver for {plan.driver_floor_for}," if plan.driver_floor_for else ""
    tail = f" (≥ {floor}{first} under minor-version compatibility)" if floor and floor != full else ""
    return f"needs an NVIDIA {side} driver ≥ {full}{tail}"


#: Reasons that say only "made for another platform / vendor", or "not the --torch you asked
#: for" — true, but no news to the reader.
_NOISE = {"os", "arch", "backend", "torch"}


def rejected_summary(plan: Plan, limit: int = 8) -> List[str]:
    """One line per rejected build (Pythons folded) of releases at least as new as the chosen one.

    Builds made for another platform or GPU vendor (or not the --torch asked) are left out, whatever else
    also rejects them: a ROCm-on-WSL reason is noise on an NVIDIA machine (newcomer4 #10).
    Returns lines like ``torch 2.12.0+cu130: [driver] Linux driver 570.124.06 is too old …``.
    """
    floor = vkey(plan.release.version)
    candidates = plan.resolution.candidates
    recent = {v for v in {c.release.version for c in candidates} if vkey(v) >= floor}
    seen: Dict[str, Candidate] = {}
    for c in candidates:
        if c.accepted or c.release.version not in recent:
            continue
        key = f"{c.release.version}|{c.build.variant}|{c.build.channel}"
        if key not in seen and c.reasons and not any(r.code in _NOISE for r in c.reasons):
            seen[key] = c
    lines = []
    for c in list(seen.values())[:limit]:
        r = c.reasons[0]
        more = f" (+{len(c.reasons) - 1} more)" if len(c.reasons) > 1 else ""
        lines.append(f"{name_of(c)}: [{r.code}] {r.message}{more}")
    hidden = len(seen) - min(len(seen), limit)
    if hidden > 0:
        lines.append(f"… and {hidden} more; `envcheck plan … --explain` lists every candidate")
    return lines


def choice_reason(plan: Plan) -> str:
    """Why this build, in the ranking rule's words (:data:`envcheck.resolve.RANKING_RULE`): the
    newest release with a complete, verified set, unless --prefer newest or no release has one."""
    from envcheck.resolve import complete_set

    res = plan.resolution
    if res.request.prefer == "newest":
        return "the newest torch release whose build fits every constraint (--prefer newest)"
    if complete_set(plan.candidate):
        return ("the newest torch release with a complete, verified set (its paired companions on record, no "
                "unverified row) whose build fits every constraint")
    return ("the newest torch release whose build fits every constraint (no release that fits has a complete, "
            "verified set on record)")


def comment_block(plan: Plan, prefix: str = "# ") -> str:
    """The explanatory comment lines every rendered file carries (made once for the files of one
    plan: :func:`envcheck.render.shared`)."""
    from envcheck.render import shared

    return shared(plan, ("comment_block", prefix), lambda: _comment_block(plan, prefix))


def _comment_block(plan: Plan, prefix: str) -> str:
    lines: List[str] = []
    lines.append(f"why: {choice_reason(plan)} ({len(plan.resolution.candidates)} "
                 f"candidates checked, {len(plan.resolution.accepted)} fit)")
    drv = driver_line(plan)
    if drv:
        lines.append(drv)
    hosts = plan.hosts()
    if hosts:
        lines.append("hosts a firewall must allow (https): " + ", ".join(hosts))
    lines += [f"mirror: {m}" for m in plan.mirror_report()]
    for w in plan.candidate.warnings:
        lines.append(f"caveat [{w.code}]: {w.message}")
    for a in plan.resolution.assumptions:
        lines.append(f"assumed: {a}")
    for n in plan.notes:
        lines.append(f"note: {n}")
    rej = rejected_summary(plan)
    if rej:
        lines.append("rejected:")
        lines.extend(f"  {r}" for r in rej)
    return "\n".join(prefix + comment_text(line) for line in lines)


_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


class Template:
    """``string.Template(text).substitute(**values)``: ``$name`` and ``${name}`` (an ASCII identifier)
    replaced by ``str(values[name])``, ``$$`` by ``$``; a missing name is a KeyError, any other ``$`` the
    same ValueError. Written out: importing :mod:`string` compiles Template's pattern, ~0.5 ms of a
    plan's files (#9); tests/plan/test_template.py holds it to string.Template."""

    def __init__(self, template: str):
        self.template = template

    def substitute(self, **values: object) -> str:
        text = self.template
        out: List[str] = []
        i = 0
        while True:
            j = text.find("$", i)
            if j < 0:
                out.append(text[i:])
                return "".join(out)
            out.append(text[i:j])
            start = j + 1
            if text.startswith("$", start):
                out.append("$")
                i = start + 1
                continue
            braced = text.startswith("{", start)
            end = first = start + braced
            while end < len(text) and text[end] in _ID_CHARS:
                end += 1
            name = text[first:end]
            if not name or name[0].isdigit() or (braced and not text.startswith("}", end)):
                self._invalid(start)
            out.append(str(values[name]))
            i = end + braced

    def _invalid(self, at: int) -> NoReturn:
        """string.Template's error for a ``$`` that starts no placeholder (``at``: just after it)."""
        lines = self.template[:at].splitlines(keepends=True)
        line, col = (len(lines), at - len("".join(lines[:-1]))) if lines else (1, 1)
        raise ValueError(f"Invalid placeholder in string: line {line}, col {col}")


def template(folder: str, name: str) -> Template:
    """A :class:`Template` (string.Template's ``substitute``) from ``dockerfiles/`` or ``conda/``.

    Raises:
        FileNotFoundError: the template is missing (a packaging bug).
    """
    import os

    with open(os.path.join(resource_path(folder), name), encoding="utf-8") as fh:
        return Template(fh.read())


def version() -> str:
    return __version__
