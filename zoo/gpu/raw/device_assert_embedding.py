"""Token id >= vocab size into nn.Embedding on cuda (the classic tokenizer/model mismatch)."""
import torch

emb = torch.nn.Embedding(32000, 256).cuda()
tokens = torch.tensor([[1, 5, 32001, 7]], device="cuda")
out = emb(tokens)
print(out.sum().item())
