"""Anomaly detection catches a NaN produced in backward (sqrt of a negative activation)."""
import torch

torch.manual_seed(0)
torch.autograd.set_detect_anomaly(True)
w = torch.nn.Parameter(torch.tensor([0.5, -2.0, 1.0]))
x = torch.tensor([1.0, 1.0, 1.0])
h = (w * x).sqrt()  # sqrt of -2.0 -> nan
loss = h.sum()
print(f"loss {loss.item()}", flush=True)
loss.backward()
