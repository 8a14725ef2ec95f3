"""torch.cuda.set_device(5) on a 2-GPU host."""
import torch

print(f"device_count={torch.cuda.device_count()}", flush=True)
torch.cuda.set_device(5)
torch.zeros(1, device="cuda")
