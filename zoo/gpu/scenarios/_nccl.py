"""Shared setup for the NCCL zoo scenarios (2 ranks, one H200 each)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

# Short so the NCCL watchdog fires inside the device budget; real jobs use 10-30 min.
PG_TIMEOUT = timedelta(seconds=int(os.environ.get("ZOO_PG_TIMEOUT_S", "20")))


def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", timeout=PG_TIMEOUT, device_id=dev)
    rank = dist.get_rank()
    # one collective so the NCCL communicator exists before the failure is injected
    warm = torch.ones(1024, device=dev)
    dist.all_reduce(warm)
    torch.cuda.synchronize()
    log(rank, f"warm-up all_reduce ok ({warm[0].item():.0f})")
    return rank, dev


def log(rank, msg):
    print(f"rank {rank}: {msg}", flush=True)
