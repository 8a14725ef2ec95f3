"""The numerics helper's causes: the run's numeric precision as a run-model fact, and what overflows
fp16; each from a real recording or the named upstream format string, with its neighbours silent."""

import json
import sys
from pathlib import Path

import pytest

from cli_runner import run_cli
from mltriage.engine import diagnose_text
from mltriage.symptoms import Symptom
from mltriage.symptoms.vocabulary import Precision
import procs
from observing import observe as _observe

ROOT = Path(__file__).resolve().parent.parent
FP16_REPRO = ROOT / "zoo" / "repro" / "numerics" / "fp16_overflow.py"




def _signatures(text: str) -> list[str]:
    return [f.signature for f in diagnose_text(text).findings]


# (line, its source, the precision it states)
PRECISION_WORDS = [
    ("fp16=True,", "transformers v4.40.0 TrainingArguments.__str__", Precision.FP16),
    ("bf16=True,", "transformers v4.40.0 TrainingArguments.__str__", Precision.BF16),
    ("torchrun --nproc_per_node 1 run_clm.py --model_name_or_path t5-base --fp16 --output_dir out",
     "transformers examples' HfArgumentParser flag", Precision.FP16),
    ("python pretrain_gpt.py --num-layers 24 --bf16 --lr 3e-4", "Megatron-LM core_r0.8.0 arguments.py --bf16", Precision.BF16),
    ("vllm serve facebook/opt-125m --dtype half --max-model-len 2048", "vLLM v0.6.3 arg_utils.py --dtype choices", Precision.FP16),
    ("Mixed precision type: fp16", "accelerate v1.0.0 state.py AcceleratorState.__repr__", Precision.FP16),
    ("mixed_precision: bf16", "the accelerate config file", Precision.BF16),
    ("[2026-12-02 05:12:44,123] [INFO] [config.py:1000:print]   fp16_enabled ................. True",
     "DeepSpeed v0.14.0 runtime/config.py DeepSpeedConfig.print", Precision.FP16),
    ("  bf16 ............................................ True", "Megatron-LM core_r0.8.0 _print_args", Precision.BF16),
    ("INFO 12-02 05:12:44 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with config: model='m', trust_remote_code=False, "
     "dtype=torch.float16, max_seq_len=2048, enforce_eager=False", "vLLM v0.6.3 llm_engine.py", Precision.FP16),
    ("WARNING 12-02 05:12:44 config.py:1674] Casting torch.bfloat16 to torch.float16.", "vLLM v0.6.3 config.py", Precision.FP16),
    ('2024-01-02T10:00:00.000000Z  INFO text_generation_launcher: Args { model_id: "m", revision: None, sharded: None, '
     "quantize: None, dtype: Some(BFloat16), trust_remote_code: false }", "TGI launcher Args Debug", Precision.BF16),
    ("train.py:10: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.",
     "recorded: torch 2.13.0", Precision.FP16),
]


@pytest.mark.parametrize("line,source,precision", PRECISION_WORDS, ids=[f"precision-{i}" for i in range(len(PRECISION_WORDS))])
def test_each_precision_wording_states_a_typed_precision(line, source, precision):
    found = _observe(line).of(Symptom.PRECISION_SET)
    assert found, (line, source)
    assert found[0].facts["precision"] is precision


@pytest.mark.parametrize("line", [
    "bf16=False,", "fp16=False,", "--fp16 False", "Mixed precision type: no_such", "Using auto half precision backend",
    "{'loss': 0.41, 'nan_steps': 0, 'learning_rate': 0.0003}",
])
def test_settings_that_state_no_half_precision(line):
    assert all(o.facts.get("precision") in (None, Precision.FP32) for o in _observe(line).of(Symptom.PRECISION_SET)), line


def test_the_run_model_reads_the_precision_and_gpus_without_bf16():
    run = diagnose_text("TrainingArguments(\nbf16=True,\nfp16=False,\n)\n").run
    assert run["precision"] == "bf16"
    run = diagnose_text("  fp16_enabled ................. True\n  bfloat16_enabled ............. True\n").run
    assert run["precision"] is None  # both: the log does not say which one computes
    run = diagnose_text("GPU 0: Tesla V100-PCIE-16GB (UUID: GPU-5f3c2b1a-0d7e-4c55-9a1b-2f6c8e9d0a11)\n").run
    assert run["gpus_without_bf16"] and "V100" in run["gpus_without_bf16"][0]


