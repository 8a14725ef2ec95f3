"""Shared bits for the zoo scenarios: a tiny DDP model trained over gloo on CPU.

Every scenario is a real torchrun job; this module only keeps the boilerplate
(process group, model, one training step) out of each scenario file so the
file shows just the failure it injects.
"""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

# Short so that hang scenarios end inside the CI budget; real jobs use 10-30 min.
PG_TIMEOUT = timedelta(seconds=int(os.environ.get("ZOO_PG_TIMEOUT_S", "10")))


def setup(ddp=True):
    dist.init_process_group("gloo", timeout=PG_TIMEOUT)
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4)
    if ddp:
        model = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return rank, dist.get_world_size(), model, opt


def train_step(model, opt, step):
    x = torch.randn(8, 16)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # DDP all-reduces the gradients here
    if not isinstance(model, DDP):
        for p in model.parameters():
            dist.all_reduce(p.grad)
    opt.step()
    return loss.item()


def log(rank, msg):
    print(f"rank {rank}: {msg}", flush=True)
