"""Rank 2 hangs in compute (sleeps forever) at step 2; ranks 0,1,3 wait in all_reduce until the 10 s timeout."""
import time

import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _train import log, setup, train_step

HANGING_RANK = 2


@record
def main():
    rank, world, model, opt = setup()
    for step in range(6):
        if rank == HANGING_RANK and step == 2:
            log(rank, "stuck in data preprocessing")
            while True:  # e.g. a deadlocked data pipeline or an infinite loop
                time.sleep(1)
        loss = train_step(model, opt, step)
        log(rank, f"step {step} loss {loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