def test_a_real_fp16_run_whose_loss_turns_nan_is_fp16_overflow_not_a_divergence():
    run = procs.run([sys.executable, "-W", "default", str(FP16_REPRO.relative_to(ROOT))], capture_output=True, cwd=ROOT, timeout=120)
    log = (run.stdout + run.stderr).decode()
    assert "Loss: nan" in log  # the repro really overflowed
    p = run_cli("diagnose", "--json", "-", input=log.encode())
    findings = json.loads(p.stdout)["findings"]
    assert findings[0]["signature"] == "numerics-fp16-overflow"
    assert "numerics-loss-nan" not in [f["signature"] for f in findings]  # the precise cause names it, once
    words = json.dumps(findings[0]).lower()
    assert "65504" in words and "bf16" in words


def test_nan_images_from_a_half_precision_decoder():
    # CPython warnings.formatwarning + numpy >= 1.24's cast warning + diffusers v0.30.0 image_processor.py:111
    log = ("/opt/conda/lib/python3.11/site-packages/diffusers/image_processor.py:111: RuntimeWarning: invalid value encountered in cast\n"
           '  images = (images * 255).round().astype("uint8")\n')
    assert _signatures(log)[:1] == ["numerics-fp16-overflow"]
    # the same warning from an fp32 run is not fp16's range
    assert "numerics-fp16-overflow" not in _signatures("Mixed precision type: no\n" + log)
    # numpy's cast warning in a tabular script names no image: no cause from it alone
    assert "numerics-fp16-overflow" not in _signatures("prep.py:40: RuntimeWarning: invalid value encountered in cast\n")


def test_activation_dumps_beyond_65504():
    dump = "min=-2.77e+05 max= 2.75e+05 var= 5.45e+07 mean= 5.16e+01 (encoder block 3)\n"
    assert _signatures(dump)[:1] == ["numerics-fp16-overflow"]
    assert "numerics-fp16-overflow" not in _signatures("min=-6.10e+04 max= 6.50e+04 var= 1.0e+02 (block 3)\n")  # inside fp16's range
    assert "numerics-fp16-overflow" not in _signatures("bf16=True,\n" + dump)


def test_a_gpu_without_bf16_makes_a_nan_loss_fp16s():
    log = "GPU 0: Tesla V100-PCIE-16GB (UUID: GPU-5f3c2b1a-0d7e-4c55-9a1b-2f6c8e9d0a11)\n{'loss': nan, 'learning_rate': 4.9e-05, 'epoch': 0.02}\n"
    assert _signatures(log)[:1] == ["numerics-fp16-overflow"]


@pytest.mark.parametrize("log,expected", [
    # bf16: NaN is a divergence (learning rate, data), not fp16's range
    ("TrainingArguments(\nbf16=True,\n)\n{'loss': nan, 'grad_norm': nan, 'learning_rate': 0.0003, 'epoch': 0.02}\n", "numerics-loss-nan"),
    # no precision stated: the general numerics cause
    ("{'loss': nan, 'learning_rate': 4.9e-05, 'epoch': 0.02}\n", "numerics-loss-nan"),
    # fp16 on two GPUs over P2P: the P2P corruption cause comes first, fp16 overflow steps aside
    ("node01:3912:3930 [0] NCCL INFO ncclCommInitRank comm 0x55d0c5a0 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init START\n"
     "node01:3912:3930 [0] NCCL INFO Channel 00/0 : 0[1b000] -> 1[1c000] via P2P/IPC\nfp16=True,\n"
     "{'loss': nan, 'learning_rate': 4.9e-05, 'epoch': 0.02}\n", "p2p-corruption-nan"),
    # the loss scaler at its minimum names the fp16 story itself (DeepSpeed loss_scaler.py)
    ("fp16=True,\n[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1\n"
     "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.\n", "numerics-loss-scale-minimum"),
])
def test_neighbours_keep_their_cases(log, expected):
    found = _signatures(log)
    assert found and found[0] == expected, found
    assert "numerics-fp16-overflow" not in found


@pytest.mark.parametrize("log", [
    "TrainingArguments(\nbf16=True,\n)\n{'loss': 0.41, 'nan_steps': 0, 'grad_norm': 1.2, 'learning_rate': 0.0003, 'epoch': 0.5}\n",
    "fp16=True,\n{'loss': 1.873, 'grad_norm': 0.9, 'learning_rate': 0.0003, 'epoch': 1.0}\n{'train_runtime': 12.5, 'epoch': 1.0}\n",
    "  fp16 ............................................ True\n iteration      100/  500000 | lm loss: 2.301E+00 | loss scale: 65536.0 | number of nan iterations:   0 |\n",
])
def test_healthy_precision_logs_are_silent(log):
    d = diagnose_text(log)
    assert not [f for f in d.findings if f.severity in ("critical", "error")], [f.signature for f in d.findings]


