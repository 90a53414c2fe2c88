"""Record verify facts on the machine this runs on (``nox -s device``): the replay fixtures of
tests/fixtures/verify/recorded/ come from here.

1. ``envcheck plan`` for this machine (probe) picks the build — the same answer a user gets;
2. a fresh venv gets exactly the plan's pins (``--wheelhouse DIR`` installs them offline from a
   folder of wheels: GPU machines here reach no index), or ``--python PATH`` uses an environment
   that already has them;
3. ``envcheck verify`` runs every check (device ones included) against the plan's lock with
   ``--save-facts``; the facts and
   the report go to ``--out`` (default tests/fixtures/verify/recorded/) named after the GPU and build.

The whole run has a deadline (``--budget``, default 480 s): the install gets what it needs, the
checks get the rest as per-check timeouts, and nothing waits past it. Exit 0 when facts were
recorded (whatever the checks found — a failing check on a real machine is a fixture worth
having), 1 when no build fits or nothing could be recorded, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "fixtures" / "verify" / "recorded"


def envcheck(*args: str, deadline: float) -> subprocess.CompletedProcess:
    left = deadline - time.monotonic()
    if left <= 1:
        raise TimeoutError("out of time before `envcheck " + " ".join(args) + "`")
    return subprocess.run([sys.executable, "-m", "envcheck", *args], capture_output=True, text=True, timeout=left)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.+]+", "-", text.lower()).strip("-")[:60] or "machine"


def plan_for_this_machine(torch: str, deadline: float, workdir: Path, only: tuple = ()) -> tuple:
    """(plan JSON, requirements.txt lines) from `envcheck plan` for the probed machine; with ``only``,
    the companions it leaves out are planned ``--without`` (a package the lock pins and the venv lacks
    fails verify's lock check)."""
    pick = ["--torch", torch] if torch else []
    pick += [f"--without={p}" for p in ("torchvision", "torchaudio") if only and p not in only]
    r = envcheck("plan", "--json", *pick, deadline=deadline)
    if r.returncode not in (0, 1):
        raise SystemExit(f"envcheck plan failed: {r.stderr.strip()}")
    plan = json.loads(r.stdout)
    if not plan.get("chosen"):
        print("no build fits this machine: `envcheck plan --explain` says why", file=sys.stderr)
        raise SystemExit(1)
    out = workdir / "plan"
    r = envcheck("plan", *pick, "--format", "pip,lock", "-o", str(out), "--force", deadline=deadline)
    if r.returncode != 0:
        raise SystemExit(f"envcheck plan -o failed: {r.stderr.strip()}")
    lines = [ln.strip() for ln in (out / "requirements.txt").read_text().splitlines()]
    return plan, [ln for ln in lines if ln and not ln.startswith("#")], out / "envcheck.lock.toml"


def install(reqs: list, wheelhouse: str, only: list, venv: Path, deadline: float) -> Path:
    """A fresh venv with the plan's pins; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=max(1, deadline - time.monotonic()))
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    pins = [ln for ln in reqs if not ln.startswith("-")]
    if only:
        pins = [p for p in pins if re.split(r"[=<>!~ ]", p, maxsplit=1)[0] in only]
    # A wheelhouse replaces the plan's index (the machine may reach none); dependencies come from it
    # or from pip's configured index. Without one, the plan's --index-url lines are used as written.
    source = ["--find-links", wheelhouse] if wheelhouse else [ln for ln in reqs if ln.startswith("-")]
    cmd = [str(py), "-m", "pip", "install", "--quiet", *[a for s in source for a in s.split(None, 1)], *pins]
    print("install:", " ".join(cmd[3:]), file=sys.stderr)
    subprocess.run(cmd, check=True, timeout=max(1, deadline - time.monotonic()))
    return py


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="nox -s device --", description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", help="use this environment (it has torch) instead of installing the plan's build")
    ap.add_argument("--wheelhouse", help="install the plan's pins from this folder of wheels instead of the plan's "
                                         "index (e.g. one filled by `pip download` elsewhere)")
    ap.add_argument("--only", action="append", default=[], metavar="PKG",
                    help="install only these of the plan's pins (repeatable; default all)")
    ap.add_argument("--torch", default="", help="pass --torch to `envcheck plan` (default: the newest that fits)")
    ap.add_argument("--out", type=Path, default=RECORDED, help="where the facts and report go")
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for the whole run (default 480)")
    ap.add_argument("--name", help="file name stem (default: <gpu>-<torch build>)")
    ap.add_argument("--checks", help="only these verify checks (default: every check)")
    args = ap.parse_args(argv)
    if args.budget <= 10:
        ap.error("--budget must leave time to run: more than 10 seconds")
    start = time.monotonic()
    deadline = start + args.budget
    with tempfile.TemporaryDirectory(prefix="envcheck-device-") as tmp:
        work = Path(tmp)
        plan, reqs, lock = plan_for_this_machine(args.torch, deadline, work, tuple(args.only))
        chosen = plan["chosen"]
        print(f"plan: torch {chosen.get('torch')} ({chosen.get('variant')})", file=sys.stderr)
        try:
            py = Path(args.python) if args.python else install(reqs, args.wheelhouse or "", args.only,
                                                                work / "venv", deadline)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            print(f"installing the plan's build failed: {exc}", file=sys.stderr)
            return 1
        probe = envcheck("probe", "--json", deadline=deadline)
        machine = json.loads(probe.stdout) if probe.returncode == 0 else {}
        gpus = [g.get("name", "") for g in machine.get("gpus") or []]
        stem = args.name or slug(f"{gpus[0] if gpus else 'cpu'}-{chosen.get('torch')}-{chosen.get('variant')}")
        args.out.mkdir(parents=True, exist_ok=True)
        facts, report = args.out / f"{stem}.json", args.out / f"{stem}.report.json"
        left = deadline - time.monotonic()
        per_check = max(5.0, min(60.0, left / 8))  # 8 budgets: compile takes 5, the rest share 3
        r = envcheck("verify", "--python", str(py), "--json", "--save-facts", str(facts), "--force",
                     "--lock", str(lock), "--timeout", f"{per_check:g}",
                     *(["--checks", args.checks] if args.checks else []), deadline=deadline)
        if r.returncode not in (0, 1) or not facts.exists():
            print(f"verify recorded nothing: {r.stderr.strip()}", file=sys.stderr)
            return 1
        report.write_text(r.stdout)
        doc = json.loads(r.stdout)
        for c in doc["checks"]:
            print(f"{c['status']:5} {c['name']:20} {c['detail'][:100]}", file=sys.stderr)
        print(f"recorded {facts} in {time.monotonic() - start:.0f} s (budget {args.budget:g} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except TimeoutError as exc:
        print(f"device run: {exc}", file=sys.stderr)
        sys.exit(1)
