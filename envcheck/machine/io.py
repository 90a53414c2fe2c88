"""Read and write machine files (``envcheck probe -o machine.toml``, ``plan --machine FILE``).

Layout::

    schema = 1
    [machine]
    os = "linux"
    arch = "x86_64"
    glibc = "2.35"
    nvidia_driver = "570.124.06"
    [[machine.gpus]]
    vendor = "nvidia"
    name = "NVIDIA GeForce RTX 4090"
    arch = "sm_89"
    memory_mib = 24564
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from envcheck.errors import DataFileError
from envcheck.jsontypes import JSON, JSONObject
from envcheck.machine.consistency import contradiction
from envcheck.machine.model import GpuDevice, Machine
from envcheck.schema import (
    NAME_MAX,
    Required,
    Scalar,
    Table,
    arch_fits_vendor,
    enum,
    list_of,
    map_of,
    nullable,
    plain,
    text,
    validate,
)

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.matrix import Matrix

SCHEMA = 1


_GPU_NAME = Scalar(f"a GPU name (printable text on one line, 1 to {NAME_MAX} characters)",
                   lambda v: isinstance(v, str) and v != "" and text(NAME_MAX).test(v) is True,
                   json={"type": "string", "minLength": 1, "maxLength": NAME_MAX})
_NOTES = map_of(text(1000), keys=text(64, "a field name (at most 64 characters)"))

#: ``[[machine.gpus]]`` (:class:`GpuDevice`); the same arch type as the matrix's ``[[gpu]]`` rows.
GPU = Table({
    "vendor": Required("vendor"), "name": Required(_GPU_NAME), "arch": Required("gpu_arch"),
    "memory_mib": "count", "index": "count", "uuid": "name", "mig": "bool", "integrated": "bool", "serve": "bool",
    "how": "name",
}, rule=arch_fits_vendor)

#: ``[machine]`` (:class:`Machine`): every field of the dataclass, nothing else.
MACHINE = Table({
    "os": "os", "arch": "cpu_arch", "wsl": "bool", "wsl_version": enum(1, 2), "tegra": "bool", "jetpack": "version",
    "distro": "name", "distro_name": "name", "glibc": "version", "macos": "version", "python": "python",
    "python_bits": enum(32, 64), "python_implementation": "name", "gpus": list_of(GPU, max_items=256),
    "nvidia_driver": "version", "cuda_driver_max": "version", "amd_driver": "version",
    "amd_linux_driver": "version", "rocm": "version", "container": "bool", "docker": map_of(nullable(plain(1000)), keys=text(64)),
    "plan_gpu": "int", "how": _NOTES, "unknown": _NOTES,
}, rule=lambda m: contradiction(m) or (None if m.get("plan_gpu") is None or 0 <= m["plan_gpu"] < len(m.get("gpus", ()))
                                       else (".plan_gpu", f"expected the index of one of the "
                                                          f"{len(m.get('gpus', ()))} GPUs, got {m['plan_gpu']}")))


def machine_from_dict(data: JSON, path: object = "<machine>", prefix: str = "machine") -> Machine:
    """Build a :class:`Machine` from plain data, checking every field against :data:`MACHINE`.

    Raises:
        DataFileError: a field has the wrong type or an impossible value (names the key).
    """
    kw = validate(data, MACHINE, path, prefix)
    gpus = []
    for g in kw.pop("gpus", []):
        if g["vendor"] == "nvidia":
            # sm_90a / sm_100f name the arch-specific targets of a 9.0 / 10.0 GPU: the GPU is sm_90 / sm_100
            g = {**g, "arch": g["arch"].rstrip("af")}
        gpus.append(GpuDevice(**g))
    return Machine(**kw, gpus=gpus)


def load_machine(path: Path, matrix: Optional[Matrix] = None) -> Machine:
    """Read a machine file; with ``matrix``, its fields are held to the matrix's facts too
    (:func:`~envcheck.machine.consistency.contradiction_with_data`: a distro's glibc, a driver's CUDA).

    Raises:
        DataFileError: unreadable, not TOML, no ``[machine]`` table, a bad field, or fields that
            contradict each other (names the key).
    """
    from envcheck.matrix.load import read_toml  # TOML parsing only when a file is read

    data = read_toml(Path(path))
    if "machine" not in data:
        raise DataFileError(path, "machine", "missing [machine] table (write one with `envcheck probe -o FILE`)")
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise DataFileError(path, "schema", f"this envcheck reads schema {SCHEMA}, the file says {schema!r}")
    machine = machine_from_dict(data["machine"], path)
    if matrix is not None:
        from envcheck.machine.consistency import contradiction_with_data

        problem = contradiction_with_data(machine.to_dict(), matrix)
        if problem:
            raise DataFileError(path, "machine" + problem[0], problem[1])
    return machine


def machine_document(machine: Machine) -> JSONObject:
    """The TOML document for a machine file."""
    return {"schema": SCHEMA, "machine": machine.to_dict()}
