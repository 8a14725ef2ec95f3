"""torch.load of a checkpoint that pickles a non-tensor object, under the weights_only=True default."""
import argparse
import os
import tempfile

import torch

path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
args = argparse.Namespace(lr=0.1, epochs=3)
torch.save({"model": torch.nn.Linear(4, 2).state_dict(), "args": args}, path)
ckpt = torch.load(path)
