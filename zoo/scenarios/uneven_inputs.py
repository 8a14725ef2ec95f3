"""Rank 1's data shard holds 2 batches, the others' 6: rank 1 finishes its loop and exits cleanly
while ranks 0, 2, 3 wait in the DDP gradient all_reduce of step 2 for a peer that is gone."""
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _train import log, setup, train_step

SHORT_RANK = 1


@record
def main():
    rank, world, model, opt = setup()
    batches = 2 if rank == SHORT_RANK else 6  # an uneven split of the dataset (no drop_last / join)
    for step in range(batches):
        loss = train_step(model, opt, step)
        log(rank, f"step {step} loss {loss:.4f}")
    log(rank, f"training finished after {batches} steps")


if __name__ == "__main__":
    main()
