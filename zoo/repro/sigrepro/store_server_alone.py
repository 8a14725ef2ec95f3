import torch.distributed as dist
from datetime import timedelta
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29698", rank=0, world_size=2, timeout=timedelta(seconds=8))
