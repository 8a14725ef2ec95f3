"""Compose PyTorch's C10_CUDA_CHECK message for a cudaError_t exactly as c10/cuda/CUDAException.cpp
(commit 0e4c6cd6) and c10/cuda/CUDAMiscFunctions.cpp (commit 0ac83aeb) build it, with the error name and
string taken from the real CUDA runtime (libcudart.so.12, nvidia-cuda-runtime-cu12 12.9.79), and the
device-assertion part for a build without TORCH_USE_CUDA_DSA. usage: python c10_cuda_msg.py CODE"""
import ctypes, sys
lib = ctypes.CDLL("cudart-venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12")
lib.cudaGetErrorString.restype = ctypes.c_char_p
lib.cudaGetErrorName.restype = ctypes.c_char_p
code = int(sys.argv[1])
name, text = lib.cudaGetErrorName(code).decode(), lib.cudaGetErrorString(code).decode()
msg = "CUDA error: " + text
# get_cuda_error_help
if name == "cudaErrorInvalidDevice":
    msg += "\nGPU device may be out of range, do you have enough GPUs?"
else:
    msg += "\nSearch for `" + name + "' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information."
# get_cuda_async_error_suffix (CUDA_LAUNCH_BLOCKING unset)
if name in ("cudaErrorLaunchFailure", "cudaErrorIllegalAddress", "cudaErrorAssert", "cudaErrorIllegalInstruction", "cudaErrorMisalignedAddress"):
    msg += "\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1"
else:
    msg += "\nFor more detailed error information, run with CUDA_LOG_FILE=stderr"
msg += "\n"
# c10_retrieve_device_side_assertion_info() without TORCH_USE_CUDA_DSA
msg += "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
# c10::AcceleratorError surfaces in Python as torch.AcceleratorError
sys.stdout.write("torch.AcceleratorError: " + msg)
