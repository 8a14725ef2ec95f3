"""Run with --nproc-per-node 4 on a 2-GPU host: ranks 2 and 3 ask for GPUs that do not exist."""
import os

import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
x = torch.ones(1024, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"rank {dist.get_rank()}: ok", flush=True)
dist.destroy_process_group()
