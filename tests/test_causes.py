"""Symptoms, the run model and causes: lines become typed observations, a run gets phases and a stop,
and causes fire on that evidence, not on one sentence.

Every line below is a real recording (corpus/) or built from the named upstream release's format
string; each symptom is recognised in the words of at least two sources."""

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from cli_runner import run_cli
from mltriage.engine import diagnose_path, diagnose_text
from mltriage.engine.reader import Source
from mltriage.engine.scanner import Scanner
from mltriage.library import load_library
from mltriage.run_model import Interconnect, Phase, StopKind
from mltriage.symptoms import Symptom, Transport, WORDINGS
from mltriage.symptoms.vocabulary import NcclResult
import procs
from observing import assert_two_sources, assert_typed_facts, observe as _observe

ROOT = Path(__file__).resolve().parent.parent
P2P_DISABLE = ROOT / "corpus" / "gpu" / "nccl_p2p_disable.log"  # NCCL_DEBUG=INFO, 2 ranks over SHM, exit 0
H200_HEALTHY = ROOT / "corpus" / "healthy" / "nccl-info-h200x2" / "console.log"

# (symptom, line, its source, facts it must carry with their types)
WORDS = [
    (Symptom.COMM_INIT_STARTED, "node01:2123:2123 [0] NCCL INFO NCCL version 2.28.9+cuda13.0",
     "recorded: corpus/gpu/nccl_p2p_disable.log", {"nccl_version": "2.28.9"}),
    (Symptom.COMM_INIT_STARTED, "node01:2123:2123 [0] NCCL INFO ncclCommInitRank comm 0x55d0c5a0 rank 0 nranks 8 cudaDev 0 busId 1b000 - Init START",
     "NVIDIA/nccl 2.18 src/init.cc", {"nranks": 8}),
    (Symptom.CHANNELS_SET_UP, "vm:2123:2123 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct",
     "recorded: corpus/gpu/nccl_p2p_disable.log", {"transport": Transport.SHM}),
    (Symptom.CHANNELS_SET_UP, "gpu1:3031:3078 [0] NCCL INFO Channel 00/0 : 0[1b000] -> 1[1c000] via P2P/IPC/read",
     "NVIDIA/nccl 2.12 src/transport/p2p.cc \"Channel %02d/%01d : %d[%lx] -> %d[%lx] via P2P/%s%s\"", {"transport": Transport.P2P}),
    (Symptom.CHANNELS_SET_UP, "gpu1:3031:3078 [0] NCCL INFO Ring 00 : 0 -> 1 via P2P/IPC",
     "NVIDIA/nccl 2.4 src/transport/p2p.cc \"Ring %02d : %d -> %d via P2P/IPC\"", {"transport": Transport.P2P}),
    (Symptom.PEER_ACCESS_UNSUPPORTED, "node:1:1 [0] NCCL WARN Cuda failure 'peer access is not supported between these two devices'",
     "NVIDIA/nccl src/include/checks.h CUDACHECK with the CUDA runtime's string (libcudart 13.0)", {}),
    (Symptom.PEER_ACCESS_UNSUPPORTED, "E tensorflow/core/common_runtime/gpu/gpu_device.cc:1356] Unable to enable peer access: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "CUDA driver API cuda.h enum name, as TensorFlow prints it", {}),
    (Symptom.GPUS_DESCRIBED, "ggml_cuda_init: found 2 CUDA devices:",
     "ggml-org/llama.cpp b4000 ggml/src/ggml-cuda/ggml-cuda.cu \"%s: found %d \" GGML_CUDA_NAME \" devices:\"", {"count": 2}),
    (Symptom.GPUS_DESCRIBED, "ggml_init_cublas: found 4 ROCm devices:",
     "ggml-org/llama.cpp b1500 ggml-cuda.cu ggml_init_cublas \"%s: found %d \" GGML_CUDA_NAME \" devices:\" (HIP build)", {"count": 4}),
    (Symptom.GPUS_DESCRIBED, "# 8 x RTX A6000 in one PCIe server, driver 550", "a user's description of the machine", {"count": 8, "model": "RTX A6000"}),
    (Symptom.GPUS_DESCRIBED, "ggml_cuda_set_main_device: using device 0 (NVIDIA GeForce RTX 3090) as main device",
     "ggml-org/llama.cpp ggml-cuda.cu (2023) \"%s: using device %d (%s) as main device\" printed only if g_device_count > 1",
     {"count": 2, "model": "NVIDIA GeForce RTX 3090"}),
    (Symptom.FABRIC_MANAGER_DOWN, "Jul 01 14:43:57 node7 nv-fabricmanager[4411]: fabric manager NVIDIA GPU driver interface version 550.90.07 don't match with driver version 550.54.15. Please update with matching NVIDIA driver package.",
     "nv-fabricmanager's version check (releases 460-590) under journalctl's short format", {"fm_version": "550.90.07", "driver_version": "550.54.15"}),
    (Symptom.FABRIC_MANAGER_DOWN, "Mar 03 09:12:41 node7 systemd[1]: nvidia-fabricmanager.service: Main process exited, code=exited, status=1/FAILURE",
     "systemd v249 src/core/service.c \"%s process exited, code=%s, status=%i/%s\" for NVIDIA's unit", {}),
    (Symptom.DEVICE_LISTED, "|   1  NVIDIA H200                    On  |   00000000:2A:00.0 Off |                    0 |",
     "nvidia-smi 570 device table row (../shared/gpu)", {"device": 1}),
    (Symptom.NVLINK_ABSENT, "# 2x RTX 4090, no NVLink", "a user's description of the machine (vLLM thread form)", {}),
    (Symptom.NVLINK_ABSENT, "Setup: four L40S PCIe cards without NVLink", "a user's description of the machine (TensorRT-LLM thread form)", {}),
    (Symptom.CUDA_IPC_FAILED, "[TensorRT-LLM][ERROR] CUDA runtime error in cudaIpcOpenMemHandle( reinterpret_cast<void**>(&foreignBuffer), handles[nodeId], cudaIpcMemLazyEnablePeerAccess): invalid device ordinal (/src/cpp/tensorrt_llm/runtime/ipcUtils.cpp:112)",
     "NVIDIA/TensorRT-LLM ipcUtils.cpp TLLM_CUDA_CHECK + cudaUtils.h check()", {"call": "cudaIpcOpenMemHandle"}),
    (Symptom.CUDA_IPC_FAILED, '  File "/usr/lib/python3/dist-packages/vllm/distributed/device_communicators/cuda_wrapper.py", line 171, in cudaIpcOpenMemHandle',
     "vllm-project/vllm cuda_wrapper.py CudaRTLibrary.cudaIpcOpenMemHandle frame", {"call": "cudaIpcOpenMemHandle"}),
    (Symptom.GARBAGE_OUTPUT, '{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"!!!!!!!!!!!!!!!!!!!!!!!!","logprobs":null}]}',
     "vLLM /v1/completions response with token 0 of a Llama-3 tokenizer repeated", {}),
    (Symptom.GARBAGE_OUTPUT, "# with --tensor-parallel-size 2 the model outputs gibberish", "a user's note on the answers", {}),
    (Symptom.NAN_IN_OUTPUT, "after a few iterations I get `nan` in losses and outputs", "a user's description (TensorFlow thread form)", {"loss_value": "nan"}),
    (Symptom.NVCC_ARCH_UNSUPPORTED, "nvcc fatal   : Unsupported gpu architecture 'compute_86'", "NVIDIA nvcc 11.0", {"arch": "compute_86"}),
    (Symptom.NVCC_ARCH_UNSUPPORTED, "ValueError: Unknown CUDA arch (8.9) or GPU not supported", "pytorch/pytorch cpp_extension.py 1.13",
     {"arch": "8.9"}),
    (Symptom.CUDA_HEADER_MISSING, "csrc/custom_cuda_layers.h:12:10: fatal error: curand_kernel.h: No such file or directory", "GCC 11 libcpp",
     {"header": "curand_kernel.h"}),
    (Symptom.CUDA_HEADER_MISSING, "csrc/flash_api.cpp:6:10: fatal error: 'cuda_runtime.h' file not found", "clang 15", {"header": "cuda_runtime.h"}),
    (Symptom.BUILD_FAILED, "ninja: build stopped: subcommand failed.", "ninja 1.11 src/build.cc", {}),
    (Symptom.BUILD_FAILED, "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1", "setuptools 65 spawn", {"command": "/usr/local/cuda/bin/nvcc"}),
    (Symptom.KILLED_BY_SIGNAL, "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)", "JetBrains IDE run console", {}),
    (Symptom.KILLED_BY_SIGNAL, "subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGKILL: 9>.",
     "CPython 3.11 subprocess.CalledProcessError.__str__", {}),
    (Symptom.HOST_UNRESOLVED, "[W1202 02:52:17.228834828 socket.cpp:764] [c10d] The IPv6 network addresses of (no-such-host.invalid, 29511) cannot be retrieved (gai error: -2 - Name or service not known).",
     "recorded: corpus/cpu/tcpstore_host_unresolvable.log", {"host": "no-such-host.invalid", "port": 29511, "gai_error": -2}),
    (Symptom.HOST_UNRESOLVED, "socket.gaierror: [Errno -3] Temporary failure in name resolution", "CPython 3.11 socketmodule.c set_gaierror",
     {"gai_error": -3}),
    (Symptom.FP16_RANGE_EXCEEDED, "encoder.block.2.layer.1.DenseReluDense.wo has infs",
     "huggingface/transformers v4.40.0 debug_utils.py detect_overflow", {"where": "encoder.block.2.layer.1.DenseReluDense.wo"}),
    (Symptom.FP16_RANGE_EXCEEDED, "Detected inf/nan during batch_number=3",
     "huggingface/transformers v4.40.0 debug_utils.py DebugUnderflowOverflow.analyse_model", {"batch": "3"}),
    # the lowest layer's words, carried by programs with no wording of their own (recorded here)
    (Symptom.HOST_UNRESOLVED, "ssh: Could not resolve hostname nonexistent-host.invalid: Name or service not known",
     "recorded here: ssh -o BatchMode=yes nonexistent-host.invalid (OpenSSH 9.2, glibc gai_strerror)", {"host": "nonexistent-host.invalid"}),
    (Symptom.HOST_UNRESOLVED, "curl: (6) Could not resolve host: nonexistent-host.invalid",
     "recorded here: curl -sS http://nonexistent-host.invalid/ (curl 7.88)", {"host": "nonexistent-host.invalid"}),
    (Symptom.PEER_CONNECT_FAILED, "ConnectionRefusedError: [Errno 111] Connection refused",
     "recorded here: CPython 3.11.7 socket.create_connection(('127.0.0.1', 9))", {"reason": "Connection refused", "layer": "os"}),
    (Symptom.PEER_CONNECT_FAILED, "OSError: [Errno 113] No route to host",
     "recorded here: CPython 3.11.7 socket.create_connection(('2001:db8::1', 80))", {"reason": "No route to host"}),
    (Symptom.PEER_CONNECT_FAILED, "127.0.0.1[0: 127.0.0.1]: errno=Connection refused", "recorded here: git 2.39.5 clone git://127.0.0.1:9/x",
     {"reason": "Connection refused"}),
    (Symptom.NCCL_RESULT_UNKNOWN, "Failed, NCCL error /workspace/cpp/tensorrt_llm/plugins/ncclPlugin/allreducePlugin.cpp:183 'unknown result code'",
     "NVIDIA/nccl-tests src/common.h NCCLCHECK format with NVIDIA/nccl src/init.cc ncclGetErrorString default", {"line": 183}),
    (Symptom.NCCL_RESULT_UNKNOWN, "RuntimeError: NCCL error: unknown result code",
     "vllm-project/vllm pynccl_wrapper.py NCCL_CHECK with NVIDIA/nccl src/init.cc ncclGetErrorString default", {}),
    (Symptom.SOCKET_ADDRESS_INVALID, "node3:1958:2011 [3] misc/socket.cc:814 NCCL WARN ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)",
     "NVIDIA/nccl v2.27.3-1 src/misc/socket.cc:814", {"family": 59936}),
    (Symptom.SOCKET_ADDRESS_INVALID, "node3:1958:2011 [3] include/socket.h:373 NCCL WARN Net : connecting to address 10.0.0.2<0> with family 0 is neither AF_INET(2) nor AF_INET6(10)",
     "NVIDIA/nccl v2.10.3-1 src/include/socket.h:373", {"family": 0}),
    (Symptom.SHM_CUDA_FAILURE, "node01:774:854 [0] transport/shm.cc:590 NCCL WARN Cuda failure 'peer access is not supported between these two devices'",
     "NVIDIA/nccl v2.27.3-1 src/transport/shm.cc cuMem path", {}),
    (Symptom.SHM_CUDA_FAILURE, "node01:774:854 [0] transport/shm.cc:347 NCCL WARN Cuda failure 'invalid resource handle'",
     "NVIDIA/nccl v2.23.4-1 src/transport/shm.cc cuMem import", {}),
    (Symptom.SHM_CUDA_FAILURE, "node07:2281:2390 [3] misc/shmutils.cc:128 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl- (size 0), error: No such file or directory (2)",
     "NVIDIA/nccl v2.26.3-1 src/misc/shmutils.cc:128 with a peer's cuMem descriptor read as a legacy one", {"shm_path": "/dev/shm/nccl-"}),
    (Symptom.NCCL_ERROR, "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:272, unhandled system error, NCCL version 2.4.8",
     "pytorch/pytorch 1.1 ProcessGroupNCCL.cpp C10D_NCCL_CHECK with NVIDIA/nccl v2.4.8-1 ncclGetErrorString",
     {"result": NcclResult.SYSTEM, "line": 272, "file": "/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp"}),
    (Symptom.NCCL_ERROR, "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
     "vllm-project/vllm pynccl_wrapper.py NCCL_CHECK with NVIDIA/nccl 2.18+ ncclGetErrorString", {"result": NcclResult.CUDA}),
    (Symptom.NCCL_ERROR, "dgx-04: Test NCCL failure common.cu:892 'remote process exited or there was a network error'",
     "NVIDIA/nccl-tests v2.13.9 src/common.h NCCLCHECK with NVIDIA/nccl 2.13+ ncclGetErrorString", {"result": NcclResult.REMOTE, "line": 892}),
    (Symptom.NCCL_ERROR, "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error",
     "cupy/cupy cupy_backends/cuda/libs/nccl.pyx NcclError", {"result": NcclResult.SYSTEM}),
    (Symptom.NCCL_ERROR, "RuntimeError: NCCL Error 1: unhandled cuda error", "pytorch/pytorch torch/csrc/cuda/nccl.cpp throw_nccl_error",
     {"result": NcclResult.CUDA}),
    (Symptom.NCCL_ERROR, "horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled system error",
     "horovod/horovod horovod/common/ops/nccl_operations.cc \" failed: \" + ncclGetErrorString", {"result": NcclResult.SYSTEM}),
    (Symptom.PARALLEL_SIZE, "INFO 03-01 10:00:00 llm_engine.py:87] Initializing an LLM engine with config: model='m', tokenizer='m', "
     "tensor_parallel_size=2, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, seed=0)",
     "vllm 0.4 vllm/engine/llm_engine.py LLMEngine.__init__ logger.info", {"count": 2, "setting": "tensor_parallel_size"}),
    (Symptom.PARALLEL_SIZE, "$ vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --port 8000",
     "vllm-project/vllm vllm/engine/arg_utils.py --tensor-parallel-size", {"count": 4}),
    (Symptom.PARALLEL_SIZE, "torchrun --nproc_per_node=8 train.py --bf16", "pytorch/pytorch torch/distributed/run.py --nproc_per_node", {"count": 8}),
    (Symptom.PARALLEL_SIZE, "  nproc_per_node           : 2", "pytorch/pytorch 2.13.0 torch/distributed/launcher/api.py launch config dump",
     {"count": 2, "setting": "nproc_per_node"}),
    (Symptom.PEERS_WAITING, "(VllmWorkerProcess pid=161) WARNING 01-02 10:02:42 shm_broadcast.py:386] No available block found in 60 second.",
     "vllm-project/vllm 0.6.x shm_broadcast.py", {"seconds": 60}),
    (Symptom.PEERS_WAITING, "(EngineCore_0 pid=812) INFO 01-02 10:02:42 [shm_broadcast.py:501] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).",
     "vllm-project/vllm 0.10 shm_broadcast.py", {"seconds": 60}),
    (Symptom.COLLECTIVE_TIMEOUT, "[Rank 0] Watchdog caught collective operation timeout:",
     "pytorch/pytorch ProcessGroupNCCL.cpp watchdog line with its WorkNCCL repr folded onto the next line", {}),
    (Symptom.ERROR_LOGGED, "ERROR:root:checkpoint shard 3 has an unexpected size", "CPython 3.11 logging BASIC_FORMAT",
     {"message": "checkpoint shard 3 has an unexpected size"}),
    (Symptom.ERROR_LOGGED, "[TensorRT] ERROR: INVALID_CONFIG: Deserialize the cuda engine failed.", "TensorRT 7.x ILogger prefix",
     {"message": "INVALID_CONFIG: Deserialize the cuda engine failed."}),
    (Symptom.FRAMEWORK_SEEN, "(APIServer pid=1) INFO 08-13 08:22:59 [api_server.py:1090] vLLM API server version 0.10.1",
     "vllm-project/vllm 0.8+ process prefix", {"framework": "vllm"}),
    (Symptom.FRAMEWORK_SEEN, "[TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp", "NVIDIA/TensorRT-LLM TLLM_LOG tag", {"framework": "tensorrt-llm"}),
    (Symptom.P2P_UNAVAILABLE, "WARNING 03-01 10:00:00 custom_all_reduce.py:118] Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
     "vllm 0.4.0-0.33.0 custom_all_reduce.py", {}),
    (Symptom.P2P_UNAVAILABLE, "[TensorRT-LLM][WARNING] Device 0 peer access Device 1 is not available.",
     "NVIDIA/TensorRT-LLM bufferManager.cpp", {"device": 0, "peer_device": 1}),
    (Symptom.P2P_UNAVAILABLE, "Device=0 CANNOT Access Peer Device=1", "NVIDIA/cuda-samples p2pBandwidthLatencyTest.cu",
     {"device": 0, "peer_device": 1}),
    (Symptom.TOO_MANY_PEERS, "cudaDeviceEnablePeerAccess(9, 0) failed: peer mapping resources exhausted",
     "CUDA runtime string of cudaErrorTooManyPeers (libcudart 13.0)", {}),
    (Symptom.TOO_MANY_PEERS, "failed to enable peer access from 0x7f3c6c7a1e20 to 0x7f3c60732990: CUDA_ERROR_TOO_MANY_PEERS: peer mapping resources exhausted",
     "tensorflow r1.14 stream_executor/cuda/cuda_driver.cc", {}),
    (Symptom.IOMMU_FAULT, "[ 1234.567890] amd_iommu: Event logged [IO_PAGE_FAULT device=41:00.0 domain=0x000e address=0x38b5b000 flags=0x0030]",
     "Linux 5.x drivers/iommu/amd/iommu.c", {}),
    (Symptom.IOMMU_FAULT, "[  301.104521] DMAR: DRHD: handling fault status reg 2", "Linux drivers/iommu/intel/dmar.c", {}),
    (Symptom.WRONG_VALUES, "# Out of bounds values : 2 FAILED", "NVIDIA/nccl-tests src/common.cu", {"errors": 2}),
    (Symptom.WRONG_VALUES, "Verification error @ element 1: val = 0.000000, ref = 4.000000", "NVIDIA/cuda-samples simpleP2P.cu", {}),
    (Symptom.NAN_IN_OUTPUT, "{'loss': nan, 'learning_rate': 4.9e-05, 'epoch': 0.02}", "transformers Trainer log (4.x)", {}),
    (Symptom.NAN_IN_OUTPUT, "Epoch 1:  12%|#2        | 60/500 [00:10<01:15, 5.86it/s, loss=nan, v_num=0]", "PyTorch Lightning progress bar", {}),
    (Symptom.NAN_IN_OUTPUT, "Train Epoch: 3 [25600/60000 (43%)]\tLoss:     nan", "pytorch/examples mnist/main.py, padded", {"loss_value": "nan"}),
    (Symptom.NAN_IN_OUTPUT, "[10] epoch 0, 10/186, g_loss nan d_fake_loss nan", "a GAN script's print(f'g_loss {g_loss}')", {"metric": "g_loss"}),
    (Symptom.NAN_IN_OUTPUT, "FloatingPointError: Loss became infinite or NaN at iteration=4213!", "facebookresearch/detectron2 train_loop.py",
     {"iteration": 4213}),
    (Symptom.COLLECTIVE_TIMEOUT, "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20518, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800056 milliseconds before timing out.",
     "pytorch 2.x ProcessGroupNCCL.cpp", {"seq": 20518, "op_type": "ALLREDUCE", "timeout_ms": 1800000}),
    (Symptom.COLLECTIVE_TIMEOUT, "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1806151 milliseconds before timing out.",
     "pytorch 1.10-1.12 ProcessGroupNCCL.cpp", {"op_type": "BROADCAST", "timeout_ms": 1800000}),
    (Symptom.COLLECTIVE_TIMEOUT, "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:565 (most recent call first):",
     "pytorch 2.1 c10::Error backtrace header", {}),
    (Symptom.HANG_NOTED, "<hangs here>", "the note style of users' pastes in NVIDIA/nccl issues", {}),
    (Symptom.HANG_NOTED, "The training is stuck here forever", "the prose of users' notes in pasted logs of pytorch/pytorch forum threads", {}),
    (Symptom.HANG_NOTED, "The training is stuck here, GPU utilization 100%", "the prose of users' notes in pasted logs (vLLM thread form)", {}),
    (Symptom.DEVICE_LISTED, "  Device 1: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes",
     "ggml-org/llama.cpp ggml-cuda.cu ggml_cuda_init \"  Device %d: %s, compute capability %d.%d, VMM: %s\"", {"device": 1}),
    (Symptom.DEVICE_LISTED, "llm_load_tensors:      CUDA1 buffer size =  3500.00 MiB",
     "ggml-org/llama.cpp src/llama.cpp llm_load_tensors \"%s: %10s buffer size = %8.2f MiB\"", {"device": 1}),
    (Symptom.GARBAGE_OUTPUT, "GGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGG", "a llama.cpp chat answer of one letter token repeated", {}),
    (Symptom.HANG_NOTED, "... stuck here forever", "the note style of users' pastes in pytorch/pytorch forum threads", {}),
    (Symptom.KILLED_BY_SIGNAL, "Killed", "recorded: corpus/cpu/shell_foreground_sigkill.log (interactive bash 5.2.15)", {}),
    (Symptom.KILLED_BY_SIGNAL, "zsh: killed     python train.py", "zsh Src/jobs.c printjob", {"command": "python train.py"}),
    (Symptom.KILLED_BY_SIGNAL, "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)", "a JetBrains IDE's run console", {}),
    (Symptom.STACK_DUMP, "Thread 0x00007f4e5d2fb740 (most recent call first):", "CPython faulthandler (Python/traceback.c)", {}),
    (Symptom.STACK_DUMP, "Thread 0x7F4E5D2FB740 (active): \"MainThread\"", "py-spy dump (src/dump.rs)", {}),
    (Symptom.ENV_SET, "vm:2123:2123 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1",
     "recorded: corpus/gpu/nccl_p2p_disable.log", {"name": "NCCL_P2P_DISABLE", "value": "1"}),
    (Symptom.ENV_SET, "INFO 03-01 10:00:00 llm_engine.py:87] Initializing an LLM engine with config: model='m', tokenizer='m', "
     "tensor_parallel_size=2, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, seed=0)",
     "vllm 0.4 vllm/engine/llm_engine.py LLMEngine.__init__ logger.info", {"name": "disable_custom_all_reduce", "value": "False"}),
    (Symptom.DEVICE_LISTED, "#  Rank  1 Group  0 Pid  40213 on     node01 device  1 [0x1c] Tesla V100-SXM2-32GB",
     "NVIDIA/nccl-tests 2.13 src/common.cu", {"rank": 1, "device": 1}),
    (Symptom.DEVICE_LISTED, "Device: 1, NVIDIA RTX A6000, pciBusID: 21, pciDeviceID: 0, pciDomainID:0",
     "NVIDIA/cuda-samples p2pBandwidthLatencyTest.cu", {"device": 1}),
]




@pytest.mark.parametrize("symptom,line,source,facts", WORDS, ids=[f"{w[0].value}-{i}" for i, w in enumerate(WORDS)])
def test_each_wording_is_observed_with_typed_facts(symptom, line, source, facts):
    assert_typed_facts(symptom, line, source, facts)


def test_every_symptom_here_has_wordings_from_two_sources():
    assert_two_sources(WORDS)
    for wording in WORDINGS:
        assert len(wording.source) > 20, wording  # every wording says where its text comes from


@pytest.mark.parametrize("line", [
    "The watchdog thread avoids a hang when the store is gone",  # 'hang' in a sentence, not a note
    "NCCL INFO NCCL_ASYNC_ERROR_HANDLING set to avoid hangs",
    "# Out of bounds values : 0 OK",
    "Device=0 CAN Access Peer Device=1",
    "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):",
    "{'loss': 0.4312, 'learning_rate': 4.9e-05}",
    "Process finished with exit code 0",
    " iteration      100/  500000 | lm loss: 2.301E+00 | loss scale: 65536.0 | number of nan iterations:   0 |",  # Megatron training_log
    "loss_fn = nan_to_num(loss)",
    "Killed process 4242 (python) total-vm:1234kB",  # the kernel's own OOM line: host-oom-killer's, not a shell's report
    "################################################################",  # a banner rule, not a model's answer
    "gc: collecting garbage collection generation 2",
    "if it hangs, set NCCL_DEBUG=INFO and rerun",  # advice, not an observation
    "# to avoid the process getting stuck if a rank dies, set a timeout",
    "sha256: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",  # a base64 value, not a line of its own

])
def test_healthy_words_are_no_symptoms(line):
    obs = _observe(line)
    for symptom in (Symptom.HANG_NOTED, Symptom.WRONG_VALUES, Symptom.P2P_UNAVAILABLE, Symptom.STACK_DUMP, Symptom.NAN_IN_OUTPUT,
                    Symptom.KILLED_BY_SIGNAL, Symptom.GARBAGE_OUTPUT, Symptom.NVLINK_ABSENT):
        assert not obs.has(symptom), (symptom, line)


def test_a_tensor_that_arrives_as_zeros_on_another_gpu_is_wrong_values():
    # torch 2.13.0's repr of these tensors (printed here) with _tensor_str.py's CUDA device suffix
    text = "tensor([[-1.5439, -0.5225,  0.7539],\n        [-0.3086, -0.9688, -1.3535]], device='cuda:0',\n       dtype=torch.float16)\n" \
           "tensor([[0., 0., 0.],\n        [0., 0., 0.]], device='cuda:1', dtype=torch.float16)\n"
    wrong = _observe(text).of(Symptom.WRONG_VALUES)
    assert wrong and wrong[0].facts["kind"] == "zeros-after-copy"
    assert wrong[0].facts["device"] == 1 and wrong[0].facts["from_device"] == 0 and wrong[0].line == 4
    # zeros on the same device, or a zero tensor alone, say nothing
    assert not _observe("tensor([0, 0], device='cuda:1')\n").has(Symptom.WRONG_VALUES)
    assert not _observe("tensor([1, 2], device='cuda:1')\ntensor([0, 0], device='cuda:1')\n").has(Symptom.WRONG_VALUES)


def test_a_capture_cut_at_a_block_end_is_finished_with_the_next_block():
    scanner = Scanner(load_library())
    scanner.begin(Source(name="log"))
    scanner.feed(b"tensor([1, 2], device='cuda:0')\ntensor([[0., 0., 0.],\n")  # a block ends inside the repr
    scanner.feed(b"        [0., 0., 0.]], device='cuda:1')\n")
    scanner.end()
    scanner.observations.finish()
    assert scanner.observations.of(Symptom.WRONG_VALUES)[0].facts["device"] == 1


# -- the run model -------------------------------------------------------------------------------------


def test_a_recorded_run_to_its_end_reaches_every_phase_and_ends_clean():
    d = diagnose_text(P2P_DISABLE.read_text())
    run = d.run
    assert run["stop"]["kind"] == StopKind.CLEAN_END.value
    phases = [p["phase"] for p in run["phases_reached"]]
    assert phases[:4] == ["comm-setup", "channels", "comm-ready", "finish"][:4] or {"comm-setup", "channels", "comm-ready"} <= set(phases)
    assert run["transports"] == ["shm"] and run["env"]["NCCL_P2P_DISABLE"] == "1"
    assert run["nccl_version"] == "2.28.9" and run["gpus"]["count"] == 2
    json.dumps(d.to_json())  # typed values stay JSON-ready


def test_the_same_run_cut_after_channel_set_up_stops_silently_where_it_got_to():
    lines = P2P_DISABLE.read_text().splitlines(keepends=True)
    cut = max(i for i, line in enumerate(lines[:60]) if "via SHM/direct/direct" in line) + 1
    run = diagnose_text("".join(lines[:cut])).run
    # NCCL 2.28 prints Init COMPLETE before the channel connections: the last phase reached is comm-ready
    assert run["stop"]["kind"] == StopKind.HANG_SILENT.value and run["stop"]["phase"] == Phase.COMM_READY.label
    assert run["phases_reached"][-1]["phase"] == Phase.COMM_READY.label
    assert run["stop"]["line"] == cut


def test_a_users_note_makes_the_stop_a_hang_in_the_phase_it_follows():
    lines = H200_HEALTHY.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "Init COMPLETE" in line) + 1
    d = diagnose_text("".join(lines[:cut]) + "<hangs here>\n")
    assert d.run["stop"]["kind"] == StopKind.HANG_NOTED.value
    assert d.run["stop"]["phase"] == Phase.COMM_READY.label
    assert d.run["gpus"]["interconnect"] != Interconnect.PCIE.value
    # nothing says how these GPUs are connected: a hang in set-up, with the P2P experiment first
    top = d.findings[0]
    assert top.signature == "nccl-hang-at-setup" and top.fix.env == {"NCCL_P2P_DISABLE": "1"}
    assert top.line == cut + 1 and "<hangs here>" in top.evidence


