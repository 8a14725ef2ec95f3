"""Two gloo ranks exchange a large tensor; rank 1 is SIGKILLed mid-way, rank 0 sees its peer vanish."""
import os
import signal
import sys
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=timedelta(seconds=20))
    x = torch.ones(64 * 1024 * 1024)  # 256 MiB: the kill lands while bytes are in flight
    if rank == 1:
        threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
    for step in range(20):
        dist.all_reduce(x)
        print(f"rank {rank}: step {step} done", flush=True)


if __name__ == "__main__":
    import socket
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    mp.start_processes(worker, args=(port,), nprocs=2, start_method="spawn")
