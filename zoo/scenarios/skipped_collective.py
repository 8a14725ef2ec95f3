"""Rank 3 skips the metric all_reduce (a rank-dependent branch) and goes on to the barrier.

Ranks 0-2 wait in all_reduce, rank 3 waits in barrier: nobody errors until the
process-group timeout (10 s) fires on every rank.
"""
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _train import log, setup, train_step

SKIPPING_RANK = 3


@record
def main():
    rank, world, model, opt = setup()
    for step in range(3):
        loss = train_step(model, opt, step)
        log(rank, f"step {step} loss {loss:.4f}")
    metric = torch.tensor([loss])
    has_eval_data = rank != SKIPPING_RANK  # rank 3's eval shard is empty
    if has_eval_data:
        dist.all_reduce(metric)
        log(rank, f"eval metric {metric.item():.4f}")
    else:
        log(rank, "no eval data on this rank, skipping metric all_reduce")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