# -- /dev/shm seen through ENOSPC ---------------------------------------------------------------------

SHM_SEMLOCK = ROOT / "zoo" / "repro" / "numerics" / "shm_semlock.py"


def _tiny_shm_run(script: Path) -> str | None:
    """Run ``script`` with an 8 KiB /dev/shm of its own (a private mount namespace); None where this
    machine cannot make one (not root, no unshare)."""
    import shutil
    import os

    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return None
    p = procs.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=8k tmpfs /dev/shm && {sys.executable} {script}"],
                  capture_output=True, cwd=ROOT, timeout=120)
    return (p.stdout + p.stderr).decode()


def test_a_real_full_dev_shm_under_multiprocessing_is_shm_too_small():
    log = _tiny_shm_run(SHM_SEMLOCK)
    if log is None:
        pytest.skip("needs root and unshare for a private /dev/shm")
    assert "[Errno 28] No space left on device" in log and "SemLock" in log
    p = run_cli("diagnose", "--json", "-", input=log.encode())
    findings = json.loads(p.stdout)["findings"]
    assert findings[0]["signature"] == "host-shm-too-small"
    words = json.dumps(findings[0])
    assert "--shm-size" in words and "--ipc=host" in words
    # the Python exception it raised is its consequence, not a second root cause
    assert all(f["role"] != "root-cause" for f in findings[1:])


def test_recorded_shm_enospc_forms():
    # the frames of the real run above (CPython 3.10's synchronize.py line numbers)
    semlock = ('  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 57, in __init__\n'
               "    sl = self._semlock = _multiprocessing.SemLock(\nOSError: [Errno 28] No space left on device\n")
    assert _signatures(semlock)[:1] == ["host-shm-too-small"]
    # CPython 3.11 Lib/multiprocessing/shared_memory.py SharedMemory.__init__: os.ftruncate(self._fd, size) on a new segment
    shared = ('  File "/usr/lib/python3.11/multiprocessing/shared_memory.py", line 121, in __init__\n'
              "    os.ftruncate(self._fd, size)\nOSError: [Errno 28] No space left on device\n")
    assert _signatures(shared)[:1] == ["host-shm-too-small"]


@pytest.mark.parametrize("log,expected", [
    # a full disk: the checkpoint path is named, no shared memory in sight
    ('  File "train.py", line 88, in <module>\n    torch.save(sd, "/ckpt/model.pt")\n'
     "OSError: [Errno 28] No space left on device: '/ckpt/model.pt'\n", None),
    # the torch shared-memory file form keeps its own signature (it names the file)
    ("RuntimeError: unable to allocate shared memory(shm) for file </torch_10434_3152139358_0>: No space left on device (28)\n",
     "dataloader-shm-no-space"),
])
def test_shm_neighbours(log, expected):
    found = _signatures(log)
    assert "host-shm-too-small" not in found, found
    if expected:
        assert found[0] == expected


# -- which GPU a process sees: MIG, the display watchdog ------------------------------------------------

NVSMI_MIG = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-2c5d2f9e-7a1b-4c3d-9e8f-0a1b2c3d4e5f)\n"  # nvidia-smi -L, R470+ (MIG user guide)
             "  MIG 3g.40gb     Device  0: (UUID: MIG-8f3e1c2a-4b5d-5e6f-9a0b-1c2d3e4f5a6b)\n"
             "  MIG 3g.40gb     Device  1: (UUID: MIG-0a9b8c7d-6e5f-5a4b-8c3d-2e1f0a9b8c7d)\n")
# pytorch aten/src/ATen/cuda/CUDAContext.cpp (commit 02f1c1a5) line 50, in c10's INTERNAL ASSERT form
ASSERT = ('RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "../aten/src/ATen/cuda/CUDAContext.cpp":50, '
          "please report a bug to PyTorch. device=1, num_gpus=1\n")
# c10/cuda/CUDAException.cpp with cudaErrorInvalidDevice's string (libcudart 13.0)
ORDINAL = "torch.AcceleratorError: CUDA error: invalid device ordinal\nGPU device may be out of range, do you have enough GPUs?\n"


