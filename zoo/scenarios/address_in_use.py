"""Ordinary training script; the failure is in the launch: --master-port is already taken.

zoo/record.py binds the port before it starts torchrun (as a still-running earlier
job would), so torchrun's TCPStore server cannot listen and no worker ever starts.
"""
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _train import log, setup, train_step


@record
def main():
    rank, world, model, opt = setup()
    for step in range(3):
        loss = train_step(model, opt, step)
        log(rank, f"step {step} loss {loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