def test_a_ctrl_c_traceback_is_where_the_user_stopped_a_hang_not_what_broke():
    lines = H200_HEALTHY.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "Init COMPLETE" in line) + 1
    # CPython's KeyboardInterrupt traceback (3.10), as a Ctrl-C in a blocking wait prints it
    interrupt = ("^C\nTraceback (most recent call last):\n  File \"/app/train.py\", line 12, in <module>\n"
                 "    dist.all_reduce(x)\nKeyboardInterrupt\n")
    d = diagnose_text("".join(lines[:cut]) + interrupt)
    assert d.run["stop"]["kind"] == StopKind.HANG_NOTED.value and d.run["stop"]["phase"] == Phase.COMM_READY.label
    assert d.findings[0].signature == "nccl-hang-at-setup"
    assert all(f.role == "context" for f in d.findings[1:] if f.generic)


# -- causes --------------------------------------------------------------------------------------------


def test_p2p_corruption_needs_several_gpus():
    one = diagnose_text("# Out of bounds values : 2 FAILED\n")
    assert not [f for f in one.findings if f.signature == "p2p-silent-corruption"]
    two = diagnose_text("tensor([1, 2])\ntensor([1, 2], device='cuda:0')\ntensor([0, 0], device='cuda:1')\n")
    top = two.findings[0]
    assert top.signature == "p2p-silent-corruption" and top.fix.env == {"NCCL_P2P_DISABLE": "1"}
    assert "tensor([0, 0], device='cuda:1')" in top.evidence and top.line == 3


