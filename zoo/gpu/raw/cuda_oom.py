"""CUDA OOM with a realistic allocator state: 100 GiB held, then 60 GiB more asked for on cuda:0."""
import torch

held = torch.empty(100 * 1024**3, dtype=torch.uint8, device="cuda:0")
print(f"holding {held.numel() / 1024**3:.0f} GiB", flush=True)
more = torch.empty(60 * 1024**3, dtype=torch.uint8, device="cuda:0")
