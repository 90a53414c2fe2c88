"""``envcheck fleet`` — merge and compare node reports; render Slurm / Kubernetes launchers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any
from envcheck.cli.conventions import COMMAND_HELP, file_arg, path_text
from envcheck.cli.flags import add_force, add_interpreter, add_json, add_lock, add_tier, add_timeout
from envcheck.fsutil import shown

HELP = COMMAND_HELP["fleet"]

EPILOG = """\
envcheck schedules nothing: Slurm, Kubernetes or torchrun run `envcheck verify --report` on every
node; `fleet merge` reads the reports.

examples:
  envcheck fleet slurm --partition gpu --nodes 16 > check.sbatch && sbatch check.sbatch
  envcheck fleet slurm --nodelist 'gpu[001-016]' --tier quick --submit --wait
  envcheck fleet slurm --prolog > /etc/slurm/prolog.d/50-envcheck.sh
  envcheck fleet k8s --nodes 8 --image team/torch:prod > job.yaml && kubectl apply -f job.yaml
  envcheck fleet merge reports/                       how many pass, failures by cause, drift
  envcheck fleet merge reports/ --lock envcheck.lock.toml --junit fleet.xml --save fleet.json
  envcheck fleet diff before.json after.json          two saved fleets (or two node reports)
"""

MERGE_EPILOG = """\
examples:
  envcheck fleet merge reports/                     every *.json under reports/ (recursively)
  envcheck fleet merge r/gpu001.json r/gpu002.json  named reports
  envcheck fleet merge reports/ --lock envcheck.lock.toml   mark values the lock rules out
  envcheck fleet merge reports/ --expect 'gpu[001-016]'     name nodes that sent no report
  envcheck fleet merge reports/ --json > fleet.json         the fleet as JSON (what fleet diff reads)
  envcheck fleet merge reports/ --junit fleet.xml --prometheus /var/lib/node_exporter/envcheck.prom

Drift: every fact not the same on all nodes (driver, torch, variant, cuda, cudnn, nccl, arch_list,
torchvision, torchaudio, python, glibc, os, shm, gpu_model, gpu_count), its majority value and the
outliers. Node lists are compressed the way Slurm writes them (gpu[001-017,020]). A report that
cannot be read (truncated: the node did not finish) is named and skipped; the rest is merged.

exit codes: 0 every node passes and nothing drifts · 1 a node fails, a fact drifts, the lock rules
a value out, an expected node or a rank is missing, a rank is slow · 2 bad input (a report skipped,
nothing to read)
"""

DIFF_EPILOG = """\
examples:
  envcheck fleet diff reports/gpu001.json reports/gpu017.json   two nodes: facts and checks that differ
  envcheck fleet diff before/ after/                            two fleets (folders of reports)
  envcheck fleet diff before.json after.json                    two saved `fleet merge --json`

exit codes: 0 no difference · 1 differences · 2 bad input
"""

SLURM_EPILOG = """\
examples:
  envcheck fleet slurm --partition gpu --nodes 16                 print the sbatch script
  envcheck fleet slurm --nodelist 'gpu[001-016]' --tier quick --submit --wait   run it, wait, exit as merge
  envcheck fleet slurm --python /shared/venvs/train/bin/python --lock envcheck.lock.toml --nodes 4
  envcheck fleet slurm --prolog                                   a quick-tier prolog (drains broken nodes)

The script: `srun --ntasks-per-node=1 envcheck verify --report DIR/$SLURM_JOB_ID/` on every node (a
shared folder), then `envcheck fleet merge` over it (fleet.json and fleet.xml beside the reports).
"""

K8S_EPILOG = """\
examples:
  envcheck fleet k8s --nodes 8 --image team/torch:prod > job.yaml      reports on stdout (kubectl logs)
  envcheck fleet k8s --nodes 8 --lock envcheck.lock.toml --pvc fleet-reports   the plan's image and lock
                                                      (a ConfigMap), reports to a PVC
  envcheck fleet k8s --nodes 4 --vendor amd --gpus-per-node 8 --image team/torch:rocm

