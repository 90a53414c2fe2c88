"""``probe``: describe this machine (each fact with how it was found, each unknown with why) and
save it as a machine file for ``plan --machine``. No argparse, no printing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from envcheck.record import record

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.machine.model import Machine


@record(frozen=True)
class ProbeRequest:
    """Where the matrix is (GPU names and distros), how long each tool may take, whether to ask
    Docker, and the machine file to write (``output``; an existing one only with ``force``)."""

    matrices: Optional[Path] = None
    timeout: float = 5.0
    docker: bool = True
    output: Optional[Path] = None
    force: bool = False


@record(frozen=True)
class ProbeResult:
    """The machine, the file written (if any), and why the matrix could not be read (``warning``:
    distro and GPU names then stay unknown)."""

    machine: Machine
    written: Optional[str] = None  # the path as given, cleaned (fsutil.clean_path)
    warning: Optional[str] = None


def probe(request: ProbeRequest) -> ProbeResult:
    """Probe this machine; write ``request.output`` (checked before probing).

    A shipped matrix that cannot be read is a ``warning`` (probing goes on without names); an
    explicit ``matrices`` folder that cannot be read is an error.

    Raises:
        UsageError: ``output`` is a folder, exists (without ``force``) or cannot be written.
        DataFileError: ``matrices`` given and unreadable.
    """
    from envcheck.errors import DataFileError, UsageError
    from envcheck.probe import load_probe_matrix, probe_machine

    out = request.output
    if out is not None and os.path.isdir(out):  # (False where a folder on the way cannot be entered)
        raise UsageError(f"-o {out}: is a directory; give a file name such as {out / 'machine.toml'}")
    if out is not None:
        from envcheck.render.write import check_output_file

        check_output_file(out, request.force, "-o")
    warning = None
    try:
        matrix = load_probe_matrix(request.matrices)
    except DataFileError as exc:
        if request.matrices:
            raise
        warning = f"{exc}\n  probing without the matrix: distro and GPU names stay unknown"
        matrix = None
    machine = probe_machine(matrix, timeout=request.timeout, docker=request.docker)
    written = write_machine(out, machine, request.force) if out is not None else None
    return ProbeResult(machine=machine, written=written, warning=warning)


def write_machine(path: Path, machine: Machine, force: bool = False) -> str:
    """Write ``machine`` as a machine file ``path`` (atomic; never replaces it without ``force``).

    Raises:
        OutputExistsError: ``path`` exists and ``force`` is false.
        UsageError: ``path`` is not a regular file (a device, a folder), or cannot be written
            (missing folders are created).
    """
    import tomli_w

    from envcheck.edge import shell_word
    from envcheck.machine.io import machine_document
    from envcheck.render.write import write_output_file

    text = ("# envcheck probe: this machine, each fact with how it was found ([machine.how]).\n"
            "# Plan for it anywhere with: envcheck plan --machine " + shell_word(path.name, one_line=True) + "\n"
            + tomli_w.dumps(machine_document(machine)))
    return write_output_file(path, text, force, "-o")
