"""A healthy DDP run over gloo (2 ranks, 30 s timeout): rank 0 tokenises under a tqdm bar while rank 1
waits in the barrier, both train, every rank evaluates its share, rank 0 saves, all finish."""
import datetime
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from tqdm import tqdm

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
rank = dist.get_rank()
if rank == 0:
    for _ in tqdm(range(10), desc="Running tokenizer on dataset", file=sys.stderr):
        time.sleep(0.05)
dist.barrier()
model = DDP(torch.nn.Linear(8, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rank {rank}: step {step} loss {loss.item():.4f}", flush=True)
print("Evaluating...", flush=True)
with torch.no_grad():
    metric = model.module(torch.randn(16, 8)).pow(2).mean()
dist.all_reduce(metric)  # every rank evaluated its share
if rank == 0:
    path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
    print(f"Saving checkpoint to {path}", flush=True)
    torch.save(model.module.state_dict(), path)
dist.barrier()
print(f"rank {rank}: training finished", flush=True)
dist.destroy_process_group()
