"""Minimal 2-rank NCCL all_reduce, used under different NCCL_* settings to show what NCCL chose or why it failed."""
import os

import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"rank {dist.get_rank()}: all_reduce ok, x[0]={x[0].item():.0f}", flush=True)
dist.destroy_process_group()
