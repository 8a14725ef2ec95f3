"""Rank 1 all_reduces a tensor of a different shape; run with TORCH_DISTRIBUTED_DEBUG=DETAIL.

DETAIL wraps the process group so that every collective's fingerprint
(op type, shapes, dtypes) is checked across ranks before it runs. Gradients are
all-reduced by hand rather than through DDP: with DETAIL on, DDP's constructor
segfaulted on torch 2.13.0+cpu here.
"""
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _train import log, setup, train_step

ODD_RANK = 1


@record
def main():
    rank, world, model, opt = setup(ddp=False)
    for step in range(2):
        loss = train_step(model, opt, step)
        log(rank, f"step {step} loss {loss:.4f}")
    # rank 1 packs one metric too many into its stats vector
    stats = torch.zeros(4 if rank != ODD_RANK else 5)
    dist.all_reduce(stats)
    log(rank, "stats reduced")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
