"""Run the collector in a target interpreter and gather its Facts, surviving hangs and crashes.

One worker process (``PYTHON collector.py --checks …``) imports torch once and runs the probes in
order, printing a JSON line as each starts and ends. This side reads those lines through
:func:`envcheck.runner.start` with a per-check timeout. When a probe hangs (no result in time: the
worker's process group is killed), or the worker dies (a signal such as SIGSEGV, or an exit),
that probe gets the outcome ``timeout`` / ``crash`` with the worker's stderr from that probe on,
and a fresh worker continues with the probes that are left.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from envcheck import runner
from envcheck.verify.facts import SCHEMA, Facts

#: The collector script, run by path in the target interpreter (stdlib + torch only).
COLLECTOR = Path(__file__).resolve().parent / "collector.py"

#: Multiples of ``--timeout`` for probes that are slow when healthy (torch's import on a cold
#: disk; torch.compile building C++ and Triton kernels on first use).
TIMEOUT_SCALE: Dict[str, float] = {"import_torch": 2.0, "torch_compile": 5.0}

STDERR_KEEP = 6000  # characters of a crashed probe's stderr kept in the facts

Progress = Callable[[str, Optional[Dict[str, Any]]], None]


def probe_timeout(name: str, timeout: float) -> float:
    """Seconds a probe may take before its worker is killed."""
    return timeout * TIMEOUT_SCALE.get(name, 1.0)


def collect(
    python: str,
    probes: Sequence[str],
    timeout: float = 60.0,
    start: Callable[..., runner.Stream] = runner.start,
    env: Optional[Mapping[str, str]] = None,
    progress: Optional[Progress] = None,
) -> Facts:
    """Collect Facts by running ``probes`` (names of the collector's probes, in order) in ``python``.

    Args:
        python: the target interpreter (a path).
        timeout: per-probe budget in seconds (scaled by :data:`TIMEOUT_SCALE`).
        start: the runner seam (:func:`envcheck.runner.start`).
        env: the worker's environment (default: inherited — verify tests the user's environment).
        progress: called with ``(probe, None)`` when a probe starts and ``(probe, run)`` when it ends.

    Returns:
        Facts whose ``runs`` hold one record per probe that started; ``collector`` says how many
        workers it took and, when the interpreter could not run the collector at all, why.
    """
    data: Dict[str, Any] = {"schema": SCHEMA, "collector": {"python": python, "workers": 0, "timeout": timeout},
                            "runs": {}}
    runs: Dict[str, Any] = data["runs"]
    remaining: List[str] = list(probes)
    while remaining:
        data["collector"]["workers"] += 1
        progressed = _one_worker(python, remaining, timeout, start, env, data, progress)
        imp = runs.get("import_torch")
        if imp is not None and imp.get("outcome") != "ok":
            break  # nothing else can run without torch
        if not progressed:
            break
    return Facts(data)


def _one_worker(python: str, remaining: List[str], timeout: float, start: Callable[..., runner.Stream],
                env: Optional[Mapping[str, str]], data: Dict[str, Any], progress: Optional[Progress]) -> bool:
    """Run one worker over ``remaining`` (removing what it finishes); False if nothing progressed."""
    runs = data["runs"]
    argv = [python, str(COLLECTOR), "--checks", ",".join(remaining), "--timeout", f"{timeout:g}"]
    stream = start(argv, env=env)
    current: Optional[str] = None
    began = time.monotonic()
    mark = 0
    said_hello = started = False
    finished = 0
    while True:
        # until its first probe starts, a worker is starting Python and importing torch
        name = current or (remaining[0] if remaining and started else "import_torch")
        limit = probe_timeout(name, timeout)
        kind, line = stream.readline(max(0.0, began + limit - time.monotonic()))
        if kind == runner.Stream.TIMEOUT:
            stream.kill(after=limit)
            res = stream.finish()
            victim = current or (remaining[0] if remaining else None)
            if victim is None:
                return finished > 0
            runs[victim] = {"outcome": "timeout", "timeout": round(limit, 3), "seconds": round(time.monotonic() - began, 3),
                            "stderr": res.stderr[mark:][-STDERR_KEEP:]}
            _done(remaining, victim, runs, progress)
            return True
        if kind == runner.Stream.EOF:
            res = stream.finish()
            if current is not None:
                run: Dict[str, Any] = {"outcome": "crash", "seconds": round(time.monotonic() - began, 3),
                                       "stderr": res.stderr[mark:][-STDERR_KEEP:]}
                if res.signal:
                    run["signal"] = res.error.rsplit(" by ", 1)[-1] if res.error else f"signal {res.signal}"
                else:
                    run["exit"] = res.error or "the worker ended without a result"
                runs[current] = run
                _done(remaining, current, runs, progress)
                return True
            if not said_hello:
                data["collector"]["error"] = _startup_error(python, res)
            elif not finished:
                data["collector"]["error"] = f"the worker ended between checks: {res.error or 'no done line'}"
            return finished > 0
        try:
            event = json.loads(line)
        except ValueError:
            continue  # not ours (the protocol fd is separate, but be lenient)
        kind_ = event.get("event")
        if kind_ == "hello":
            said_hello = True
            for key in ("python", "platform", "env", "packages"):
                data.setdefault(key, event.get(key))
            began = time.monotonic()
        elif kind_ == "start":
            started = True
            current = event.get("check")
            began = time.monotonic()
            mark = stream.stderr_size()
            if progress:
                progress(str(current), None)
        elif kind_ == "result":
            name = str(event.get("check"))
            runs[name] = {k: v for k, v in event.items() if k not in ("event", "check")}
            current = None
            began = time.monotonic()
            finished += 1
            _done(remaining, name, runs, progress)
        elif kind_ == "done":
            stream.finish()
            return True


def _done(remaining: List[str], name: str, runs: Dict[str, Any], progress: Optional[Progress]) -> None:
    if name in remaining:
        remaining.remove(name)
    if progress:
        progress(name, runs.get(name))


def _startup_error(python: str, res: runner.Result) -> str:
    tail = " ".join(res.stderr.strip().splitlines()[-3:])[-500:]
    why = res.error or "it printed nothing"
    return f"{python} could not run envcheck's collector: {why}" + (f" ({tail})" if tail else "")
