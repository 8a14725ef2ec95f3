"""Recorded on the device machine (one H200): two ranks on one GPU: rank 1 joins the store and never runs a collective, so rank 0's first all_reduce creates
its NCCL communicator and waits in NCCL's bootstrap for a peer that never connects; py-spy --native dumps rank 0 twice (Python frames, then --native).

    PY_SPY=/path/to/py-spy python zoo/gpu/raw/nccl_setup_hang_pyspy.py
"""
import os, subprocess, sys, time
import torch, torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29577", NCCL_DEBUG="INFO")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=2)
    print(f"rank {rank}: process group ready", flush=True)
    if rank == 1:
        time.sleep(3600)
    t = torch.ones(4, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()

if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(r,)) for r in range(2)]
    for p in procs: p.start()
    try:
        time.sleep(25)
        for native in (False, True):
            cmd = [os.environ.get("PY_SPY", "py-spy"), "dump", "--pid", str(procs[0].pid)] + (["--native"] if native else [])
            d = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            print(d.stdout, d.stderr, end="", flush=True)
    finally:
        for p in procs: p.kill()
