"""Rank 1 is stuck (sleeps) before an all_reduce; rank 0's NCCL watchdog times out after 20 s."""
import time

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _nccl import log, setup

STUCK_RANK = 1


@record
def main():
    rank, dev = setup()
    x = torch.ones(1 << 20, device=dev)
    if rank == STUCK_RANK:
        log(rank, "stuck before all_reduce")
        time.sleep(180)
    dist.all_reduce(x)
    torch.cuda.synchronize()
    log(rank, "all_reduce done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
