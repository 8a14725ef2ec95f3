"""A DataLoader worker gets SIGBUS (as when /dev/shm is full) while loading a batch."""
import os
import signal

import torch
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 20:
            os.kill(os.getpid(), signal.SIGBUS)
        return torch.randn(16)


for step, batch in enumerate(DataLoader(Samples(), batch_size=8, num_workers=2)):
    print(f"step {step} batch {tuple(batch.shape)}", flush=True)