def test_a_cause_that_outranks_makes_the_line_finding_it_explains_context():
    text = ("[TensorRT-LLM][INFO] Loaded engine size: 7238 MiB\n"
            "[TensorRT-LLM][ERROR] CUDA runtime error in cudaDeviceEnablePeerAccess(peer, 0): peer access is not supported "
            "between these two devices (/src/tensorrt_llm/cpp/tensorrt_llm/runtime/utils/multiDeviceUtils.h:106)\n")
    d = diagnose_text(text)
    assert d.findings[0].signature == "custom-allreduce-without-p2p"
    assert d.root_cause is d.findings[0]
    explained = [f for f in d.findings[1:] if f.line == 2]
    assert explained and all(f.role == "context" for f in explained)
    assert any("explained by custom-allreduce-without-p2p" in n for f in explained for n in f.notes)


def test_the_same_peer_error_without_a_custom_all_reduce_is_not_that_cause():
    d = diagnose_text("node:1:1 [0] NCCL WARN Cuda failure 'peer access is not supported between these two devices'\n"
                      "node:1:1 [0] NCCL INFO transport/p2p.cc:272 -> 1\n")
    assert all(f.signature != "custom-allreduce-without-p2p" for f in d.findings)


def test_watchdog_frames_alone_are_a_collective_timeout():
    frames = ("frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
              "std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f1ccad087d2 in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)\n"
              "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f1ccad0f233 in "
              "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)\n")
    d = diagnose_text(frames)
    assert d.findings[0].signature == "collective-timeout-unexplained"
    assert d.run["stop"]["kind"] == StopKind.WATCHDOG.value
    assert d.status == "failure"


