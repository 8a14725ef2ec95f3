"""A DataLoader with workers where /dev/shm has no room for its queues' semaphores:
   unshare -m sh -c 'mount -t tmpfs -o size=4k tmpfs /dev/shm && python zoo/repro/numerics/shm_dataloader.py'"""
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.arange(64.0)), batch_size=8, num_workers=4)
for (batch,) in loader:
    print(batch.sum().item())
