"""``envcheck probe`` — describe this machine (OS, glibc, Python, WSL, GPUs, drivers, Docker)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, List

from envcheck.cli.flags import add_force, add_json, add_matrices, add_timeout, check_timeout
from envcheck.cli.conventions import COMMAND_HELP, file_arg

HELP = COMMAND_HELP["probe"]

EPILOG = """\
examples:
  envcheck probe                         what envcheck sees here, and how it found each fact
  envcheck probe --json                  the same as one JSON object (the Machine)
  envcheck probe -o node.toml            save it; then on another machine:
  envcheck plan --machine node.toml      plan for the saved machine

Each fact says how it was found (NVML, nvidia-smi, /proc/driver/nvidia/version, KFD topology,
rocminfo, /etc/os-release, os.confstr …) and each unknown says why (a tool missing, timed out
or printing garbage, a file unreadable). A machine that hides something still gives exit 0:
correct the fact with `envcheck plan --driver …/--gpu …` or by editing the saved file.

exit codes: 0 probed (unknowns are listed, not errors) · 2 bad input (e.g. -o exists without --force)
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("probe", help=HELP, description=HELP, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_json(p, "print the Machine as JSON")
    p.add_argument("-o", "--output", metavar="FILE", type=file_arg,
                   help="write the Machine to FILE (TOML) for `envcheck plan --machine FILE`; missing folders "
                        "are created")
    add_force(p, "replace FILE if it exists (a regular file only)")
    add_timeout(p, 5.0, "seconds each tool (nvidia-smi, rocminfo, docker) may take (default 5); a tool that "
                        "prints more than 8 MiB is stopped too")
    p.add_argument("--no-docker", dest="docker", action="store_false", help="do not ask docker")
    add_matrices(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from envcheck.app.probe import ProbeRequest, probe

    check_timeout(args.timeout)
    result = probe(ProbeRequest(matrices=args.matrices, timeout=args.timeout, docker=args.docker,
                                output=args.output, force=args.force))
    if result.warning:
        from envcheck.cli.conventions import warn

        warn(args, result.warning)
    if args.json:
        json.dump(result.machine.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(result.machine, args.output))
    return 0


def render_text(m: Any, wrote: Any = None) -> str:
    """The human report: one summary line, each fact with its method, GPUs, unknowns, next steps."""
    lines: List[str] = [f"This machine: {m.describe()}", ""]
    facts = [(k, getattr(m, k)) for k in ("os", "arch", "distro", "distro_name", "glibc", "macos", "python",
                                          "wsl", "wsl_version", "container", "nvidia_driver", "cuda_driver_max",
                                          "rocm", "amd_linux_driver", "amd_driver")]
    shown = [(k, v) for k, v in facts if v is not None]
    width = max(len(k) for k, _ in shown) if shown else 10
    for k, v in shown:
        value = str(v).lower() if isinstance(v, bool) else str(v)
        how = m.how.get(k, "")
        if len(value) > 24:  # a long value gets its own line; the method goes below it
            lines.append(f"  {k:<{width}}  {value}")
            lines.append(f"  {'':<{width}}  {'':<24} {how}")
        else:
            lines.append(f"  {k:<{width}}  {value:<24} {how}")
    if m.docker:
        d = m.docker
        if d.get("reachable"):
            value = f"engine {d.get('version')}" + (", NVIDIA runtime" if d.get("nvidia_runtime") else ", no NVIDIA runtime")
        else:
            value = d.get("error", "not reachable")
        lines.append(f"  {'docker':<{width}}  {value}")
    lines.append("")
    if m.gpus:
        lines.append(f"GPUs ({len(m.gpus)}):")
        for g in m.gpus:
            extra = [f"{g.memory_mib} MiB"] if g.memory_mib else []
            if g.mig:
                extra.append("MIG on")
            if not g.serve:
                extra.append("integrated, plans do not target it")
            lines.append(f"  {g.vendor:<6} {g.name} ({g.arch})" + (f", {', '.join(extra)}" if extra else ""))
            lines.append(f"         found by: {g.how}")
    else:
        lines.append(f"GPUs: {m.how.get('gpus', 'none found')}")
    if m.unknown:
        lines.append("")
        lines.append("Unknown (and why):")
        for k, why in m.unknown.items():
            lines.append(f"  {k}: {why}")
    lines.append("")
    if wrote is not None:
        from envcheck.edge import shell_word
        from envcheck.fsutil import shown as one_line

        lines.append(f"Wrote {one_line(wrote)}; plan for it anywhere with: envcheck plan --machine "
                     f"{shell_word(str(wrote), one_line=True)}")
    else:
        lines.append("Next: envcheck plan                (plan for this machine)")
        lines.append("      envcheck probe -o machine.toml  (save it; plan elsewhere with --machine)")
    return "\n".join(lines) + "\n"