def test_the_cli_reports_the_run_model_and_the_cause(tmp_path):
    log = tmp_path / "p2p.log"
    log.write_text("Device: 0, NVIDIA RTX A6000, pciBusID: 1, pciDeviceID: 0, pciDomainID:0\n"
                   "Device: 1, NVIDIA RTX A6000, pciBusID: 21, pciDeviceID: 0, pciDomainID:0\n"
                   "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1 \n     0 672.91  13.08 \n     1  13.01 673.20 \n"
                   "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0      1 \n     0 673.49   2.31 \n     1   2.12 672.33 \n")
    p = run_cli("diagnose", "--json", str(log))
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    top = out["findings"][0]
    assert top["signature"] == "p2p-slower-than-staged"
    assert top["facts"]["p2p_gbps"] == "2.21" and top["facts"]["staged_gbps"] == "13.04"
    assert out["run"]["gpus"] == {"count": 2, "models": ["A6000", "RTX"], "interconnect": "pcie"}


# -- the split scorer ------------------------------------------------------------------------------------


def test_split_score_halves_are_stable_and_both_reported(tmp_path):
    cases = tmp_path / "corpus" / "cases"
    cases.mkdir(parents=True)
    sources = [f"https://github.com/example/project/issues/{n}" for n in range(6)]
    for n, source in enumerate(sources):
        case = {"id": f"c{n}", "source": source, "project": "example", "class": "wrong-values", "kind": "failure",
                "log": "tensor([1, 2])\ntensor([1, 2], device='cuda:0')\ntensor([0, 0], device='cuda:1')\n",
                "truth": {"summary": "p2p", "evidence": "-", "must_mention_any": ["peer-to-peer"], "fix_env_any": ["NCCL_P2P_DISABLE=1"],
                          "initiating_rank": None}}
        (cases / f"c{n}.json").write_text(json.dumps(case))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    cmd = f"{sys.executable} -m mltriage diagnose --json -"
    p = procs.run([sys.executable, str(ROOT / "bench" / "split_score.py"), "--cases", str(cases), "--cmd", cmd,
                        "--json", str(tmp_path / "rows.json")], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    expected = {f"c{n}": ("rules" if hashlib.sha256(s.encode()).digest()[0] % 2 == 0 else "check") for n, s in enumerate(sources)}
    assert {r["id"]: r["half"] for r in rows} == expected
    assert all(r["top1"] and r["fix_env"] for r in rows)
    assert "rules half" in p.stdout or "check half" in p.stdout


NCCL_TESTS_DEVICES = ("# Using devices\n"
                      "#  Rank  0 Group  0 Pid  40212 on     node01 device  0 [0x1b] {model}\n"
                      "#  Rank  1 Group  0 Pid  40213 on     node01 device  1 [0x1c] {model}\n")
FAILED = ("  4294967296    1073741824     float    none      -1   181234   23.70   11.85      2   180912   23.74   11.87      0\n"
          "# Out of bounds values : 2 FAILED\n")


def test_wrong_values_on_pcie_gpus_are_p2p_corruption_and_on_nvlink_an_nccl_problem():
    # nccl-tests v2.13.9 src/common.cu format strings
    pcie = diagnose_text(NCCL_TESTS_DEVICES.format(model="NVIDIA RTX A6000") + FAILED)
    assert pcie.findings[0].signature == "p2p-silent-corruption" and pcie.run["gpus"]["interconnect"] == "pcie"
    nvlink = diagnose_text(NCCL_TESTS_DEVICES.format(model="Tesla V100-SXM2-32GB") + FAILED)
    assert nvlink.findings[0].signature == "nccl-wrong-values-nvlink"
    assert all(f.signature != "p2p-silent-corruption" for f in nvlink.findings)


def test_a_pasted_topology_says_how_the_gpus_are_linked():
    topo = ("        GPU0    GPU1    CPU Affinity\n"
            "GPU0     X      {link}    0-63\n"
            "GPU1    {link}     X      0-63\n")
    assert diagnose_text(FAILED + topo.format(link="NV4")).run["gpus"]["interconnect"] == "nvlink"
    assert diagnose_text(FAILED + topo.format(link="PHB")).run["gpus"]["interconnect"] == "pcie"
    d = diagnose_text(FAILED + topo.format(link="PHB"))
    assert d.findings[0].signature == "p2p-silent-corruption"
    assert any("pasted topology: GPU0<->GPU1: PHB" in n for n in d.findings[0].notes)


def test_a_silent_stop_counts_only_where_a_cause_says_it_does():
    # nccl-tests that printed its device list on SXM GPUs and then nothing: waiting for its first result
    header = "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n"
    results = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
               "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")
    d = diagnose_text(header + NCCL_TESTS_DEVICES.format(model="NVIDIA A100-SXM4-80GB") + results)
    assert d.run["stop"] == {**d.run["stop"], "kind": "hang-silent", "phase": "first-collective"}
    assert d.findings[0].signature == "nccl-hang-nvswitch" and d.findings[0].fix.env == {"NCCL_NVLS_ENABLE": "0"}
    # the device list alone, before any results header: still setting up, as a healthy paste can end
    early = diagnose_text(header + NCCL_TESTS_DEVICES.format(model="NVIDIA A100-SXM4-80GB"))
    assert not any(f.is_error for f in early.findings)
    # the same GPUs with a log cut in NCCL's channel set-up: a healthy paste can end so too, so the
    # cause is raised as a suspicion (a warning that says so), never as an error
    setup = ("node01:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
             "node01:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
             "node01:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
             "node01:1:1 [0] NCCL INFO Channel 02/0 : 0[0] -> 1[1] via P2P/CUMEM\n")
    smi = "|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0 Off |                    0 |\n"  # nvidia-smi's table row
    cut = diagnose_text(smi + setup)
    assert cut.run["gpus"]["interconnect"] == "nvlink"
    assert cut.run["stop"]["kind"] == "hang-silent" and cut.run["stop"]["phase"] == "channels"  # no Init COMPLETE before
    suspect = next(f for f in cut.findings if f.signature == "nccl-hang-nvswitch")
    assert suspect.severity == "warning" and not any(f.is_error for f in cut.findings)
    assert "if the run was still going" in suspect.notes[0]
    # the same cut with the user's note that it hangs: a verdict
    noted = diagnose_text(smi + setup + "<hangs here>\n")
    assert noted.findings[0].signature == "nccl-hang-nvswitch" and noted.findings[0].severity == "error"


