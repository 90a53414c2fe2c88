"""The verify checks, in one table: name, the probe behind it, when it runs, the shape of the data
it records, the judge that decides it, and the help line ``envcheck verify --help`` prints.

Adding a check touches this table (plus a ``check_<name>`` judge in
:mod:`envcheck.verify.diagnose` and, for a probe, ``probe_<name>`` in the stand-alone collector,
which cannot import envcheck); ``tests/verify/test_registry.py`` holds the three to each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from envcheck.schema import list_of, map_of, nullable


@dataclass(frozen=True)
class CheckSpec:
    """One verify check.

    Attributes:
        name: the check's name (``--checks``, the report, the facts' ``runs``).
        help: one line for ``envcheck verify --help``.
        probe: the collector probe of the same name that gathers its facts; ``None`` for a check
            that only judges facts other probes collect.
        reads: the probes whose facts it reads (default: its own probe).
        run: the probe's place in a worker's run order (lower first); ``None`` without a probe.
        data: the shape of the probe's ``data`` (:mod:`envcheck.schema`).
        judge: the :class:`envcheck.verify.diagnose._Judge` method that decides it.
    """

    name: str
    help: str
    probe: Optional[str] = None
    reads: Tuple[str, ...] = ()
    run: Optional[float] = None
    data: Any = None
    judge: str = ""

    @property
    def needs(self) -> Tuple[str, ...]:
        return self.reads or ((self.probe,) if self.probe else ())


_NUMERIC_ROWS = list_of({"device": "str", "dtype": "str", "rel_error": "num", "nonzero": "bool",
                         "unsupported": "str", "library": "str", "shape": list_of("int")})


def _check(name: str, help: str, run: Optional[float] = None, data: Any = None,
           reads: Tuple[str, ...] = ()) -> CheckSpec:
    return CheckSpec(name=name, help=help, probe=name if run is not None else None, reads=reads, run=run,
                     data=data, judge=f"check_{name}")


#: Every verify check, in report order. The run order (``run``) differs: cheap and fork-based
#: probes first (distributed forks its ranks before any thread pool exists), torch.compile last.
REGISTRY: Tuple[CheckSpec, ...] = (
    _check("import_torch", "torch imports; an ImportError is read (GLIBC_2.xx not found, a missing libcudnn…)",
           run=0, data={"version": "str", "file": "str", "cuda": "version", "hip": "str", "xpu": "str",
                        "git_version": "str", "debug": "bool", "seconds": "secs", "warnings": list_of("str")}),
    _check("cuda_build", "torch.version.cuda/hip, cuDNN, NCCL, the kernel arch list; CPU build on a GPU machine",
           run=1, data={
               "cuda": "version", "hip": "str", "xpu": "str", "errors": map_of("str"), "config": "str",
               "cudnn": "int", "cudnn_available": "bool", "nccl": "str", "arch_list": list_of("str"),
               "is_available": "bool", "device_count": "int", "warnings": list_of("str"), "mps_built": "bool",
               "mps_available": "bool", "xpu_available": "bool",
               "devices": list_of({"index": "int", "name": "str", "capability": "capability", "memory_mib": "int",
                                   "gcn_arch": "str"}),
               "driver": {"version": "version", "cuda_max": "version", "error": "str",
                          "gpus": list_of({"index": "int", "name": "str", "capability": "capability",
                                           "uuid": "str", "memory_mib": "int", "mig": "bool"})},
           }),
    _check("environment", "the wheels installed (two CUDA majors), the libraries actually loaded (shadowing), "
                          "the container's /dev/shm, every accelerator (CUDA/HIP, XPU, MPS)",
           run=0.5, data={"after_import": list_of("str"), "after_cuda": list_of("str"),
                          "accelerators": map_of("bool"), "errors": map_of("str")}),
    _check("arch_compat", "every visible GPU's capability/gfx is served by the arch list (cubin or PTX)",
           reads=("cuda_build",)),
    _check("driver", "the NVIDIA driver supports the build's CUDA (full, or minor-version compatibility)",
           reads=("cuda_build",)),
    _check("lock", "version, variant, CUDA, cuDNN, NCCL, arch list, companions vs --lock",
           reads=("import_torch", "cuda_build", "torchvision_compat", "torchaudio_compat")),
    _check("allocation", "64 MiB written and read back on each device (memory in MiB)", run=3,
           data={"devices": list_of({"device": "str", "mib": "int", "ok": "bool", "free_mib": "int",
                                     "total_mib": "int"})}),
    _check("matmul", "fp32/fp16/bf16 vs a float64 reference (relative-error bound per dtype)", run=4,
           data={"seed": "int", "results": _NUMERIC_ROWS}),
    _check("stream_sync", "pinned memory, non_blocking copy on a side stream, event wait, data checked", run=5,
           data={"seed": "int", "results": list_of({"device": "str", "pinned": "bool", "max_abs_error": "num"})}),
    _check("cudnn_conv", "one convolution (cuDNN/MIOpen on a GPU; CPU otherwise)", run=6,
           data={"seed": "int", "cudnn": "int", "results": _NUMERIC_ROWS}),
    _check("distributed", "two-process all_reduce (gloo on CPU, NCCL with two GPUs)", run=2,
           data={"backend": "str", "world_size": "int", "start_method": "str", "expected": "num",
                 "hung_ranks": list_of("int"), "timeout": "secs",
                 "ranks": list_of({"rank": "int", "values": list_of("num"), "error": "str", "exitcode": "int"})}),
    _check("torchvision_compat", "torchvision imports and torchvision.ops.nms runs; pairing with torch", run=7,
           data={"version": "str", "file": "str",
                 "nms": list_of({"device": "str", "keep": list_of("int"), "expected": list_of("int")})}),
    _check("torchaudio_compat", "torchaudio imports and one op runs; pairing with torch", run=8,
           data={"version": "str", "file": "str", "op": {"name": "str", "max_abs_error": "num"}}),
    _check("wsl_libhsa", "ROCm on WSL: the wheel's bundled libhsa-runtime64.so is gone", run=9,
           data={"libdir": "str", "bundled": list_of("str"), "rocm_runtime": "bool"}),
    _check("torch_compile", "torch.compile of a small function vs eager (slow the first time)", run=10,
           data={"compilers": map_of(nullable("str")), "cc_env": "str", "python": "str", "seed": "int",
                 "results": _NUMERIC_ROWS}),
)

BY_NAME: Dict[str, CheckSpec] = {c.name: c for c in REGISTRY}

#: Every verify check, in report order.
CHECKS: Tuple[str, ...] = tuple(c.name for c in REGISTRY)

#: The order probes run in one worker.
PROBE_ORDER: Tuple[str, ...] = tuple(
    c.name for c in sorted((c for c in REGISTRY if c.probe), key=lambda c: c.run or 0))

#: ``runs.<probe>.data`` of each probe.
PROBE_DATA: Dict[str, Any] = {c.name: c.data for c in REGISTRY if c.probe}


def probes_for(checks: List[str]) -> List[str]:
    """The probes (in run order) that the given checks need; ``import_torch`` always comes first."""
    need = {"import_torch"}
    for c in checks:
        spec = BY_NAME.get(c)
        need.update(spec.needs if spec is not None else (c,))
    return [p for p in PROBE_ORDER if p in need]


def help_lines(indent: int = 2) -> str:
    """The ``checks (in report order):`` block of ``envcheck verify --help``."""
    width = max(len(c.name) for c in REGISTRY) + 2
    return "\n".join(" " * indent + c.name.ljust(width) + c.help for c in REGISTRY)
