"""A CuPy RawKernel writes an int through an odd (misaligned) wild pointer: cudaErrorMisalignedAddress."""
import cupy as cp

kernel = cp.RawKernel(r'''
extern "C" __global__ void wild_write(int *unused) {
    int *p = (int *)0xdead0000beef;
    *p = 42;
}''', "wild_write")
buf = cp.zeros(1, dtype=cp.int32)
kernel((1,), (1,), (buf,))
cp.cuda.Device(0).synchronize()