def test_the_report_says_how_far_the_run_got_and_how_it_stopped(tmp_path):
    lines = P2P_DISABLE.read_text().splitlines(keepends=True)
    cut = max(i for i, line in enumerate(lines[:60]) if "via SHM/direct/direct" in line) + 1
    log = tmp_path / "cut.log"
    log.write_text("".join(lines[:cut]))
    p = run_cli("diagnose", str(log))
    # a log cut in NCCL's set-up is a suspected hang, not a verdict: exit 0, with how far it got and the experiment
    assert p.returncode == 0, p.stderr
    lines = p.stdout.decode().splitlines()
    run_line = next(line for line in lines if line.strip().startswith("Run: "))
    assert run_line.strip() == ("Run: 2 GPUs/ranks · NCCL 2.28.9 · reached comm-ready · stopped (hang-silent) "
                                "right after NCCL set up its communicator and channels")
    assert any(line.strip().startswith("if it hung there, try: NCCL_P2P_DISABLE=1") for line in lines)


def test_a_recorded_hang_stopped_with_ctrl_c_is_a_hang_and_says_where_the_process_waited():
    # corpus/cpu/gloo_hang_ctrl_c.log: rank 1 never joins, faulthandler dumps rank 0 in all_reduce, then SIGINT
    d = diagnose_path(ROOT / "corpus" / "cpu" / "gloo_hang_ctrl_c.log")
    assert d.status == "failure" and d.run["stop"]["kind"] == StopKind.HANG_NOTED.value
    top = d.findings[0]
    assert top.signature == "run-stalled-without-error" and top.severity == "error"
    assert d.run["dumps"] and d.run["dumps"][0]["waiting_in"] == "all_reduce"
    assert any(n.startswith("the stack dump at line") and "waiting in all_reduce" in n for n in top.notes)
    # the KeyboardInterrupt traceback is where the user stopped it, not what broke
    assert all(f.role == "context" for f in d.findings[1:] if f.generic)


