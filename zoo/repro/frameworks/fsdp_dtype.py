import os, sys, torch, torch.nn as nn, torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
dist.init_process_group("gloo")
mode = sys.argv[1]
m = nn.Sequential(nn.Linear(16, 16), nn.Linear(16, 4))
if mode == "dtype":
    m[1].to(torch.bfloat16)
elif mode == "grad":
    m[0].weight.requires_grad_(False)
f = FSDP(m, device_id=torch.device("cpu"), use_orig_params=(mode == "orig"))
if mode in ("orig",):
    print("rank", dist.get_rank(), "wrapped ok")
dist.destroy_process_group()
