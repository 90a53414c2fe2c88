"""Docker: is an engine reachable, which version, and is the NVIDIA container runtime configured.

One command, ``docker info --format "{{json .}}"``: a reachable engine fills ``ServerVersion``
and ``Runtimes`` (``{"nvidia": {"path": "nvidia-container-runtime"}, "runc": …}``); an unreachable
one leaves them empty, prints "Cannot connect to the Docker daemon …" on stderr and exits 1. The
``docker`` CLI honours ``DOCKER_HOST`` and contexts, so probe sees what ``docker run`` would see.
The result is ``Machine.docker``: ``reachable``, ``version``, ``runtimes``, ``default_runtime``,
``nvidia_runtime`` — or ``reachable = false`` and ``error``, the sentence saying why.
"""

from __future__ import annotations

import json

from envcheck.probe.context import Finding, ProbeContext, first_line, result_reason

#: Seconds allowed for ``docker info`` (it waits on the daemon socket).
DOCKER_TIMEOUT = 5.0
INFO_ARGV = ["docker", "info", "--format", "{{json .}}"]


def probe_docker(ctx: ProbeContext) -> Finding:
    """``docker`` facts for :attr:`Machine.docker`."""
    f = Finding()
    res = ctx.run(INFO_ARGV, timeout=min(ctx.timeout, DOCKER_TIMEOUT))
    if res.error and "not found" in res.error:
        f.set("docker", {"reachable": False, "error": "the docker CLI is not installed (docker not found)"},
              "docker info")
        return f
    try:
        info = json.loads(res.stdout) if res.stdout.strip() else {}
    except ValueError:
        info = None
    if not isinstance(info, dict):
        f.set("docker", {"reachable": False, "error": f"docker info printed no JSON "
                                                      f"({first_line(res.stdout, 80)!r}; {result_reason(res)})"},
              "docker info")
        return f
    version = info.get("ServerVersion") or ""
    if not res.ok or not version:
        errors = info.get("ServerErrors") or []
        why = first_line(res.stderr) or (errors[0] if errors else "") or result_reason(res)
        f.set("docker", {"reachable": False, "error": f"no Docker engine reachable: {why}"}, "docker info")
        return f
    runtimes = sorted((info.get("Runtimes") or {}).keys())
    facts = {
        "reachable": True,
        "version": str(version),
        "runtimes": runtimes,
        "default_runtime": str(info.get("DefaultRuntime") or ""),
        "nvidia_runtime": "nvidia" in runtimes,
    }
    f.set("docker", facts, "docker info (ServerVersion, Runtimes, DefaultRuntime)")
    return f
