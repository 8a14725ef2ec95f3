"""Rank 2 raises IndexError at step 3; ranks 0,1,3 are left waiting in the gradient all_reduce."""
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _train import log, setup, train_step

FAILING_RANK = 2


@record
def main():
    rank, world, model, opt = setup()
    batches = list(range(3))  # rank 2 believes its shard has only 3 batches
    for step in range(6):
        if rank == FAILING_RANK:
            batch = batches[step]  # IndexError at step 3
        loss = train_step(model, opt, step)
        log(rank, f"step {step} loss {loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
