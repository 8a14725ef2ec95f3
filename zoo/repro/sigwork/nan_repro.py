import torch
torch.autograd.set_detect_anomaly(True)
x = torch.zeros(3, requires_grad=True)
loss = (x / x).sum()  # 0/0: DivBackward0 produces nan gradients
loss.backward()
