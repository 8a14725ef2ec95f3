"""Rank 0 all_reduces 1M floats, rank 1 2M floats (a sharding bug); NCCL does not check sizes.

ZOO_MISMATCH_NUMEL="<rank0>,<rank1>" picks other sizes (far apart sizes make NCCL pick
different algorithms/protocols on the two ranks).
"""
import os

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _nccl import log, setup

ODD_RANK = 1


@record
def main():
    rank, dev = setup()
    sizes = os.environ.get("ZOO_MISMATCH_NUMEL", "1048576,2097152").split(",")
    n = int(sizes[rank])
    x = torch.ones(n, device=dev)
    log(rank, f"all_reduce of {n} floats")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    log(rank, f"all_reduce returned, x[0]={x[0].item()} x[-1]={x[-1].item()}")
    dist.barrier()
    torch.cuda.synchronize()
    log(rank, "barrier done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
