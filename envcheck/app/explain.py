"""``explain``: what a pasted PyTorch error means on a machine, and how to fix it — the same rules
``verify`` uses (matrices/diagnoses.toml), made specific with what is known of the machine the text
came from. No argparse, no printing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.machine.model import Machine
    from envcheck.matrix import Matrix
    from envcheck.verify.rules import Finding


@dataclass(frozen=True)
class ExplainRequest:
    """The error ``text`` and what is known of the machine it came from: ``gpus``/``os``/``wsl``/
    ``driver`` as people type them, saved ``facts`` (a ``verify --json`` report), and whether to
    look at this machine (``probe``; never when the machine is described or facts are given)."""

    text: str
    matrices: Optional[Path] = None
    gpus: Sequence[str] = ()
    os: Optional[str] = None
    wsl: bool = False
    driver: Optional[str] = None
    facts: Optional[Path] = None
    probe: bool = True


@dataclass(frozen=True)
class ExplainResult:
    """The findings (root causes first); when there is none, the ``closest`` families looked for
    (each ``{rule, score, example}``)."""

    findings: Tuple[Finding, ...]
    closest: Tuple[Dict[str, Any], ...] = ()
    machine: Optional[Machine] = None

    @property
    def explained(self) -> bool:
        return bool(self.findings)

    @property
    def exit_code(self) -> int:
        """0 explained, 1 not explained: not a message envcheck recognises, or every family it matched
        found a value no real message has (garbled) or one envcheck's data is too old to know (unknown):
        no conclusion drawn."""
        return 0 if any(not (f.garbled or f.unknown) for f in self.findings) else 1

    def to_json(self) -> Union[List[Dict[str, Any]], Dict[str, Any]]:
        """``explain --json``: the findings, or ``{findings: [], closest: [...]}``."""
        if self.findings:
            return [dict(f.to_dict()) for f in self.findings]
        return {"findings": [], "closest": [dict(n) for n in self.closest]}


def described_machine(matrix: Matrix, gpus: Sequence[str] = (), os: Optional[str] = None, wsl: bool = False,
                      driver: Optional[str] = None) -> Optional[Machine]:
    """The machine ``gpus``/``os``/``wsl``/``driver`` describe, or ``None`` when nothing is said.

    Raises:
        UnknownGpuError, UsageError: a GPU or value envcheck does not know (exit 2).
    """
    if not (gpus or os or wsl or driver):
        return None
    from envcheck.machine.describe import apply_flags

    return apply_flags(matrix, None, gpus=list(gpus), os=os, wsl=wsl or None, driver=driver)


def explain(request: ExplainRequest) -> ExplainResult:
    """Every rule that matches ``request.text``, worded for the machine it came from.

    Raises:
        DataFileError: a malformed matrix or facts file; UsageError: a bad machine description.
    """
    from envcheck.matrix import load_matrix
    from envcheck.verify import explain as match_text

    matrix = load_matrix(request.matrices)
    facts = None
    if request.facts:
        from envcheck.verify.facts import load_facts

        facts = load_facts(request.facts)
    machine = described_machine(matrix, request.gpus, request.os, request.wsl, request.driver)
    if machine is None and request.probe and facts is None:
        from envcheck.probe import probe_machine

        machine = probe_machine(matrix, docker=False)  # the GPUs and driver matter here, not Docker
    findings = match_text(request.text, matrix, machine, facts)
    if findings:
        return ExplainResult(findings=tuple(findings), machine=machine)
    from envcheck.verify.rules import closest, load_rules

    near: List[Dict[str, Any]] = closest(load_rules(matrix), request.text)
    return ExplainResult(findings=(), closest=tuple(near), machine=machine)


def families(matrices: Optional[Path] = None) -> List[Dict[str, Any]]:
    """Every message family ``explain`` knows (``explain --list``): family, platform, evidence,
    cause, fix, source — worded for the family's own example message."""
    from envcheck.matrix import load_matrix
    from envcheck.verify.rules import family_table, load_rules

    matrix = load_matrix(matrices)
    return family_table(load_rules(matrix), matrix)