def test_a_host_that_does_not_resolve_explains_the_store_timeout_that_follows():
    # corpus/cpu/tcpstore_host_unresolvable.log: MASTER_ADDR=no-such-host.invalid, torch 2.13.0 + gloo
    d = diagnose_path(ROOT / "corpus" / "cpu" / "tcpstore_host_unresolvable.log")
    top = d.findings[0]
    assert top.signature == "rendezvous-host-unresolved" and "no-such-host.invalid" in top.title
    timeout = [f for f in d.findings if f.signature == "torch-tcpstore-connect-timeout"]
    assert timeout and all(f.role == "context" for f in timeout)
    assert any("a consequence of rendezvous-host-unresolved" in n for n in timeout[0].notes)
    # an address that resolves but where nothing listens is the connect timeout alone
    refused = diagnose_text("[E1202 02:51:44.973357284 socket.cpp:1028] [c10d] The client socket has timed out after 4000ms "
                            "while trying to connect to (127.0.0.1, 29511).\n")
    assert refused.findings[0].signature == "torch-tcpstore-connect-timeout" and refused.findings[0].role == "root-cause"


# vLLM 0.6.x start-up lines (pynccl.py "vLLM is using nccl==%s", custom_all_reduce.py's P2P warning, model_runner.py
# "Starting to load model %s...") and shm_broadcast.py's "No available block found in %s second." under the worker prefix
VLLM_WAITING = (
    "INFO 01-02 10:00:00 pynccl.py:63] vLLM is using nccl==2.21.5\n"
    "WARNING 01-02 10:00:01 custom_all_reduce.py:143] Custom allreduce is disabled because your platform lacks GPU P2P capability "
    "or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.\n"
    "INFO 01-02 10:00:02 model_runner.py:1056] Starting to load model meta-llama/Llama-3.1-8B-Instruct...\n"
    "(VllmWorkerProcess pid=161) WARNING 01-02 10:02:42 shm_broadcast.py:386] No available block found in 60 second.\n"
    "(VllmWorkerProcess pid=161) WARNING 01-02 10:03:42 shm_broadcast.py:386] No available block found in 60 second.\n"
)


