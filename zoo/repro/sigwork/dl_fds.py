"""Real fd exhaustion with the default file_descriptor sharing strategy: each sample is many small tensors."""
import torch
from torch.utils.data import DataLoader, Dataset
class DS(Dataset):
    def __len__(self): return 4096
    def __getitem__(self, i): return [torch.ones(2) for _ in range(64)]
batches = []
for b in DataLoader(DS(), batch_size=1, num_workers=2, collate_fn=lambda x: x):
    batches.append(b)  # keeping the batches keeps their shared-memory fds open