@pytest.mark.parametrize("mig,error", [
    (NVSMI_MIG, ASSERT),
    ("gpu.product=NVIDIA-A100-SXM4-80GB-MIG-3g.40gb\n", ASSERT),  # gpu-feature-discovery's label (single MIG strategy)
    ("CUDA_VISIBLE_DEVICES=MIG-8f3e1c2a-4b5d-5e6f-9a0b-1c2d3e4f5a6b,MIG-0a9b8c7d-6e5f-5a4b-8c3d-2e1f0a9b8c7d\n", ORDINAL),
])
def test_a_device_index_error_on_mig_is_one_instance_per_process(mig, error):
    d = diagnose_text(mig + error)
    top = d.findings[0]
    assert top.signature == "cuda-mig-one-instance-per-process"
    assert all(f.role != "root-cause" for f in d.findings[1:])  # the ordinal error is its consequence
    assert "CUDA_VISIBLE_DEVICES" in top.fix.env


def test_device_index_errors_without_mig_and_mig_without_errors():
    assert _signatures("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-2c5d2f9e-7a1b-4c3d-9e8f-0a1b2c3d4e5f)\n" + ORDINAL)[:1] == \
        ["cuda-invalid-device-ordinal"]
    d = diagnose_text(NVSMI_MIG + "step 100 loss 2.31\n")
    assert not [f for f in d.findings if f.severity in ("critical", "error")]


@pytest.mark.parametrize("log", [
    # rogerallen/raytracinginoneweekendincuda main.cu check_cuda's format, cudaErrorUnknown, from cmd.exe
    "C:\\src\\render>render.exe 1200 800 > image.ppm\nCUDA error = 999 at main.cu:196 'cudaDeviceSynchronize()'\n",
    # NVIDIA/cuda-samples helper_cuda.h check() with cudaErrorLaunchTimeout (702)
    'CUDA error at helper_cuda.h:912 code=702(cudaErrorLaunchTimeout) "cudaDeviceSynchronize()"\n',
    # c10_cuda_check_implementation with cudaErrorLaunchTimeout's string (libcudart 13.0)
    "RuntimeError: CUDA error: the launch timed out and was terminated\nSearch for `cudaErrorLaunchTimeout' in "
    "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n",
])
def test_the_display_watchdog(log):
    d = diagnose_text(log)
    assert d.findings[0].signature == "cuda-display-watchdog-tdr", [f.signature for f in d.findings]
    assert all(f.role != "root-cause" for f in d.findings[1:])
    words = " ".join([d.findings[0].title, d.findings[0].root_cause, *d.findings[0].fix.steps])
    assert "TdrDelay" in words and "TDR" in words


def test_error_999_that_waited_for_no_kernel_is_not_the_watchdog():
    log = ("RuntimeError: CUDA error: unknown error\nSearch for `cudaErrorUnknown' in "
           "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n")
    assert "cuda-display-watchdog-tdr" not in _signatures(log)


# -- GPU memory of a serving engine ---------------------------------------------------------------------

# vllm-project/vllm v0.6.3 vllm/worker/model_runner.py capture_model (V0 logger format), verbatim messages
V063_CAPTURE = ("INFO 12-02 05:20:11 model_runner.py:1402] Capturing the model for CUDA graphs. This may lead to unexpected consequences "
                "if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI.\n")
# pytorch c10/cuda/CUDACachingAllocator.cpp (2.1+)
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which "
       "2.25 MiB is free.\n")


@pytest.mark.parametrize("log", [
    V063_CAPTURE + OOM,
    "(EngineCore_0 pid=812) ERROR 12-02 05:20:11 [core.py:700] " + OOM,  # V1's process prefix (0.8+)
    "[2025-05-02 16:14:33] Capture cuda graph begin. This can take up to several minutes. avail mem=0.42 GB\n" + OOM,  # SGLang
])
def test_an_oom_in_a_serving_engine_is_its_memory_budget(log):
    d = diagnose_text(log)
    top = d.findings[0]
    assert top.signature == "vllm-startup-gpu-memory", [f.signature for f in d.findings]
    assert all(f.role != "root-cause" for f in d.findings[1:])  # cuda-oom is its consequence here
    words = " ".join([top.root_cause, top.fix.summary, *top.fix.steps])
    for flag in ("--enforce-eager", "--gpu-memory-utilization", "--max-model-len", "--max-num-seqs"):
        assert flag in words


def test_serving_engine_neighbours():
    assert _signatures(OOM)[:1] == ["cuda-oom"]  # a training OOM: the caching allocator's own finding
    # vLLM refusing to start for want of KV cache keeps its own signature (the fix is a larger budget)
    no_kv = ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n")
    assert _signatures(V063_CAPTURE + no_kv)[:1] == ["vllm-no-kv-cache-memory"]


