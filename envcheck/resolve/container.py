"""A Dockerfile is always a Linux container: the plan it holds is the host's plan re-resolved for
that container (one answer: the resolver's), never a Windows or macOS build in a Linux image.

A Linux plan (WSL included) is its own container plan. For Windows and macOS hosts the container is
a Linux machine of the host's architecture whose GPUs are those a ``[[container_route]]`` row
(matrices/docker.toml) passes through — as a WSL 2 guest when the row says so — and none otherwise,
so the resolver picks the CPU build; the reason is a sentence the Dockerfile carries.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.matrix import Matrix
    from envcheck.resolve.plan import Plan
    from envcheck.resolve.types import Resolution

_OS = {"windows": "Windows", "macos": "macOS"}


def container_plan(res: Resolution, matrix: Matrix, mirrors: Sequence[Tuple[str, str]] = (),
                   without: Sequence[str] = ()) -> Tuple[Optional[Plan], str]:
    """``(plan, why)``: the plan of the Linux container a Dockerfile for ``res``'s machine holds, and
    the sentence that says how it was made (``None`` and why not when nothing fits the container).
    Only for a non-Linux machine (a Linux one is its own container)."""
    from envcheck.resolve import resolve
    from envcheck.resolve.plan import make_plan

    m = res.machine
    host = _OS.get(m.os, m.os)
    served = m.served_gpus
    route = next((r for r in matrix.container_routes
                  if r.host_os == m.os and any(g.vendor in r.vendor for g in served)), None)
    gpus = [g for g in m.gpus if route is not None and g.vendor in route.vendor]
    arch = "aarch64" if m.arch == "arm64" else m.arch
    cm = dataclasses.replace(
        m, os="linux", arch=arch, wsl=bool(route and route.wsl), wsl_version=2 if route and route.wsl else None,
        macos=None, glibc=None, distro=None, distro_name=None, gpus=gpus, plan_gpu=None, amd_driver=None,
        nvidia_driver=m.nvidia_driver if gpus else None, cuda_driver_max=m.cuda_driver_max if gpus else None,
        how={**m.how, "os": f"a Linux container on this {host} machine"}, unknown=dict(m.unknown))
    request = res.request
    if not gpus and request.backend not in ("auto", "cpu"):
        request = dataclasses.replace(request, backend="cpu")
    if route is not None:
        why = f"{route.says} (matrices/docker.toml, confidence {route.confidence})"
    else:
        what = "no GPU of this machine reaches" if served else "has no GPU"
        why = (f"Docker on {host} runs Linux containers in a Linux virtual machine that {what} (no GPU route "
               f"into a container on {host} is on record, matrices/docker.toml), so the image holds the Linux "
               "CPU build")
    cres = resolve(cm, request, matrix)
    plan = make_plan(cres, matrix, mirrors, without=without)
    if plan is None:
        return None, (f"no Dockerfile: no build fits a Linux container on {host} "
                      "(`envcheck plan --os linux --backend cpu --explain` says why)")
    return plan, why
