"""``pyproject.uv.toml``: the tables a uv project needs for a plan (uv's PyTorch guide pattern).

* One build: the PyTorch index is an ``explicit`` ``[[tool.uv.index]]`` (only the packages routed
  to it come from there) and each ``[tool.uv.sources]`` entry carries the platform's PEP 508
  marker, so the same project still locks for other platforms (torch comes from the default index
  there).
* Several builds (``plan --format uv --extras cpu,cu130``): one optional extra per build, each
  routed to its own index, and ``[tool.uv] conflicts`` so ``uv lock`` never has to install two
  variants of torch together (``uv sync --extra cu130``).

``requires-python`` is as wide as the pinned wheels allow (the unbroken run of Pythons every one of
them has, around the planned Python: ``>=3.10,<3.15``), not ``==3.12.*``, unless ``--pin-python``
asks for the planned Python only; it never admits a Python a pinned wheel lacks.

Pure text generation: the plans come from the resolver.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import tomli_w

from envcheck.matrix.model import python_key
from envcheck.render.common import comment_block, title, version
from envcheck.render.recipe import recipe_comment
from envcheck.resolve.plan import Plan
from envcheck.resolve.rules import span_spec

__all__ = ["render_uv", "uv_project", "requires_python"]


def requires_python(plans: Sequence[Plan], pin: bool = False) -> str:
    """``>=3.10,<3.15`` — the Pythons every plan's pinned wheels have, as one range around the planned
    Python (:meth:`Plan.python_span`; several plans: where their spans overlap); ``==3.12.*`` with
    ``pin`` (the planned Python), or when the spans do not overlap."""
    first = plans[0].python.rstrip("t")
    if not first:
        return ""
    if pin:
        return span_spec(first, first)
    spans = [p.python_span() for p in plans if p.python]
    low = max((s[0] for s in spans), key=python_key)
    high = min((s[1] for s in spans), key=python_key)
    if python_key(low) > python_key(high):
        return span_spec(first, first)
    return span_spec(low, high)


def _bare(pins: Dict[str, str]) -> List[str]:
    return [f"{k}=={v.split('+', 1)[0]}" for k, v in pins.items()]


def _index_name(plan: Plan) -> str:
    return f"pytorch-{plan.build.variant}"


def uv_project(plans: Sequence[Plan], pin_python: bool = False) -> Dict[str, Any]:
    """The pyproject tables (as a dict) for one plan, or for several as conflicting extras."""
    project: Dict[str, Any] = {}
    uv: Dict[str, Any] = {}
    indexes: List[Dict[str, Any]] = []
    sources: Dict[str, List[Dict[str, str]]] = {}
    find_links: List[str] = []

    def route(plan: Plan, extra: Optional[str]) -> None:
        if plan.index_kind == "find-links" and plan.build.channel != "pypi":
            if plan.index_url not in find_links:
                find_links.append(plan.index_url)
            return
        if plan.build.channel == "pypi":
            return  # the default index serves it
        name = _index_name(plan)
        if not any(i["name"] == name for i in indexes):
            indexes.append({"name": name, "url": plan.index_url, "explicit": True})
        src: Dict[str, str] = {"index": name}
        if extra:
            src["extra"] = extra
        elif plan.marker is not None and plan.marker.expression:
            src["marker"] = plan.marker.expression
        for pkg in plan.pins:
            sources.setdefault(pkg, []).append(dict(src))

    if len(plans) == 1:
        plan = plans[0]
        deps = _bare(plan.pins) if plan.index_kind != "find-links" else [f"{k}=={v}" for k, v in plan.pins.items()]
        project["dependencies"] = deps + plan.range_requirements()
        route(plan, None)
    else:
        extras: Dict[str, List[str]] = {}
        for plan in plans:
            extra = plan.build.variant.replace(".", "")
            extras[extra] = _bare(plan.pins) + plan.range_requirements()
            route(plan, extra)
        project["optional-dependencies"] = extras
        uv["conflicts"] = [[{"extra": e} for e in extras]]
    rp = requires_python(plans, pin_python)
    if rp:
        project["requires-python"] = rp
    if indexes:
        uv["index"] = indexes
    if sources:
        uv["sources"] = sources
    if find_links:
        uv["find-links"] = find_links
    doc: Dict[str, Any] = {"project": project}
    if uv:
        doc["tool"] = {"uv": uv}
    return doc


def render_uv(plan: Plan, extra_plans: Sequence[Plan] = (), pin_python: bool = False) -> str:
    """``pyproject.uv.toml`` text: merge its tables into your pyproject.toml, then ``uv lock && uv sync``."""
    plans = [plan, *[p for p in extra_plans if p.build.variant != plan.build.variant]]
    head = [f"# {title(plan)}",
            f"# Written by envcheck {version()} (`envcheck plan --format uv`): merge these tables into your",
            "# pyproject.toml (keep your [project] name/version), then `uv lock && uv sync` (the [python] and [install] "
            "steps below)."]
    if len(plans) > 1:
        names = ", ".join(p.build.variant.replace(".", "") for p in plans)
        first = plans[0].build.variant.replace(".", "")
        head.append(f"# One extra per build ({names}); they conflict, pick one: `uv sync --extra {first}`.")
    else:
        head.append("# The PyTorch index is explicit and marked for this platform: other platforms get torch from "
                    "your default index.")
    if plan.python.endswith("t"):  # requires-python is a version range: it cannot ask for the free-threaded build
        head.append(f"# Free-threaded Python {plan.python}: pin it before `uv sync` (`uv python pin {plan.python}` writes "
                    f".python-version), otherwise uv may make the venv with a GIL Python and install the GIL wheels.")
    head.append(comment_block(plan))
    head.append(recipe_comment(plan))
    return "\n".join(head) + "\n" + tomli_w.dumps(uv_project(plans, pin_python))