def test_a_healthy_vllm_start_up_that_prints_its_kv_cache_is_silent():
    # vllm v0.6.3 gpu_executor.py "# GPU blocks: %d, # CPU blocks: %d", model_runner.py capture_model, uvicorn
    log = ("INFO 12-02 05:20:02 gpu_executor.py:122] # GPU blocks: 27897, # CPU blocks: 2048\n" + V063_CAPTURE +
           "INFO 12-02 05:20:24 model_runner.py:1530] Graph capturing finished in 13 secs.\nINFO:     Application startup complete.\n")
    d = diagnose_text(log)
    assert not [f for f in d.findings if f.severity in ("critical", "error")], [f.signature for f in d.findings]


# -- an OOM during evaluation ----------------------------------------------------------------------------

# pytorch/examples imagenet/main.py's call chain in CPython's traceback format
def _imagenet_traceback(function: str, call: str) -> str:
    return (f'Traceback (most recent call last):\n  File "main.py", line 285, in main_worker\n    {call}\n'
            f'  File "main.py", line 372, in {function}\n    output = model(images)\n' + OOM)


def test_an_oom_inside_evaluation_names_no_grad_and_eval_accumulation():
    d = diagnose_text(_imagenet_traceback("validate", "acc1 = validate(val_loader, model, criterion, args)"))
    top = d.findings[0]
    assert top.signature == "cuda-oom-during-evaluation", [f.signature for f in d.findings]
    assert all(f.role != "root-cause" for f in d.findings[1:])
    words = " ".join([top.root_cause, top.fix.summary, *top.fix.steps])
    assert "torch.no_grad()" in words and "torch.inference_mode()" in words and "eval_accumulation_steps" in words


def test_an_oom_in_a_training_step_stays_the_allocators():
    found = _signatures(_imagenet_traceback("train", "train(train_loader, model, criterion, optimizer, epoch, device, args)"))
    assert found[:1] == ["cuda-oom"] and "cuda-oom-during-evaluation" not in found
    # an evaluation frame far from the OOM, in an earlier traceback, is not its traceback
    far = '  File "main.py", line 372, in validate\n' + "step\n" * 400 + OOM
    assert "cuda-oom-during-evaluation" not in _signatures(far)


# NVIDIA/apex apex/amp/handle.py's and DeepSpeed v0.10.0 loss_scaler.py's format strings
def _apex(scale: str) -> str:
    return f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {scale}\n"


def test_a_loss_scaler_that_keeps_overflowing_is_fp16_overflow():
    assert _signatures("".join(_apex(s) for s in ("4.0", "2.0", "1.0", "0.5", "0.25")))[:1] == ["numerics-fp16-overflow"]
    # DeepSpeed's overflow line states fp16 by itself: with a NaN loss after it, fp16's range is the cause
    ds = "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n"
    assert _signatures(ds + "{'loss': nan, 'learning_rate': 4.9e-05, 'epoch': 0.02}\n")[:1] == ["numerics-fp16-overflow"]
    # fairseq trainer.py's note with fairseq/optim/dynamic_loss_scaler.py's OverflowError text
    fs = "2021-03-08 12:33:51 | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 0.5\n"
    assert _signatures(fs)[:1] == ["numerics-fp16-overflow"]


def test_occasional_scaler_overflows_in_a_healthy_fp16_run_are_silent():
    log = (_apex("32768.0") + "{'loss': 2.1934, 'grad_norm': 3.1, 'learning_rate': 0.0003, 'epoch': 0.01}\n" + _apex("16384.0") +
           "{'loss': 1.8012, 'grad_norm': 2.2, 'learning_rate': 0.0003, 'epoch': 0.02}\n")
    d = diagnose_text(log)
    assert not [f for f in d.findings if f.severity in ("critical", "error")], [f.signature for f in d.findings]


def test_a_half_precision_nan_check_of_an_image_model():
    # AUTOMATIC1111 modules/devices.py test_for_nans: the precision sentence only comes in half precision
    half = ("modules.devices.NansException: A tensor with all NaNs was produced in Unet. This could be either because there's not "
            "enough precision to represent the picture, or because your video card does not support half type. Try setting the "
            "\"Upcast cross attention layer to float32\" option in Settings > Stable Diffusion or using the --no-half commandline "
            "argument to fix this. Use --disable-nan-check commandline argument to disable this check.\n")
    d = diagnose_text(half)
    assert d.findings[0].signature == "numerics-fp16-overflow"
    assert any("--no-half" in step for step in d.findings[0].fix.steps)
    full = ("modules.devices.NansException: A tensor with all NaNs was produced in Unet. Use --disable-nan-check commandline "
            "argument to disable this check.\n")  # --no-half: fp32, not fp16's range
    assert "numerics-fp16-overflow" not in _signatures(full)
