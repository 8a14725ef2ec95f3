"""A DataLoader worker exits abruptly (os._exit from a native library, say) while loading a batch."""
import os

import torch
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 20:
            os._exit(1)
        return torch.randn(16)


for step, batch in enumerate(DataLoader(Samples(), batch_size=8, num_workers=2)):
    print(f"step {step} batch {tuple(batch.shape)}", flush=True)
