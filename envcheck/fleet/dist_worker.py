"""The cross-node collective check, run inside the target interpreter (standard library + torch only).

Started by ``envcheck verify --distributed`` in each process ``torchrun`` launched; joins the job's
process group through ``env://`` (the MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE torchrun set, or the
agent's store under c10d rendezvous) — envcheck has no rendezvous of its own. NCCL on CUDA, gloo
otherwise. Prints one JSON object on stdout::

    {"backend": "gloo", "rank": 0, "world_size": 2, "hosts": ["n1", "n2"],
     "all_reduce": {"ok": true, "max_abs_error": 0.0}, "all_gather": {"ok": true},
     "bandwidth": {"mib": 16, "iterations": 5, "seconds": 0.08, "algbw_gbps": 1.1, "busbw_gbps": 1.1},
     "compute_seconds": [0.02, 0.021], "init_seconds": 0.4, "error": null}

Usage: python dist_worker.py TIMEOUT_S MIB ITERATIONS
"""

import datetime
import json
import os
import socket
import sys
import time
import traceback


def main(argv):
    timeout, mib, iterations = float(argv[1]), int(argv[2]), int(argv[3])
    out = {"error": None}
    try:
        import torch
        import torch.distributed as dist
    except BaseException as exc:  # noqa: BLE001 - any import failure is the result
        out["error"] = "import torch failed: %s: %s" % (type(exc).__name__, exc)
        return out
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local = int(os.environ.get("LOCAL_RANK", "0"))
    except (KeyError, ValueError):
        out["error"] = "RANK/WORLD_SIZE are not set: start `envcheck verify --distributed` with torchrun"
        return out
    cuda = torch.cuda.is_available()
    backend = "nccl" if cuda else "gloo"
    device = torch.device("cuda", local % max(1, torch.cuda.device_count())) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    out.update({"backend": backend, "rank": rank, "world_size": world, "local_rank": local,
                "device": str(device), "torch": torch.__version__})
    t0 = time.monotonic()
    try:
        dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=timeout))
        out["init_seconds"] = round(time.monotonic() - t0, 3)

        def sync():
            if cuda:
                torch.cuda.synchronize(device)

        # all_reduce of data every rank can recompute: rank r contributes seeded noise (seed 1000 + r)
        def part(r):
            g = torch.Generator().manual_seed(1000 + r)
            return torch.rand(4096, generator=g, dtype=torch.float64)

        x = part(rank).to(torch.float32).to(device)
        dist.all_reduce(x)
        expected = sum(part(r) for r in range(world))
        err = float((x.double().cpu() - expected).abs().max())
        out["all_reduce"] = {"ok": err <= 1e-4 * world, "max_abs_error": err}

        # all_gather: every rank's rank number and host name arrive in rank order
        ranks = [torch.zeros(1, dtype=torch.int64, device=device) for _ in range(world)]
        dist.all_gather(ranks, torch.tensor([rank], dtype=torch.int64, device=device))
        got = [int(t.item()) for t in ranks]
        name = socket.gethostname().encode("utf-8")[:255]
        mine_name = torch.zeros(256, dtype=torch.uint8)
        mine_name[0] = len(name)
        mine_name[1:1 + len(name)] = torch.tensor(list(name), dtype=torch.uint8)
        names = [torch.zeros(256, dtype=torch.uint8, device=device) for _ in range(world)]
        dist.all_gather(names, mine_name.to(device))
        hosts = [bytes(t.cpu()[1:1 + int(t[0])].tolist()).decode("utf-8", "replace") for t in names]
        out["all_gather"] = {"ok": got == list(range(world)), "ranks": got}
        out["hosts"] = hosts

        # a fixed local workload, timed per rank and gathered: the slow rank stands out
        a = torch.rand(256, 256, device=device)
        sync()
        c0 = time.monotonic()
        for _ in range(20):
            a = torch.mm(a, a).clamp_(-1, 1)
        sync()
        mine = time.monotonic() - c0
        times = [torch.zeros(1, dtype=torch.float64, device=device) for _ in range(world)]
        dist.all_gather(times, torch.tensor([mine], dtype=torch.float64, device=device))
        out["compute_seconds"] = [round(float(t.item()), 6) for t in times]

        # bus bandwidth of all_reduce (the nccl-tests definition: algbw × 2(n-1)/n)
        n = mib * 1024 * 1024 // 4
        buf = torch.ones(n, dtype=torch.float32, device=device)
        for _ in range(2):
            dist.all_reduce(buf)
        sync()
        dist.barrier()
        b0 = time.monotonic()
        for _ in range(iterations):
            dist.all_reduce(buf)
        sync()
        secs = (time.monotonic() - b0) / iterations
        algbw = (n * 4) / secs / 1e9 if secs > 0 else 0.0
        out["bandwidth"] = {"mib": mib, "iterations": iterations, "seconds": round(secs, 6),
                            "algbw_gbps": round(algbw, 4),
                            "busbw_gbps": round(algbw * 2 * (world - 1) / world if world > 1 else algbw, 4)}
        dist.barrier()
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - a failed collective is the result
        out["error"] = "%s: %s" % (type(exc).__name__, str(exc).strip().splitlines()[0] if str(exc).strip() else "")
        out["traceback"] = traceback.format_exc()[-4000:]
    out["seconds"] = round(time.monotonic() - t0, 3)
    return out


if __name__ == "__main__":
    result = main(sys.argv)
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)  # a wedged NCCL/gloo thread must not keep the process alive
