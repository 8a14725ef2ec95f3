"""Rank 1 runs out of GPU memory (asks for 200 GiB on a 141 GB H200); rank 0 waits in all_reduce."""
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _nccl import log, setup

FAILING_RANK = 1


@record
def main():
    rank, dev = setup()
    x = torch.ones(1 << 20, device=dev)
    if rank == FAILING_RANK:
        log(rank, "allocating activations")
        acts = torch.empty(200 * 1024**3, dtype=torch.uint8, device=dev)  # 200 GiB
    dist.all_reduce(x)
    torch.cuda.synchronize()
    log(rank, "all_reduce done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
