"""A run that stalls without any error: rank 1 is stuck in compute, rank 0 waits in its first
all_reduce under a tqdm progress bar. After a few seconds the whole process group is killed the
way a user stops a hung job (SIGKILL: no launcher message), so the log ends with the bar at 0."""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from tqdm import tqdm


def worker(rank: int) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("MASTER_PORT", "29561"))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    print(f"rank {rank}: process group ready", flush=True)
    if rank == 1:
        time.sleep(3600)  # stuck in compute: never reaches the collective
    t = torch.ones(4)
    for _ in tqdm(range(16), desc="train", file=sys.stderr):
        dist.all_reduce(t)


if __name__ == "__main__":
    try:
        os.setpgrp()  # its own process group, so the kill below takes the workers too
    except PermissionError:
        pass  # already a group leader (the recorder starts a new session)
    signal.signal(signal.SIGALRM, lambda *_: os.killpg(0, signal.SIGKILL))
    signal.alarm(8)
    mp.spawn(worker, nprocs=2)
