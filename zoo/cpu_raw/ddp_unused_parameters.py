"""DDP (gloo, 2 ranks) where one layer is never used in forward; find_unused_parameters is off."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = torch.nn.Linear(8, 4)
        self.aux_head = torch.nn.Linear(8, 4)  # only used when aux loss is on

    def forward(self, x):
        return self.used(x)


dist.init_process_group("gloo")
model = DDP(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rank {dist.get_rank()}: step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
