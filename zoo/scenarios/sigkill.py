"""Rank 1 is killed by SIGKILL at step 2 (as the kernel OOM killer would); the others wait in all_reduce."""
import os
import signal

import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from _train import log, setup, train_step

FAILING_RANK = 1


@record
def main():
    rank, world, model, opt = setup()
    for step in range(6):
        if rank == FAILING_RANK and step == 2:
            log(rank, "about to be SIGKILLed")
            os.kill(os.getpid(), signal.SIGKILL)
        loss = train_step(model, opt, step)
        log(rank, f"step {step} loss {loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
