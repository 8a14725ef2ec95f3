"""init_process_group(env://) as rank 1 of 2 while the master at MASTER_ADDR:MASTER_PORT never comes up."""
import os
from datetime import timedelta

import torch.distributed as dist

os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29531", RANK="1", WORLD_SIZE="2")
dist.init_process_group("gloo", timeout=timedelta(seconds=8))
