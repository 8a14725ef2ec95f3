"""Healthy run: 4 ranks train a few DDP steps over gloo and exit 0."""
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _train import log, setup, train_step


@record
def main():
    rank, world, model, opt = setup()
    for step in range(5):
        loss = train_step(model, opt, step)
        log(rank, f"step {step} loss {loss:.4f}")
    dist.barrier()
    if rank == 0:
        log(rank, "training finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
