"""Two gloo ranks all_reduce a 256 MiB tensor; rank 1 is SIGKILLed mid-transfer and rank 0 sees its peer vanish.

Rank 0 is this process; it starts rank 1 as a plain child (no launcher that
would tear rank 0 down first), so rank 0's own gloo error is what gets printed.
"""
import os
import signal
import socket
import subprocess
import sys
import threading
from datetime import timedelta

import torch
import torch.distributed as dist


def run(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=timedelta(seconds=20))
    x = torch.ones(64 * 1024 * 1024)
    if rank == 1:
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
    for step in range(50):
        dist.all_reduce(x)
        print(f"rank {rank}: step {step} done", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run(int(sys.argv[1]), int(sys.argv[2]))
    else:
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        child = subprocess.Popen([sys.executable, __file__, "1", str(port)])
        try:
            run(0, port)
        finally:
            print(f"rank 1 exit status: {child.wait()}", flush=True)
