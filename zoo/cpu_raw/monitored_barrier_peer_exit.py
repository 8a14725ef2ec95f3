"""Two gloo ranks; rank 0 exits before the barrier and rank 1's monitored_barrier names it as the faulty rank.

Rank 1 is this process; it starts rank 0 as a plain child (no launcher summary), so what is printed is
only what a surviving rank says about its peer: gloo's ``monitoredBarrier`` error naming rank 0.
"""
import os
import socket
import subprocess
import sys
from datetime import timedelta

import torch.distributed as dist


def run(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=timedelta(seconds=20))
    if rank == 0:
        os._exit(3)  # rank 0 dies before the barrier, printing nothing
    dist.monitored_barrier(timeout=timedelta(seconds=20))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run(int(sys.argv[1]), int(sys.argv[2]))
    else:
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        child = subprocess.Popen([sys.executable, __file__, "0", str(port)])
        try:
            run(1, port)
        finally:
            print(f"rank 0 exit status: {child.wait()}", flush=True)
