"""On this GPU-less, driver-less machine: what the real CUDA runtime returns from cudaGetDeviceCount."""
import ctypes
lib = ctypes.CDLL("cudart-venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12")
lib.cudaGetErrorString.restype = ctypes.c_char_p
n = ctypes.c_int(-1)
err = lib.cudaGetDeviceCount(ctypes.byref(n))
print(f"cudaGetDeviceCount failed: {lib.cudaGetErrorString(err).decode()} (error {err})")
