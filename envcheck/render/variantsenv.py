"""``variants.env`` (PREVIEW): the wheel-variant provider overrides for the plan's machine
(:mod:`envcheck.variants` says what the providers would detect)."""

from __future__ import annotations

from typing import Any

from envcheck.variants import PREVIEW, provider_report

__all__ = ["render_variants_env"]


def render_variants_env(plan: Any, matrix: Any = None) -> str:
    """``variants.env``: the override variables (``KEY=value`` lines: ``set -a; . variants.env``,
    ``docker run --env-file``, ``$GITHUB_ENV``) and, as comments, the properties behind them.

    Args:
        matrix: the matrix the plan was resolved from (``--matrices``); the built-in one when not given.
    """
    from envcheck.matrix import load_matrix
    from envcheck.render.common import title, version

    matrix = matrix if matrix is not None else load_matrix()
    reports = provider_report(matrix, plan.machine, plan.build.rocm)
    lines = [f"# {title(plan)}", f"# Written by envcheck {version()} (`envcheck plan --format variants`).",
             f"# {PREVIEW}.",
             "# Use: set -a; . ./variants.env; set +a; uv pip install --preview-features wheel-variants torch"]
    if not reports:
        lines.append("# no GPU with a variant provider on this machine: a variant-aware installer picks the CPU/null "
                     "variant; nothing to override")
    for r in reports:
        lines.append(f"# {r.vendor} provider (namespace {r.namespace}; {r.pep}), properties it would report:")
        lines += [f"#   {p}" for p in r.properties]
        lines += [f"# note: {n}" for n in r.notes]
        lines += [f"# source: {s}" for s in r.source]
        lines += [f"{k}={v}" for k, v in r.overrides.items()]
    from envcheck.render.recipe import recipe_comment

    lines.append(recipe_comment(plan))
    return "\n".join(lines) + "\n"
