"""Wheel variants (PREVIEW — PEP 825/850 are Drafts): what a provider plugin would detect on a
machine, and which installed torch variant an environment has.

* :func:`provider_report` — for a Machine (named or probed), the properties the NVIDIA and AMD
  provider plugins would report (``nvidia :: sm_arch :: 89_real`` …) and the override variables
  that make a variant-aware installer on another host (a GPU-less CI runner, a Docker build)
  select the wheels for *that* machine. Facts about the providers are data
  (``matrices/variants.toml``, sourced); the algorithm for ``sm_arch`` is the provider's
  ``supported_sm`` (highest architecture only).
* :func:`installed_variant` — the variant label and properties of the torch installed in an
  interpreter (the wheel's ``variant.json`` in its ``.dist-info``), or none for a plain wheel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from envcheck.matrix.model import vkey

__all__ = ["ProviderReport", "provider_report", "installed_variant", "driver_cuda", "PREVIEW"]

PREVIEW = ("PREVIEW: wheel variants are a Draft standard (PEP 825 'Package Format', PEP 850 'Providers'); "
           "installers support them only as previews (uv --preview-features wheel-variants)")


@dataclass
class ProviderReport:
    vendor: str
    namespace: str
    properties: List[str] = field(default_factory=list)  # "nvidia :: sm_arch :: 89_real"
    overrides: Dict[str, str] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    source: List[str] = field(default_factory=list)
    pep: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"vendor": self.vendor, "namespace": self.namespace, "properties": self.properties,
                "overrides": self.overrides, "notes": self.notes, "source": self.source, "pep": self.pep}


def driver_cuda(matrix: Any, machine: Any) -> Optional[str]:
    """The CUDA (UMD) version the machine's NVIDIA driver supports: the driver's own report when
    probed, else the newest toolkit in ``cuda.toml`` whose driver the given ``--driver`` reaches."""
    if machine.cuda_driver_max:
        return machine.cuda_driver_max
    if not machine.nvidia_driver:
        return None
    return matrix.cuda_for_driver(machine.nvidia_driver, bool(machine.os == "windows" or machine.wsl))


def _sm(arch: str) -> Optional[tuple]:
    digits = arch[3:] if arch.startswith("sm_") else ""
    if not digits.isdigit() or len(digits) < 2:
        return None
    return int(digits[:-1]), int(digits[-1])


def provider_report(matrix: Any, machine: Any, rocm: Optional[str] = None) -> List[ProviderReport]:
    """What each provider would detect on ``machine`` (``rocm``: the ROCm of the planned build when the
    machine does not say)."""
    out: List[ProviderReport] = []
    nv = matrix.variant_providers.get("nvidia")
    gpus = machine.gpus_of("nvidia")
    if nv is not None and gpus:
        r = ProviderReport("nvidia", nv.namespace, source=list(nv.source), pep=nv.pep)
        archs = sorted({a for a in (_sm(g.arch or "") for g in gpus) if a})
        if archs:
            major, minor = archs[-1]
            r.properties += [f"{nv.namespace} :: {nv.arch_feature} :: {major}{m}_real" for m in range(minor, -1, -1)]
            r.properties.append(f"{nv.namespace} :: {nv.arch_feature} :: {major}0_virtual")
            r.overrides[nv.arch_override] = f"{major}.{minor}"
            if len(archs) > 1:
                r.notes.append(f"the provider keeps the highest architecture only (sm_{major}{minor}); wheels "
                               f"selected this way may lack kernels for the others ({', '.join(f'sm_{a}{b}' for a, b in archs[:-1])})")
        cuda = driver_cuda(matrix, machine)
        if cuda:
            r.overrides[nv.version_override] = cuda
            r.notes.append(f"driver CUDA (UMD) {cuda}: the provider derives {', '.join(nv.version_features)} from it")
            lo, hi = (nv.version_range + ("", ""))[:2]
            if lo and hi and not vkey(lo) <= vkey(cuda) <= vkey(hi):
                r.notes.append(f"outside the provider's detected range {lo}–{hi}: detection would be off; the "
                               "override still applies")
        else:
            r.notes.append("driver unknown: give --driver (or probe the machine) for the CUDA override")
        out.append(r)
    amd = matrix.variant_providers.get("amd")
    agpus = machine.gpus_of("amd")
    if amd is not None and agpus:
        r = ProviderReport("amd", amd.namespace, source=list(amd.source), pep=amd.pep)
        gfx = sorted({g.arch for g in agpus if g.arch})
        r.properties += [f"{amd.namespace} :: {amd.arch_feature} :: {g}" for g in gfx]
        if gfx:
            r.overrides[amd.arch_override] = ",".join(gfx)
        version = machine.rocm or rocm
        if version:
            r.properties += [f"{amd.namespace} :: {f} :: {version}" for f in amd.version_features]
            r.overrides[amd.version_override] = version
            if not machine.rocm:
                r.notes.append(f"ROCm {version} is the planned build's (the machine's own ROCm is not known)")
        out.append(r)
    return out


#: runs in the target interpreter (standard library only): torch's version, wheel tags, variant.json
_PROBE = r"""
import json, sys
try:
    from importlib import metadata
except ImportError:
    print(json.dumps({"error": "no importlib.metadata"})); sys.exit(0)
try:
    d = metadata.distribution("torch")
except metadata.PackageNotFoundError:
    print(json.dumps({"installed": False})); sys.exit(0)
tags = [l.split(":", 1)[1].strip() for l in (d.read_text("WHEEL") or "").splitlines() if l.startswith("Tag:")]
print(json.dumps({"installed": True, "version": d.version, "tags": tags, "variant": d.read_text("variant.json")}))
"""


def installed_variant(python: str, timeout: float = 30.0) -> Dict[str, Any]:
    """The variant of the torch installed for ``python``: ``{"installed", "version", "label",
    "properties", "tags", "preview": True}``; ``label`` is ``None`` for a plain (non-variant) wheel,
    whose build shows in its local version (``+cu130``) instead."""
    from envcheck.runner import run

    r = run([python, "-c", _PROBE], timeout=timeout)
    out: Dict[str, Any] = {"preview": True}
    try:
        data = json.loads(r.stdout.strip().splitlines()[-1]) if r.ok and r.stdout.strip() else {}
    except (ValueError, IndexError):
        data = {}
    if not data or "error" in data:
        out.update(installed=None, error=r.error or data.get("error") or "no answer from the interpreter")
        return out
    out["installed"] = bool(data.get("installed"))
    if not out["installed"]:
        return out
    out["version"] = data.get("version")
    out["tags"] = data.get("tags") or []
    label, props = None, []
    raw = data.get("variant")
    if raw:
        try:
            doc = json.loads(raw)
            variants = doc.get("variants", {}) if isinstance(doc, dict) else {}
            if isinstance(variants, dict) and variants:
                label = next(iter(variants))
                for ns, feats in (variants[label] or {}).items():
                    for feat, values in (feats or {}).items():
                        for v in values if isinstance(values, list) else [values]:
                            props.append(f"{ns} :: {feat} :: {v}")
        except ValueError:
            out["error"] = "variant.json is not JSON"
    out["label"] = label
    out["properties"] = props
    local = str(out["version"]).partition("+")[2]
    out["build"] = local or None
    return out