def test_a_framework_saying_its_workers_wait_until_the_log_ends_is_a_hang():
    d = diagnose_text(VLLM_WAITING)
    assert d.run["stop"]["kind"] == "hang-noted" and "waited for each other for 60 s" in d.run["stop"]["where"]
    top = d.findings[0]
    # vLLM itself found no working P2P (custom all-reduce off): the hang is peer-to-peer's, an error
    assert top.signature == "nccl-hang-broken-p2p" and top.severity == "error"
    # the same warning followed by progress was a slow start (compilation), not a hang
    went_on = diagnose_text(VLLM_WAITING + "INFO 01-02 10:04:00 model_runner.py:1067] Loading model weights took 14.99 GB\n"
                            "INFO:     Application startup complete.\n")
    assert went_on.run["stop"]["kind"] != "hang-noted"
    assert not any(f.is_error for f in went_on.findings)


def test_a_timeout_after_the_loop_finished_and_one_at_start_up_are_told_apart():
    finished = ("`Trainer.fit` stopped: `max_epochs=10` reached.\n"  # Lightning 2.1 fit_loop.py rank_zero_info
                "[Rank 0] Watchdog caught collective operation timeout:\n"  # ProcessGroupNCCL.cpp, repr folded
                "  WorkNCCL(SeqNum=48213, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000)\n")
    d = diagnose_text(finished)
    assert d.findings[0].signature == "collective-timeout-after-finish"
    assert all(f.role != "root-cause" for f in d.findings if f.signature == "torch-nccl-watchdog-timeout")
    early = diagnose_text("[rank1]:[E1201 10:30:02.000000000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation "
                          "timeout: WorkNCCL(SeqNum=2, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600031 "
                          "milliseconds before timing out.\n")
    # an early timeout with no rank shown busy: the transport that never delivered, or a late rank the log does not show
    assert early.findings[0].signature == "collective-timeout-first-collectives" and "SeqNum 2" in early.findings[0].title
    assert "NCCL_P2P_DISABLE" in early.findings[0].fix.env and "starting up" in early.findings[0].title


