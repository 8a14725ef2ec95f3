"""A hung collective that the user stops with Ctrl-C: rank 1 never reaches the all_reduce, rank 0
waits in it; faulthandler dumps rank 0's stack after 3 s (what `faulthandler.dump_traceback_later`
in a training script prints), then the launcher gets SIGINT, as a terminal's Ctrl-C sends it."""
import faulthandler
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank: int) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("MASTER_PORT", "29563"))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    print(f"rank {rank}: process group ready", flush=True)
    if rank == 1:
        time.sleep(3600)  # stuck: never reaches the collective
    faulthandler.dump_traceback_later(3, exit=False)
    t = torch.ones(4)
    dist.all_reduce(t)


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(r,)) for r in range(2)]
    for p in procs:
        p.start()
    try:
        time.sleep(8)
        os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C
        time.sleep(1)
    except KeyboardInterrupt:
        for p in procs:
            p.kill()
        raise
