"""Healthy: 2 ranks all_reduce 64 MiB ten times over NCCL and exit 0."""
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _nccl import log, setup


@record
def main():
    rank, dev = setup()
    x = torch.full((16 * 1024 * 1024,), float(rank + 1), device=dev)
    for step in range(10):
        dist.all_reduce(x)
        x.div_(2)
    torch.cuda.synchronize()
    log(rank, f"done, x[0]={x[0].item():.1f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
