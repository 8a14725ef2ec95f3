"""Index out of bounds on cuda: the kernel's assert fires, torch reports device-side assert."""
import torch

x = torch.arange(10, device="cuda:0", dtype=torch.float32)
idx = torch.tensor([3, 20], device="cuda:0")
y = x[idx]
print(y.tolist())
