"""A rank whose MASTER_ADDR names a host that does not resolve: c10d's client socket retries the
name lookup until the process-group timeout, then init_process_group raises DistNetworkError."""

import datetime
import os

import torch.distributed as dist

os.environ.update(MASTER_ADDR="no-such-host.invalid", MASTER_PORT="29511", RANK="1", WORLD_SIZE="2")
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=4))
