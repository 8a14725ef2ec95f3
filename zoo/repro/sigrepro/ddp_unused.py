import torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
class M(nn.Module):
    def __init__(s):
        super().__init__(); s.a = nn.Linear(4, 4); s.b = nn.Linear(4, 4)
    def forward(s, x):
        return s.a(x)
m = DDP(M())
for i in range(2):
    m(torch.randn(2, 4)).sum().backward()
dist.destroy_process_group()
