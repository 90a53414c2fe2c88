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
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set

from envcheck import runner
from envcheck.verify.facts import SCHEMA, Facts, run_problem, section_problem

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
        workers it took and, when the interpreter could not run the collector at all, why
        (``error``). A fresh worker is started only after one that finished a probe: a worker that
        makes no progress ends the collection, so at most one worker per probe (+1) ever runs.
        Every line the worker prints is checked (:func:`envcheck.verify.facts.run_problem`): a
        malformed result becomes that probe's error, a malformed section is left out (``notes``).
    """
    data: Dict[str, Any] = {"schema": SCHEMA, "collector": {"python": python, "workers": 0, "timeout": timeout},
                            "runs": {}}
    runs: Dict[str, Any] = data["runs"]
    remaining: List[str] = list(probes)
    while remaining and data["collector"]["workers"] <= len(probes):
        data["collector"]["workers"] += 1
        before = len(remaining)
        _one_worker(python, remaining, timeout, start, env, data, progress)
        imp = runs.get("import_torch")
        if imp is not None and imp.get("outcome") != "ok":
            break  # nothing else can run without torch
        if len(remaining) >= before or "error" in data["collector"]:
            break  # no progress: another worker would do the same
    return Facts(data)


class _Worker:
    """What one worker said so far, and the clock this side keeps for it.

    The parent owns the clock: ``deadline`` is set when a check becomes due (the worker started, or
    the previous check's result came) and is never moved by anything the worker prints — a line
    every second cannot keep a hung check alive. Only the protocol lines due next are accepted, in
    order: one ``hello``, then for each check ``start`` (the next one asked for) and its
    ``result``, then ``done``; anything else on the result channel ends the worker
    (:func:`_violation`)."""

    def __init__(self, first_limit: float) -> None:
        self.current: Optional[str] = None
        self.began = time.monotonic()
        self.deadline = self.began + first_limit
        self.limit = first_limit
        self.mark = 0
        self.said_hello = self.started = False
        self.finished = 0
        self.stray: Optional[str] = None  # the first line that was not the collector's protocol
        self.unknown: Set[str] = set()  # checks the worker's collector said it does not know


def _one_worker(python: str, remaining: List[str], timeout: float, start: Callable[..., runner.Stream],
                env: Optional[Mapping[str, str]], data: Dict[str, Any], progress: Optional[Progress]) -> None:
    """Run one worker over ``remaining``, removing each probe it finishes (or that hangs or crashes
    it); a worker that cannot run the collector at all leaves ``data["collector"]["error"]``."""
    argv = [python, str(COLLECTOR), "--checks", ",".join(remaining), "--timeout", f"{timeout:g}"]
    stream = start(argv, env=env)
    # until its first probe starts, a worker is starting Python and importing torch
    w = _Worker(probe_timeout("import_torch", timeout))
    while True:
        left = w.deadline - time.monotonic()
        kind, line = stream.readline(max(0.0, left)) if left > 0 else (runner.Stream.TIMEOUT, "")
        if kind == runner.Stream.TIMEOUT:
            _timed_out(stream, w, w.limit, python, remaining, data, progress)
            return
        if kind == runner.Stream.EOF:
            _ended(stream, w, python, remaining, data, progress)
            return
        event = _event(line)
        if event is None:
            w.stray = w.stray or line.strip()[:200] or None
            continue
        if _handle(event, stream, w, remaining, data, progress, timeout):
            return


def _event(line: str) -> Optional[Dict[str, Any]]:
    """A protocol line as an object with a string ``event``, else ``None`` (not ours)."""
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) and isinstance(event.get("event"), str) else None


def _next_due(remaining: List[str], w: _Worker) -> Optional[str]:
    """The check whose ``start`` may come next: the first left that the worker did not say it
    does not know (its hello's ``unknown``)."""
    return next((n for n in remaining if n not in w.unknown), None)


def _due(w: _Worker, limit: float) -> None:
    w.began = time.monotonic()
    w.limit = limit
    w.deadline = w.began + limit


def _handle(event: Dict[str, Any], stream: runner.Stream, w: _Worker, remaining: List[str], data: Dict[str, Any],
            progress: Optional[Progress], timeout: float = 60.0) -> bool:
    """Act on one protocol event; True when the worker is done (it ended, or broke the protocol)."""
    kind = event["event"]
    check = event.get("check")
    if kind == "hello" and not w.said_hello:
        w.said_hello = True
        skipped = event.get("unknown")
        w.unknown = {str(x) for x in skipped} if isinstance(skipped, list) else set()
        for key in ("python", "platform", "env", "packages"):
            value = event.get(key)
            problem = section_problem(key, value)
            if problem:
                _note(data, f"the worker's {key} facts were left out ({key}{problem[0]}: {problem[1]})")
            elif value is not None:
                data.setdefault(key, value)
        # the first check may wait for torch's import (a fresh worker imports it up front)
        first = remaining[0] if remaining else "import_torch"
        _due(w, probe_timeout("import_torch", timeout)
             + (probe_timeout(first, timeout) if first != "import_torch" else 0.0))
    elif kind == "start" and w.said_hello and w.current is None and check == _next_due(remaining, w):
        w.started = True
        w.current = check
        w.mark = stream.stderr_size()
        _due(w, probe_timeout(str(check), timeout))  # the check's own budget, from its start
        if progress:
            progress(str(w.current), None)
    elif kind == "result" and w.said_hello and w.current is not None and check == w.current:
        name = str(check)
        run = {k: v for k, v in event.items() if k not in ("event", "check")}
        problem = run_problem(name, run)
        if problem:
            run = {"outcome": "error", "seconds": round(time.monotonic() - w.began, 3),
                   "error": {"type": "MalformedResult",
                             "message": f"the collector's result was malformed: {name}{problem[0]}: {problem[1]}"}}
        data["runs"][name] = run
        w.current = None
        w.finished += 1
        _done(remaining, name, data["runs"], progress)
        if remaining:
            _due(w, probe_timeout(remaining[0], timeout) + 5.0)  # the next start is due at once
    elif kind == "done" and w.said_hello:
        _ended(stream, w, data["collector"]["python"], remaining, data, progress,
               early="the worker said it was done before this check's result")
        return True
    else:
        _violation(event, stream, w, remaining, data, progress)
        return True
    return False


def _violation(event: Dict[str, Any], stream: runner.Stream, w: _Worker, remaining: List[str],
               data: Dict[str, Any], progress: Optional[Progress]) -> None:
    """A protocol line that was not due (a second ``hello``, a ``start`` out of order, a result for
    a check that is not running): something in the target — not the collector — writes to the
    result channel. The worker is ended; the check it was in (or the next) fails with what came."""
    stream.kill(after=0.0)
    res = stream.finish()
    what = ascii(json.dumps(event)[:160])
    victim = w.current or (remaining[0] if remaining else None)
    if not w.said_hello or victim is None:
        data["collector"]["error"] = (f"{data['collector']['python']}: the worker broke envcheck's collector "
                                      f"protocol: {what}")
        return
    data["runs"][victim] = {"outcome": "error", "seconds": round(time.monotonic() - w.began, 3),
                            "error": {"type": "ProtocolViolation",
                                      "message": f"a line on the result channel that was not due: {what} — "
                                                 "something in the environment writes to the collector's "
                                                 "channel; this check's result cannot be trusted"},
                            "stderr": res.stderr[w.mark:][-STDERR_KEEP:]}
    _done(remaining, victim, data["runs"], progress)


def _timed_out(stream: runner.Stream, w: _Worker, limit: float, python: str, remaining: List[str],
               data: Dict[str, Any], progress: Optional[Progress]) -> None:
    stream.kill(after=limit)
    res = stream.finish()
    if not w.said_hello:
        why = f"it printed nothing envcheck understands within {limit:g} s"
        data["collector"]["error"] = _startup_error(python, res, why, w.stray)
        data["collector"]["stalled"] = True
        return
    victim = w.current or (remaining[0] if remaining else None)
    if victim is None:
        return
    data["runs"][victim] = {"outcome": "timeout", "timeout": round(limit, 3),
                            "seconds": round(time.monotonic() - w.began, 3),
                            "stderr": res.stderr[w.mark:][-STDERR_KEEP:]}
    _done(remaining, victim, data["runs"], progress)


def _ended(stream: runner.Stream, w: _Worker, python: str, remaining: List[str], data: Dict[str, Any],
           progress: Optional[Progress], early: Optional[str] = None) -> None:
    """The worker ended (EOF), or said ``done`` (``early`` says what that means for a running check)."""
    res = stream.finish()
    if w.current is not None and early:
        data["runs"][w.current] = {"outcome": "crash", "seconds": round(time.monotonic() - w.began, 3),
                                   "exit": early, "stderr": res.stderr[w.mark:][-STDERR_KEEP:]}
        _done(remaining, w.current, data["runs"], progress)
    elif w.current is not None:
        run: Dict[str, Any] = {"outcome": "crash", "seconds": round(time.monotonic() - w.began, 3),
                               "stderr": res.stderr[w.mark:][-STDERR_KEEP:]}
        if res.signal:
            run["signal"] = res.error.rsplit(" by ", 1)[-1] if res.error else f"signal {res.signal}"
        else:
            run["exit"] = res.error or "the worker ended without a result"
        data["runs"][w.current] = run
        _done(remaining, w.current, data["runs"], progress)
    elif not w.said_hello:
        data["collector"]["error"] = _startup_error(python, res, None, w.stray)
    elif not w.finished:
        data["collector"]["error"] = (f"{python}: the worker said it was done without running a check" if early else
                                      f"the worker ended between checks: {res.error or 'no done line'}")


def _note(data: Dict[str, Any], text: str) -> None:
    data["collector"].setdefault("notes", []).append(text)


def _done(remaining: List[str], name: str, runs: Dict[str, Any], progress: Optional[Progress]) -> None:
    if name in remaining:
        remaining.remove(name)
    if progress:
        progress(name, runs.get(name))


def _startup_error(python: str, res: runner.Result, why: Optional[str] = None, stray: Optional[str] = None) -> str:
    """Why ``python`` could not run the collector: the exit, the last stderr lines, and what it
    printed instead of the protocol."""
    tail = " ".join(res.stderr.strip().splitlines()[-3:])[-500:]
    if why is None:
        why = res.error or ("it printed something other than envcheck's collector protocol" if stray
                            else "it printed nothing")
    said = f"; its output began {ascii(stray[:80])}" if stray else ""
    return f"{python} could not run envcheck's collector: {why}{said}" + (f" ({tail})" if tail else "")
