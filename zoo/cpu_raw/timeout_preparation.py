"""DDP over gloo (2 ranks, 3 s process-group timeout): rank 0 prepares the dataset alone (a
tokenising pass under a tqdm bar, as datasets' map shows it) for about 6 s while rank 1 already waits
in the barrier HF's main_process_first uses: rank 1's barrier times out during the preparation."""
import datetime
import sys
import time

import torch.distributed as dist
from tqdm import tqdm

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
rank = dist.get_rank()
if rank == 0:
    for _ in tqdm(range(60), desc="Running tokenizer on dataset", file=sys.stderr, mininterval=0.5):
        time.sleep(0.1)  # the main process tokenises; the replicas wait
dist.barrier()
print(f"rank {rank}: dataset ready, training starts", flush=True)
dist.destroy_process_group()
