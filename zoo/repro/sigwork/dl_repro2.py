"""More real DataLoader worker failures on CPU. usage: python dl_repro2.py segv|timeout"""
import os, signal, sys, time, torch
from torch.utils.data import DataLoader, Dataset
mode = sys.argv[1]
class DS(Dataset):
    def __len__(self): return 64
    def __getitem__(self, i):
        if mode == "segv" and i == 5: os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "timeout" and i == 5: time.sleep(30)  # a stuck read (NFS, object store)
        return torch.ones(4)
kw = {"timeout": 5} if mode == "timeout" else {}
for b in DataLoader(DS(), batch_size=2, num_workers=2, **kw):
    pass
