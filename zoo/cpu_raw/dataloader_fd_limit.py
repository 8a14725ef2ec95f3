"""DataLoader workers hand each tensor back through a file descriptor (the file_descriptor sharing
strategy, Linux's default), which the main process receives over a Unix socket; a batch of many small
tensors under a low open-files limit in the main process runs it out of descriptors."""
import resource

import torch
from torch.utils.data import DataLoader, Dataset


class ManyTensors(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return [torch.randn(4) for _ in range(64)]  # each tensor of the batch travels as its own fd


batches = iter(DataLoader(ManyTensors(), batch_size=4, num_workers=2, timeout=60))
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))  # a low `ulimit -n` in the receiving process only
for step, batch in enumerate(batches):
    print(f"step {step} tensors {len(batch)}", flush=True)
