"""verify: run the environment for real, compare it with the lock and the hardware, say what to fix.

The stage after plan in the pipeline::

    target interpreter ──► collect (collector.py: stdlib + torch) ──► Facts
    diagnose(Facts, Lock, Machine) ──► [Check(name, status, seconds, detail, fix)]

* :mod:`~envcheck.verify.collector` — the standalone script run inside the target interpreter.
* :mod:`~envcheck.verify.collect` — runs it with per-check timeouts; hangs and crashes become results.
* :mod:`~envcheck.verify.facts` / :mod:`~envcheck.lock` — the inputs, read and checked.
* :mod:`~envcheck.verify.diagnose` — pure judgement; :mod:`~envcheck.verify.rules` — the data-driven
  error rules (``matrices/diagnoses.toml``) shared with ``envcheck explain``.
"""

from __future__ import annotations

from typing import Any

# Light on import (the CLI's parser reads CHECKS): the rest loads on first use.
_LAZY = {
    "Check": "envcheck.verify.diagnose", "diagnose": "envcheck.verify.diagnose",
    "CHECKS": "envcheck.verify.checks", "Facts": "envcheck.verify.facts",
    "load_facts": "envcheck.verify.facts", "probes_for": "envcheck.verify.checks",
    "Lock": "envcheck.lock", "load_lock": "envcheck.lock",
    "Finding": "envcheck.verify.rules", "collect": "envcheck.verify.collect",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'envcheck.verify' has no attribute {name!r}")


def explain(text: str, matrix: Any, machine: Any = None, facts: Any = None) -> list:
    """Every diagnosis rule that matches ``text`` (an error message or traceback), rendered with
    what is known about this machine (``machine`` from probe) and, optionally, saved ``facts``.

    What the text itself states (the driver's CUDA in "found version 12080") counts too: a fix for
    another message in it then fits that driver.

    Returns:
        A list of :class:`~envcheck.verify.rules.Finding` in rule-file order — root causes (loading
        torch, glibc, libraries) first (empty: envcheck does not recognise it).
    """
    from envcheck.verify.context import Context
    from envcheck.verify.facts import Facts
    from envcheck.verify.rules import load_rules, match, text_hints

    rules = load_rules(matrix)
    ctx = Context(facts or Facts(), matrix, None, machine, hints=text_hints(rules, text, matrix))
    return match(rules, text, ctx, check=None, first=False)


__all__ = ["CHECKS", "Check", "Facts", "Finding", "Lock", "collect", "diagnose", "explain", "load_facts",
           "load_lock", "probes_for"]
