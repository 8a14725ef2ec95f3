"""The misaligned wild-pointer kernel launched on PyTorch's stream, so PyTorch reports the error."""
import cupy as cp
import torch

kernel = cp.RawKernel(r'''
extern "C" __global__ void wild_write(int *unused) {
    int *p = (int *)0xdead0000beef;
    *p = 42;
}''', "wild_write")
x = torch.zeros(1024, device="cuda:0")
stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
with stream:
    kernel((1,), (1,), (cp.asarray(x),))
y = x * 2  # an ordinary op after the bad kernel
print(y.sum().item())