def test_every_wording_compiles():
    # wordings compile lazily (the first line that lands on their literals): a bad pattern must still fail here
    for wording in WORDINGS:
        assert wording.compiled.pattern == wording.pattern


def test_every_condition_a_cause_names_is_judged_by_one_registered_function():
    """Causes name conditions; one registry (mltriage.causes.conditions) holds what each means and
    its judge, so a name no function judges cannot pass the schema, and no condition is dead."""
    from mltriage.causes.conditions import CONDITIONS

    named = {c for rule in load_library().rules.values() for key in ("requires", "requires_any", "rules_out")
             for c in (rule.cause or {}).get(key) or []}
    assert named and named <= set(CONDITIONS)
    assert all(c.meaning and callable(c.judge) for c in CONDITIONS.values())
    # the evaluator's own (warns_alone) and the frameworks' family are the only ones no signature names today
    assert set(CONDITIONS) - named <= {"timeout-or-hang", "sglang", "vllm", "tensorrt-llm"}


def test_a_carriers_own_wording_keeps_its_facts_and_the_errno_text_is_only_a_fallback():
    """torch's c10d line names its peer and port: the errno's generic wording adds no second observation."""
    from observing import observe

    c10d = "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-a]:29500 (errno: 111 - Connection refused)."
    got = [o.facts for o in observe(c10d).of(Symptom.PEER_CONNECT_FAILED)]
    assert len(got) == 1 and got[0].get("layer") == "c10d" and got[0].get("port") == 29500
    retry = "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(...: [Errno 111] Connection refused)'"
    assert not observe(retry).of(Symptom.PEER_CONNECT_FAILED)


@pytest.mark.parametrize("text, cause", [
    # a launcher or service with no wording of its own: the errno text names the cause
    ("Traceback (most recent call last):\n  File \"/opt/app/launch.py\", line 12, in <module>\n    sock.connect((host, port))\n"
     "ConnectionRefusedError: [Errno 111] Connection refused\n", "peer-connect-failed"),
    ("fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n", "peer-connect-failed"),
    ("ssh: Could not resolve hostname nonexistent-host.invalid: Name or service not known\n", "rendezvous-host-unresolved"),
    ("Failed, NCCL error /workspace/cpp/tensorrt_llm/plugins/ncclPlugin/allreducePlugin.cpp:183 'unknown result code'\n", "nccl-result-code-unknown"),
    ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unknown result code, NCCL version 2.14.3\n",
     "nccl-result-code-unknown"),
])
def test_the_lowest_layers_words_name_the_cause_in_any_carrier(text, cause):
    d = diagnose_text(text)
    assert d.root_cause is not None and d.root_cause.signature == cause, [(f.signature, f.role) for f in d.findings]


def test_a_download_that_cannot_resolve_its_host_is_not_a_rendezvous_failure():
    """The urllib3 chain of a Hub download: the lookup that failed was huggingface.co's."""
    text = ("socket.gaierror: [Errno -3] Temporary failure in name resolution\n"
            "urllib3.exceptions.NameResolutionError: <urllib3.connection.HTTPSConnection object at 0x7f2b1c0>: Failed to resolve "
            "'huggingface.co' ([Errno -3] Temporary failure in name resolution)\n")
    d = diagnose_text(text)
    assert "rendezvous-host-unresolved" not in [f.signature for f in d.findings if f.is_error]


def test_a_connect_refused_mid_run_is_no_set_up_failure():
    """Past the first steps a refused connect follows a peer that died: the set-up cause stays quiet."""
    from pathlib import Path

    steps = "".join(f"{{'loss': 0.{i:04d}, 'learning_rate': 4.9e-05, 'epoch': 0.{i:02d}}}\n" for i in range(1, 30))
    text = "NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n" + steps + "ConnectionRefusedError: [Errno 111] Connection refused\n"
    assert "peer-connect-failed" not in [f.signature for f in diagnose_text(text).findings]