An Indexed Job: completions = parallelism = nodes, one pod per node (pod anti-affinity and a
hostname topology spread), GPU requests (nvidia.com/gpu or amd.com/gpu), /dev/shm as a memory
emptyDir. The comments at the top say how to gather the reports and merge them.
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("fleet", help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    fs = p.add_subparsers(dest="fleet_command", metavar="COMMAND", parser_class=type(p))
    raw = argparse.RawDescriptionHelpFormatter

    m = fs.add_parser("merge", help="merge node reports: pass counts, failures by cause, drift",
                      description="Merge node reports (`envcheck verify --report`) into the fleet's view.",
                      epilog=MERGE_EPILOG, formatter_class=raw)
    m.add_argument("inputs", nargs="+", type=path_text, metavar="REPORT_OR_DIR")
    add_lock(m, "mark the values this envcheck.lock.toml rules out")
    add_json(m, "print the fleet as JSON (with every node's facts)")
    m.add_argument("--junit", metavar="FILE", type=file_arg,
                   help="write JUnit XML: a suite per node (testcase per check, classname = node) and a "
                        "fleet-drift suite")
    m.add_argument("--prometheus", metavar="FILE", type=file_arg, help="write node_exporter textfile metrics")
    m.add_argument("--save", metavar="FILE", type=file_arg, help="also write the --json document to FILE")
    m.add_argument("--expect", metavar="NODES",
                   help="the nodes that should have reported (hostlist: gpu[001-016], or a comma list); "
                        "those without a readable report are missing (exit 1)")
    add_force(m, "let --junit/--prometheus/--save replace files")
    m.set_defaults(run=run_merge)

    d = fs.add_parser("diff", help="compare two nodes or two fleets (before/after an upgrade)",
                      description="Compare two node reports, two folders of reports, or two saved fleets.",
                      epilog=DIFF_EPILOG, formatter_class=raw)
    d.add_argument("a", type=path_text, metavar="A")
    d.add_argument("b", type=path_text, metavar="B")
    add_json(d, "print the differences as JSON")
    d.set_defaults(run=run_diff)

    s = fs.add_parser("slurm", help="print (or submit) an sbatch script that verifies every node",
                      description="An sbatch script: srun envcheck verify on every node, then fleet merge.",
                      epilog=SLURM_EPILOG, formatter_class=raw)
    s.add_argument("--partition", metavar="P")
    s.add_argument("--account", metavar="A")
    where = s.add_mutually_exclusive_group()
    where.add_argument("--nodes", metavar="N", type=int, help="how many nodes")
    where.add_argument("--nodelist", metavar="L", help="which nodes (Slurm hostlist: gpu[001-016])")
    s.add_argument("--gpus-per-node", metavar="G", type=int)
    add_tier(s, default="full")
    s.add_argument("--reports", metavar="DIR", default="envcheck-reports", type=path_text,
                   help="shared folder for the reports (a subfolder per job id); default envcheck-reports")
    add_interpreter(s, "the interpreter to verify on each node")
    add_lock(s, "the lock to verify against (a path every node can read)", path=False)
    s.add_argument("--time", metavar="T", help="the job's time limit (default: 00:10:00 quick, 01:00:00 full)")
    s.add_argument("--job-name", metavar="NAME", default="envcheck-fleet")
    s.add_argument("--envcheck", metavar="CMD", default="envcheck",
                   help="envcheck as the nodes run it (--prolog: made absolute now, from this PATH)")
    s.add_argument("--prolog", action="store_true", help="print a quick-tier prolog snippet instead")
    s.add_argument("--submit", action="store_true", help="submit the script with sbatch")
    s.add_argument("--wait", action="store_true",
                   help="with --submit: wait for the job; exit 0 when it succeeded, else 1 (its own code is said)")
    add_timeout(s, 3600.0, "with --wait: give up after S seconds (default 3600)")
    s.set_defaults(run=run_slurm)

    k = fs.add_parser("k8s", help="print a Kubernetes Indexed Job that verifies one GPU node per pod",
                      description="A batch/v1 Indexed Job: one pod per GPU node, each writing its node report.",
                      epilog=K8S_EPILOG, formatter_class=raw)
    k.add_argument("--nodes", metavar="N", type=int, required=True, help="how many GPU nodes (completions)")
    k.add_argument("--image", metavar="IMG", help="the image to verify (default with --lock: the plan's image tag)")
    add_lock(k, "the plan: its image tag, its variant's GPU vendor")
    k.add_argument("--vendor", choices=("nvidia", "amd"), help="GPU resource (default: from --lock, else nvidia)")
    k.add_argument("--gpus-per-node", metavar="G", type=int, default=1,
                   help="GPUs each pod requests (the node's count verifies all of them); default 1")
    add_tier(k, default="full")
    k.add_argument("--name", default="envcheck-fleet", help="the Job's name")
    k.add_argument("--namespace", metavar="NS")
    k.add_argument("--pvc", metavar="CLAIM", help="write reports to this PersistentVolumeClaim (default: stdout)")
    k.add_argument("--shm", metavar="SIZE", default="16Gi", help="/dev/shm size limit (default 16Gi)")
    k.add_argument("--node-selector", metavar="K=V", action="append", default=[],
                   help="only nodes with this label (repeatable), e.g. nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3")
    k.set_defaults(run=run_k8s)
    p.set_defaults(run=lambda args: (p.print_help(), 2)[1])


def run_merge(args: argparse.Namespace) -> int:
    from envcheck.app.fleet import MergeRequest, fleet_merge

    def skipped(path: Path, why: str) -> None:
        sys.stderr.write(f"envcheck: skipped {shown(path)}: {why}\n")

    result = fleet_merge(MergeRequest(inputs=args.inputs, lock=args.lock, expect=args.expect, junit=args.junit,
                                      prometheus=args.prometheus, save=args.save, force=args.force),
                         on_skip=skipped)
    args.exit_code = result.exit_code
    if args.json:
        sys.stdout.write(json.dumps(result.document, indent=1) + "\n")  # one write: json.dump writes per token
    else:
        print_fleet(result.document)
    return args.exit_code


def _t(value: object) -> str:
    """A value from a node report, safe to print: one line, no escape sequences (a report can come
    from any machine: a node name must not fake lines of envcheck's output), no rich markup."""
    from rich.markup import escape

    from envcheck.edge import terminal_text

    return escape(terminal_text(str(value), keep_newlines=False))


def _v(value: object, fact: str = "") -> str:
    """A diff value to print: ``None`` (the report has none) as words, never ``None``. A package
    known to be missing is already the value ``not installed`` (envcheck.fleet.drift.NOT_INSTALLED)."""
    if value is None:
        from envcheck.fleet.drift import PACKAGE_FACTS

        return "[dim]not recorded[/]" if fact in PACKAGE_FACTS else "[dim]absent[/]"
    return _t(value)


def print_fleet(doc: dict) -> None:
    from envcheck.cli.output import console

    con = console()
    total, passed = doc["nodes_total"], doc["passed"]
    hosts, ranks = doc.get("hosts_total", total), doc.get("ranks_total", 0)
    if ranks:  # a distributed run writes one report per rank: count hosts as nodes, name the ranks
        what = (f"{hosts} node{'s' if hosts != 1 else ''}, {total} report{'s' if total != 1 else ''} "
                f"({ranks} rank{'s' if ranks != 1 else ''})")
    else:
        what = f"{total} node{'s' if total != 1 else ''}"
    head = f"[bold]envcheck fleet — {what}: {passed} pass, {total - passed} fail[/bold]"
    off = (doc.get("lock") or {}).get("nodes_off_lock")
    if off:  # the headline says why the exit code is 1 when every node passed its own checks
        head += f"[bold red]; {off} node{'s' if off != 1 else ''} differ{'s' if off == 1 else ''} from the lock[/]"
    if doc["skipped"]:
        head += f" [bold red]({len(doc['skipped'])} report(s) skipped)[/]"
    con.print(head)
    for s in doc["skipped"]:
        con.print(f" [red]SKIPPED[/] {_t(s['file'])}: {_t(s['reason'])}")
    if doc.get("missing"):
        con.print(f" [bold red]MISSING[/] {doc['missing_count']} of {doc['expected']} expected node(s) sent no "
                  f"readable report: {_t(doc['missing'])}")
    for dup in doc["duplicates"]:
        con.print(f" [yellow]DUPLICATE[/] {_t(dup)} (the second is ignored)")
    if doc["failures"]:
        con.print("\n[bold]failing checks, by cause[/bold]")
        for g in doc["failures"]:
            rule = f" ({_t(g['rule'])})" if g.get("rule") else ""
            con.print(f" [bold red]{_t(g['check'])}[/]{rule} on {g['count']} node(s): {_t(g['nodes'])}")
            detail = g["detail"] if len(g["detail"]) <= 300 else g["detail"][:299].rsplit(" ", 1)[0] + " …"
            con.print(f"    {_t(detail)}")
            if g["fix"]:  # in full: a fix holds commands to copy (newcomer6 #7: cut mid-command at 300)
                con.print(f"    [bold]fix:[/bold] {_t(g['fix'])}")
    if doc["drift"]:
        con.print("\n[bold]drift[/bold] (facts not the same on every node)")
        for d in doc["drift"]:
            lock = f"  [dim]lock: {_t(d['lock'])}[/]" if d.get("lock") else ""
            wrong = " [bold red]✗ lock[/]" if any(v["lock_wrong"] for v in d["values"][:1]) else ""
            con.print(f" [bold]{_t(d['fact'])}[/]: majority {_t(d['majority'])} on {d['majority_count']} node(s){wrong}{lock}")
            for o in d["outliers"]:
                mark = " [bold red]✗ lock[/]" if o["lock_wrong"] else ""
                con.print(f"    [yellow]{_t(o['value'])}[/] on {_t(o['nodes'])}{mark}")
    elif total:
        same = "the same on every node that reports it"
        con.print(f"no drift: every compared fact is {same}" if not off else
                  f"no drift (every compared fact is {same}), but the lock rules out what the nodes have:")
    lock_doc = doc.get("lock")
    if lock_doc:
        uniform = [m for m in lock_doc["mismatches"] if not any(d["fact"] == m["fact"] for d in doc["drift"])]
        for m in uniform:
            vals = "; ".join(f"{v['value']} on {v['nodes']}" for v in m["wrong"])
            con.print(f" [bold red]lock[/] {_t(m['fact'])}: expected {_t(m['lock'])}, found {_t(vals)}")
    ranks = doc.get("ranks")
    if ranks:
        con.print(f"\n[bold]distributed[/bold]: {ranks['ranks']} of {ranks['world_size']} rank(s) reported; "
                  f"median bus bandwidth {ranks['busbw_gbps_median'] or 0:.3g} GB/s")
        if ranks["missing"]:
            con.print(f" [bold red]missing ranks[/]: {', '.join(map(str, ranks['missing']))} (no report: crashed or never started)")
        for f in ranks["failed"]:
            con.print(f" [bold red]rank {f['rank']}[/] ({_t(f['node'])}): {_t(f['error'] or '')}")
        for s in ranks["slow"]:
            con.print(f" [yellow]slow rank {s['rank']}[/] ({_t(s['node'])}): {_t(s['why'])}")


def run_diff(args: argparse.Namespace) -> int:
    from envcheck.app.fleet import fleet_diff

    result = fleet_diff(args.a, args.b)
    for s in result.skipped:
        sys.stderr.write(f"envcheck: skipped {shown(s['file'])}: {s['reason']}\n")
    doc = result.document
    args.exit_code = result.exit_code
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        return args.exit_code
    from envcheck.cli.output import console

    con = console()
    if doc["kind"] == "nodes":
        con.print(f"[bold]{_t(doc['a'])} ({_t(doc['status']['a'])}) vs {_t(doc['b'])} ({_t(doc['status']['b'])})[/bold]")
        for f in doc["facts"]:
            con.print(f" {_t(f['fact'])}: {_v(f['a'], f['fact'])} → {_v(f['b'], f['fact'])}")
        for c in doc["checks"]:
            con.print(f" check {_t(c['check'])}: {_v(c['a'])} → {_v(c['b'])}")
    else:
        con.print(f"[bold]{_t(doc['a'])} ({doc['nodes']['a']} nodes, {doc['passed']['a']} pass) vs "
                  f"{_t(doc['b'])} ({doc['nodes']['b']} nodes, {doc['passed']['b']} pass)[/bold]")
        if doc["only_a"]:
            con.print(f" only in A: {_t(doc['only_a'])}")
        if doc["only_b"]:
            con.print(f" only in B: {_t(doc['only_b'])}")
        for r in doc["facts"]:
            con.print(f" {_t(r['fact'])}: {_v(r['a'], r['fact'])} → {_v(r['b'], r['fact'])} on {_t(r['nodes'])}")
        for r in doc["status"]:
            con.print(f" status {_t(r['a'])} → {_t(r['b'])} on {_t(r['nodes'])}")
        for r in doc["majority"]:
            con.print(f" majority {_t(r['fact'])}: {_v(r['a'], r['fact'])} → {_v(r['b'], r['fact'])}")
    if not doc["changed"]:
        con.print("no difference")
    return args.exit_code


def run_slurm(args: argparse.Namespace) -> int:
    from envcheck.app.fleet import slurm_job, slurm_submit
    from envcheck.errors import UsageError
    from envcheck.fleet.slurm import SlurmOptions

    if args.wait and not args.submit:
        raise UsageError("--wait needs --submit")
    opts = SlurmOptions(partition=args.partition, nodes=args.nodes, nodelist=args.nodelist, tier=args.tier,
                        reports=args.reports, envcheck=args.envcheck, python=args.python, lock=args.lock,
                        time=args.time, job_name=args.job_name, account=args.account,
                        gpus_per_node=args.gpus_per_node)
    script = slurm_job(opts, prolog=args.prolog)
    if not args.prolog:
        _say_missing_junit(args)
    if args.prolog or not args.submit:
        sys.stdout.write(script)
        return 0
    done = slurm_submit(script, args.wait, args.timeout)
    print(done.output)
    if done.job_code:
        sys.stderr.write(f"envcheck: job {done.job_id} ended with exit code {done.job_code} (its log: "
                         f"{args.job_name}-{done.job_id}.out in the submit folder)\n")
    return done.exit_code


def _say_missing_junit(args: argparse.Namespace) -> None:
    """Up front, on stderr: the batch script's JUnit step needs the ``junit`` extra, which this
    install lacks (the nodes' envcheck is often this one); the script still merges without it."""
    from envcheck.cli.conventions import note
    from envcheck.errors import MissingExtra, require_extra

    try:
        require_extra("junit")
    except MissingExtra as exc:
        note(args, f"note: the job writes fleet.json and its verdict, but no fleet.xml where envcheck lacks the "
                   f"'junit' extra, as this one does: {exc}")


def run_k8s(args: argparse.Namespace) -> int:
    from envcheck.app.fleet import K8sRequest, k8s_job
    from envcheck.errors import UsageError

    selector = {}
    for item in args.node_selector:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"--node-selector {item!r}: expected KEY=VALUE")
        selector[key] = value
    sys.stdout.write(k8s_job(K8sRequest(
        nodes=args.nodes, image=args.image, lock=args.lock, vendor=args.vendor, gpus_per_node=args.gpus_per_node,
        tier=args.tier, name=args.name, namespace=args.namespace, pvc=args.pvc, shm=args.shm,
        node_selector=selector or None)))
    return 0
