"""DDP over gloo (2 ranks, 3 s process-group timeout): after each epoch rank 0 alone runs a long
evaluation (`if rank == 0:`), while rank 1 goes on into the next epoch's gradient all-reduce and
times out waiting for it."""
import datetime
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for step in range(3):
        loss = model(torch.randn(4, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()  # DDP all-reduces the gradients here
        opt.step()
        print(f"rank {rank}: epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
    if rank == 0:
        print("Evaluating...", flush=True)
        with torch.no_grad():
            for _ in range(60):
                model.module(torch.randn(64, 8))
                time.sleep(0.1)  # a long evaluation on rank 0 only
        print("rank 0: evaluation done", flush=True)
dist.destroy_process_group()
