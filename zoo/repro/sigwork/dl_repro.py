"""Real DataLoader worker failures on CPU. usage: python dl_repro.py kill|bus|exit|shm"""
import os, signal, sys, torch
from torch.utils.data import DataLoader, Dataset
mode = sys.argv[1]
class DS(Dataset):
    def __len__(self): return 64
    def __getitem__(self, i):
        if mode == "kill" and i == 5: os.kill(os.getpid(), signal.SIGKILL)
        if mode == "bus" and i == 5: os.kill(os.getpid(), signal.SIGBUS)
        if mode == "exit" and i == 5: os._exit(3)
        if mode == "shm": return torch.ones(64, 1024, 1024)  # 256 MiB per sample through /dev/shm
        return torch.ones(4)
for b in DataLoader(DS(), batch_size=2, num_workers=2):
    pass
print("done")
