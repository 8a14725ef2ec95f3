"""Rank 1 calls sys.exit(3) at step 2 (no traceback); the others wait in all_reduce."""
import sys

import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _train import log, setup, train_step

FAILING_RANK = 1


@record
def main():
    rank, world, model, opt = setup()
    for step in range(6):
        if rank == FAILING_RANK and step == 2:
            log(rank, "checkpoint directory not writable, giving up")
            sys.exit(3)
        loss = train_step(model, opt, step)
        log(rank, f"step {step} loss {loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
