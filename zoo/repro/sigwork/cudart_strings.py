"""Ask the real CUDA runtime (libcudart.so.12 from the nvidia-cuda-runtime-cu12 wheel) for its error strings.
cudaGetErrorString/cudaGetErrorName need no GPU and no driver."""
import ctypes, glob, sys
lib = ctypes.CDLL(glob.glob("cudart-venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12")[0])
lib.cudaGetErrorString.restype = ctypes.c_char_p
lib.cudaGetErrorName.restype = ctypes.c_char_p
v = ctypes.c_int(); lib.cudaRuntimeGetVersion(ctypes.byref(v)); print("cudart version", v.value)
for code in map(int, sys.argv[1:]):
    print(code, lib.cudaGetErrorName(code).decode(), "|", lib.cudaGetErrorString(code).decode())
n = ctypes.c_int(-1); rc = lib.cudaGetDeviceCount(ctypes.byref(n)); print("cudaGetDeviceCount rc", rc, lib.cudaGetErrorString(rc).decode())
