"""A real Slurm cluster on 127.0.0.1 for the tests: munge, slurmctld and two slurmd (node1, node2)
on one machine — Debian's slurm-wlm is built with multiple-slurmd support, so `slurmd -N NAME`
runs one daemon per node name, each on its own port. Everything lives in a temporary folder with
its own slurm.conf (SLURM_CONF); /etc/slurm is not touched. Stopped by pid, never by name."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional

NODES = ("node1", "node2")

CONF = """\
ClusterName=envcheck
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CryptoType=crypto/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PropagateResourceLimits=NONE
NodeName=node[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[{p1}-{p2}] CPUs=1 RealMemory=500 State=UNKNOWN
PartitionName=debug Nodes=node[1-2] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


def missing() -> Optional[str]:
    """Why no cluster can be started here (``None`` when one can)."""
    if os.name != "posix" or os.geteuid() != 0:
        return "a test Slurm cluster needs root (slurmd runs jobs as their user)"
    for prog in ("slurmctld", "slurmd", "sbatch", "sinfo", "munged", "munge"):
        if shutil.which(prog) is None:
            return f"{prog} not installed (Debian: apt-get install slurm-wlm munge; .ci/run does)"
    return None


def _free_ports(n: int) -> List[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def _munge_ok() -> bool:
    try:
        enc = subprocess.run(["munge", "-n"], capture_output=True, timeout=10)
        if enc.returncode != 0:
            return False
        return subprocess.run(["unmunge"], input=enc.stdout, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class Cluster:
    def __init__(self, root: Path):
        self.root = root
        self.env: Dict[str, str] = {}
        self.munged: Optional[int] = None

    def start(self) -> Cluster:
        d = self.root
        (d / "state").mkdir(parents=True, exist_ok=True)
        for n in NODES:
            (d / "spool" / n).mkdir(parents=True, exist_ok=True)
        if not _munge_ok():
            self._start_munge()
        # consecutive ports for the two slurmd: try until a free pair is found
        for _ in range(20):
            ctld, slurmd, p1 = _free_ports(3)
            if p1 + 1 < 65536 and p1 + 1 not in (ctld, slurmd) and _free(p1 + 1):
                break
        conf = d / "slurm.conf"
        conf.write_text(CONF.format(d=d, ctld_port=ctld, slurmd_port=slurmd, p1=p1, p2=p1 + 1))
        self.env = {**os.environ, "SLURM_CONF": str(conf)}
        subprocess.run(["slurmctld", "-f", str(conf)], check=True, env=self.env, timeout=30)
        for n in NODES:
            subprocess.run(["slurmd", "-f", str(conf), "-N", n], check=True, env=self.env, timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            out = subprocess.run(["sinfo", "-h", "-o", "%D %t"], capture_output=True, text=True, env=self.env,
                                 timeout=10).stdout.split()
            if out == ["2", "idle"]:
                return self
            time.sleep(0.5)
        logs = "\n".join((d / f).read_text()[-2000:] for f in ("slurmctld.log", "slurmd-node1.log") if (d / f).exists())
        self.stop()
        raise RuntimeError(f"the test Slurm cluster did not come up in 60 s:\n{logs}")

    def _start_munge(self) -> None:
        run = Path("/run/munge")
        run.mkdir(parents=True, exist_ok=True)
        shutil.chown(str(run), "munge", "munge")
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            subprocess.run(["runuser", "-u", "munge", "--", "mungekey", "--create"], check=True, timeout=30)
        pidfile = run / "munged.pid"
        subprocess.run(["runuser", "-u", "munge", "--", "munged"], check=True, timeout=30)
        # the pid file is the munge user's: read it once munged has written it
        for _ in range(50):
            if pidfile.exists() and pidfile.read_text().strip():
                self.munged = int(pidfile.read_text().strip())
                break
            time.sleep(0.1)
        if not _munge_ok():
            raise RuntimeError("munged did not start")

    def cancel(self, name: str, deadline_s: float = 90) -> str:
        """Cancel every job called ``name`` and wait until it has left the queue; return what is
        still queued after ``deadline_s`` (empty when all left). A cancelled job stays listed as
        CG (completing) while slurmd kills its steps, which takes seconds on a busy 2-core box."""
        subprocess.run(["scancel", "--name", name], capture_output=True, timeout=60, env=self.env)
        end = time.monotonic() + deadline_s
        while True:
            left = subprocess.run(["squeue", "-h", "--name", name], capture_output=True, text=True, timeout=60,
                                  env=self.env).stdout.strip()
            if not left or time.monotonic() > end:
                return left
            time.sleep(1)

    def stop(self) -> None:
        pids = [self.root / f"slurmd-{n}.pid" for n in NODES] + [self.root / "slurmctld.pid"]
        for pidfile in pids:
            try:
                os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        if self.munged:
            try:
                os.kill(self.munged, signal.SIGTERM)
            except OSError:
                pass


def _free(port: int) -> bool:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def running(folder: Path) -> Iterator[Cluster]:
    """A started cluster in ``folder`` for a pytest fixture to ``yield from``, stopped after; skips
    (with the reason) where Slurm or munge is not installed."""
    import pytest

    why = missing()
    if why:
        pytest.skip(why)
    c = Cluster(folder).start()
    try:
        yield c
    finally:
        c.stop()
