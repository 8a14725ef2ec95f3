"""gloo (2 ranks): rank 1 is busy for 6 s; rank 0 waits in monitored_barrier with a 2 s timeout,
which names the rank that did not arrive."""
import datetime
import time

import torch.distributed as dist

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
rank = dist.get_rank()
if rank == 1:
    time.sleep(6)
dist.monitored_barrier(timeout=datetime.timedelta(seconds=2))
dist.destroy_process_group()
