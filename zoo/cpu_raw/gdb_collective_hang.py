"""A hung collective looked at with gdb, as users paste it: rank 1 never reaches the all_reduce, rank 0 waits in it;
after 8 s `gdb -p <rank 0> -batch -ex bt` prints rank 0's native backtrace (gdb installed: apt-get install gdb),
then both ranks are killed."""
import os
import subprocess
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank: int) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("MASTER_PORT", "29581"))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    print(f"rank {rank}: process group ready", flush=True)
    if rank == 1:
        time.sleep(3600)  # stuck: never reaches the collective
    t = torch.ones(4)
    dist.all_reduce(t)


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(r,)) for r in range(2)]
    for p in procs:
        p.start()
    try:
        time.sleep(8)
        dump = subprocess.run(["gdb", "-p", str(procs[0].pid), "-batch", "-ex", "bt"], capture_output=True, text=True, timeout=120)
        print(dump.stdout, dump.stderr, end="", flush=True)
    finally:
        for p in procs:
            p.kill()
