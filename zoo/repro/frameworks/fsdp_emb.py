import torch, torch.nn as nn, torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
dist.init_process_group("gloo")
m = nn.Sequential(nn.Embedding(32, 8), nn.Linear(8, 4))
f = FSDP(m, device_id=torch.device("cpu"))
ids = torch.tensor([[1, 2, 3]])
with torch.no_grad():
    f(ids)                       # normal forward through FSDP works
    print("rank", dist.get_rank(), "shape outside forward:", tuple(f.module[0].weight.shape))
    f.module[0](ids)             # bypass FSDP: the parameter is sharded/flat here
dist.destroy_process_group()
