"""fp16 overflow on CPU: activations past float16's max (65504) become inf, and the loss NaN.

A CUDA-style AMP set-up (torch.cuda.amp.GradScaler, which warns and disables itself without CUDA)
with a model cast to half; the inputs' scale makes the first layer's outputs overflow float16.
Used for the samples of signatures/numerics/numerics-fp16-overflow.toml.
"""
import torch

torch.manual_seed(0)
scaler = torch.cuda.amp.GradScaler()
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).half()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
for step in range(3):
    x = (torch.randn(16, 256) * 400).half()
    y = torch.randn(16, 1).half()
    out = model(x)
    loss = ((out - y) ** 2).mean() - ((out - y) ** 2).mean().detach()  # inf - inf once out overflows
    print(f"Train step {step}\tLoss: {loss.item():.6f}")
    opt.zero_grad()
    loss.backward()
    opt.step()
