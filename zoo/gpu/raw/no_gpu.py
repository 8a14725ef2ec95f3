"""Run with CUDA_VISIBLE_DEVICES="": CUDA is not usable."""
import torch

print(f"is_available={torch.cuda.is_available()} device_count={torch.cuda.device_count()}", flush=True)
torch.zeros(1, device="cuda")
