"""Rank 2's DataLoader worker raises ValueError on a corrupt sample; the DataLoader re-raises it in rank 2."""
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
from torch.utils.data import DataLoader, Dataset

from _train import log, setup

FAILING_RANK = 2
BAD_INDEX = 20


class Samples(Dataset):
    def __init__(self, rank):
        self.rank = rank

    def __len__(self):
        return 48

    def __getitem__(self, i):
        if self.rank == FAILING_RANK and i == BAD_INDEX:
            raise ValueError(f"corrupt sample at index {i}: expected 16 features, got 0")
        return torch.randn(16)


@record
def main():
    rank, world, model, opt = setup()
    loader = DataLoader(Samples(rank), batch_size=8, num_workers=1)
    for step, x in enumerate(loader):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log(rank, f"step {step} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
