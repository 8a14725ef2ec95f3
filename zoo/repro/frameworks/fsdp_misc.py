import os, sys, torch, torch.nn as nn, torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType
dist.init_process_group("gloo")
mode = sys.argv[1]
m = nn.Sequential(nn.Linear(16, 16), nn.Linear(16, 4))
f = FSDP(m, device_id=torch.device("cpu"))
x = torch.randn(2, 16)
if mode == "inner":
    print(f.module[0].weight.shape)
    f.module[0](x)
elif mode == "load":
    full = nn.Sequential(nn.Linear(16, 16), nn.Linear(16, 4)).state_dict()
    with FSDP.state_dict_type(f, StateDictType.SHARDED_STATE_DICT):
        f.load_state_dict(full)
dist.destroy_process_group()
