"""DDP over gloo (2 ranks, 3 s process-group timeout) on an IterableDataset whose shards are uneven:
it reports 2 batches per rank, but rank 0's shard yields 3. On the third step rank 0 enters the
gradient all-reduce while rank 1 has finished the epoch and waits in its end-of-epoch barrier."""
import datetime

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset


class Shard(IterableDataset):
    def __init__(self, rank: int):
        self.n = 3 if rank == 0 else 2  # shards split by file, not by sample count

    def __len__(self):
        return 2

    def __iter__(self):
        for _ in range(self.n):
            yield torch.randn(8)


dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
rank = dist.get_rank()
model = DDP(torch.nn.Linear(8, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(Shard(rank), batch_size=None)
print(f"rank {rank}: {len(loader)} batches per epoch", flush=True)  # what a progress bar asks the loader
for step, x in enumerate(loader):
    loss = model(x.unsqueeze(0)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rank {rank}: step {step} loss {loss.item():.4f}", flush=True)
dist.barrier()  # the end of the epoch
dist.destroy_process_group()
