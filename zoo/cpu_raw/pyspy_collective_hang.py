"""A hung collective looked at with py-spy, as users paste it: rank 1 never reaches the all_reduce, rank 0
waits in it; after 4 s `py-spy dump --pid <rank 0>` prints rank 0's stack (py-spy installed beside torch:
`pip install py-spy`), then both ranks are killed."""
import os
import shutil
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank: int) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("MASTER_PORT", "29571"))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    print(f"rank {rank}: process group ready", flush=True)
    if rank == 1:
        time.sleep(3600)  # stuck: never reaches the collective
    t = torch.ones(4)
    dist.all_reduce(t)


if __name__ == "__main__":
    py_spy = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(r,)) for r in range(2)]
    for p in procs:
        p.start()
    try:
        time.sleep(6)
        dump = subprocess.run([py_spy, "dump", "--pid", str(procs[0].pid)], capture_output=True, text=True, timeout=60)
        print(dump.stdout, end="", flush=True)
    finally:
        for p in procs:
            p.kill()
