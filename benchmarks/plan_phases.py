"""Where a plan's time goes: the CPU milliseconds of each phase of one ``envcheck plan`` run, in-process.

    /tmp/bench/bin/python benchmarks/plan_phases.py [--repeat N] [plan arguments…]

Run it with the python of a normal install (``pip install .``), from outside the repository (or
the source tree is imported). Each run is a fresh interpreter (``-c``), so imports are cold and the
parsed-matrix cache warm, as in ``run.py plan``. Prints the median over ``--repeat`` runs (default 7)
of: the interpreter's start (``python -c pass``), the imports ``envcheck plan`` makes, and the
phases of the plan itself (load the matrix, build the machine, resolve, make the plan, render,
write). The plan runs through ``envcheck.entry.main``, as the console script does (its collector
setting and untranslated argparse included). Phases are timed by wrapping the functions named in :data:`PHASES`; the rest of ``main``
(argument parsing, settings, output) is ``other``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile

#: (module, function, label): the functions whose time is a phase
PHASES = [
    ("envcheck.matrix", "load_matrix", "matrix"),
    ("envcheck.app.plan", "build_machine", "machine"),
    ("envcheck.resolve", "resolve", "resolve"),
    ("envcheck.resolve.plan", "make_plan", "make_plan"),
    ("envcheck.render", "render_available", "render"),
    ("envcheck.render.write", "write_outputs", "write"),
]

_CHILD = r"""
import sys, time  # (built in, loaded with the interpreter: nothing a plan imports is counted out)
clock = time.process_time
t0 = clock()
import importlib
import envcheck.entry as entry
entry._fewer_collections()  # what the program does before its imports
import envcheck.cli as cli
for mod in ("envcheck.app.plan", "envcheck.resolve", "envcheck.matrix", "envcheck.resolve.plan",
            "envcheck.render", "envcheck.render.write"):
    importlib.import_module(mod)
t1 = clock()
spent = {}
def wrap(mod, name, label):
    m = importlib.import_module(mod)
    f = getattr(m, name)
    def timed(*a, **k):
        t = clock()
        try:
            return f(*a, **k)
        finally:
            spent[label] = spent.get(label, 0.0) + clock() - t
    setattr(m, name, timed)
for mod, name, label in PHASES:
    wrap(mod, name, label)
sys.argv = ["envcheck"] + ARGS
import io  # (built in)
real_stdout, sys.stdout = sys.stdout, io.StringIO()  # (not contextlib: a module the plan may import)
t2 = clock()
try:
    entry.main()  # the program itself (argv from sys.argv), as the console script runs it
except SystemExit:
    pass
t3 = clock()
sys.stdout = real_stdout
spent["imports"] = t1 - t0
spent["other"] = (t3 - t2) - sum(v for k, v in spent.items() if k != "imports")
import json
print(json.dumps(spent))
"""


def main(argv: list) -> int:
    repeat = 7
    if argv[:1] == ["--repeat"]:
        repeat, argv = int(argv[1]), argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        args = argv or ["plan", "--gpu", "RTX 4090", "-o", f"{tmp}/out", "--force"]
        child = f"PHASES = {PHASES!r}\nARGS = {args!r}\n" + _CHILD
        runs, starts = [], []
        for _ in range(repeat):
            out = subprocess.run([sys.executable, "-c", child], cwd=tmp, capture_output=True, text=True,
                                 check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            t = subprocess.run([sys.executable, "-c",
                                "import resource as r; u = r.getrusage(r.RUSAGE_SELF); print(u.ru_utime + u.ru_stime)"],
                               capture_output=True, text=True, check=True)
            starts.append(float(t.stdout))
    labels = ["imports"] + [p[2] for p in PHASES] + ["other"]
    start = statistics.median(starts) * 1e3
    print(f"envcheck {' '.join(args)}  (median of {repeat} runs, CPU ms)")
    print(f"  {'interpreter start':<18} {start:7.1f}")
    total = start
    for label in labels:
        ms = statistics.median(r.get(label, 0.0) for r in runs) * 1e3
        total += ms
        print(f"  {label:<18} {ms:7.1f}")
    print(f"  {'total':<18} {total:7.1f}  ({total / start:.1f}x the interpreter's start)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
