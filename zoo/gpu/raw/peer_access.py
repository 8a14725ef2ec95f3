"""torch.cuda.can_device_access_peer for every ordered GPU pair, plus versions."""
import torch

print(f"torch {torch.__version__} cuda {torch.version.cuda} nccl {'.'.join(map(str, torch.cuda.nccl.version()))}")
n = torch.cuda.device_count()
print(f"device_count={n}")
for i in range(n):
    print(f"cuda:{i} {torch.cuda.get_device_name(i)}")
for i in range(n):
    for j in range(n):
        if i != j:
            print(f"can_device_access_peer({i}, {j}) = {torch.cuda.can_device_access_peer(i, j)}")
