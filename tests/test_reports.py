"""What a user's report and a run's own settings say: how many GPUs take part, that the run hangs,
that its numbers are wrong, a command-line program's own error line; and where a hang the report's
opening words describe is placed.

Lines are either an upstream release's format string filled the way the program fills it (named in
the source column), or the forms users' reports take in public issue threads (a sentence's shape,
written here in our own words, never a thread's text)."""

import pytest

from mltriage.engine import diagnose_text
from mltriage.run_model import StopKind
from mltriage.symptoms import Symptom
from observing import assert_two_sources, assert_typed_facts, observe

WORDS = [
    # the devices and the world a run is given
    (Symptom.PARALLEL_SIZE, "CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py", "CUDA C++ Programming Guide: CUDA_VISIBLE_DEVICES", {"count": 4}),
    (Symptom.PARALLEL_SIZE, "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]", "Lightning accelerators/cuda.py (1.x-2.x)", {"count": 2}),
    (Symptom.PARALLEL_SIZE, "os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0,1\"", "a script setting CUDA_VISIBLE_DEVICES in Python", {"count": 2}),
    (Symptom.PARALLEL_SIZE, "  global_world_sizes=[2, 2]", "torch 2.13.0 torch/distributed/elastic/agent/server/api.py", {"count": 2}),
    (Symptom.PARALLEL_SIZE, "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.",
     "torch distributed_c10d.py _store_based_barrier", {"count": 2}),
    (Symptom.PARALLEL_SIZE, "Num processes: 4", "accelerate state.py PartialState.__repr__ (v0.5.0-v1.14.0)", {"count": 4}),
    (Symptom.PARALLEL_SIZE, "using world size: 8, data-parallel size: 8, context-parallel size: 1, tensor-model-parallel size: 1, "
     "pipeline-model-parallel size: 1 ", "Megatron-LM megatron/training/arguments.py", {"count": 8}),
    (Symptom.PARALLEL_SIZE, "12/01/2026 10:00:00 - WARNING - __main__ - Process rank: 0, device: cuda:0, n_gpu: 2, distributed training: False, "
     "16-bits training: False", "transformers examples/pytorch run_glue.py logger.warning", {"count": 2}),
    (Symptom.PARALLEL_SIZE, "[2026-12-01 10:00:00,000] [INFO] [launch.py:151:main] nnodes=1, num_local_procs=4, node_rank=0",
     "DeepSpeed deepspeed/launcher/launch.py (v0.12.0)", {"count": 4}),
    (Symptom.PARALLEL_SIZE, "WORLD_SIZE=4", "torchrun's worker environment, as a script echoes it", {"count": 4}),
    (Symptom.PARALLEL_SIZE, "mpirun -n 2 --allow-run-as-root python3 run.py --engine_dir ./engine", "Open MPI mpirun(1) -n", {"count": 2}),
    (Symptom.PARALLEL_SIZE, "srun --ntasks-per-node=8 python train.py", "Slurm srun(1) --ntasks-per-node", {"count": 8}),
    (Symptom.PARALLEL_SIZE, "trainer = Trainer(devices=4, accelerator=\"gpu\", strategy=\"ddp\")", "Lightning Trainer(devices=N)", {"count": 4}),
    # the scale in a report's words
    (Symptom.GPUS_DESCRIBED, "Training hangs when using 2 GPUs", "the form of pytorch/pytorch reports ('on N GPUs')", {"count": 2}),
    (Symptom.GPUS_DESCRIBED, "It works with one GPU but not with two NVIDIA GPUs", "the form of vllm-project/vllm reports", {"count": 2}),
    (Symptom.GPUS_DESCRIBED, "the loss goes to nan with multiple GPUs", "the form of huggingface/transformers reports", {"count": 2}),
    (Symptom.GPUS_DESCRIBED, "multi-GPU training freezes", "the form of pytorch/pytorch forum titles", {"count": 2}),
    (Symptom.GPUS_DESCRIBED, "copies between GPU0 and GPU1 come back as zeros", "the form of pytorch/pytorch P2P reports", {"count": 2}),
    (Symptom.GPUS_DESCRIBED, "x = y.to('cuda:0 -> cuda:1')", "a device pair as users write it (cuda:N)", {"count": 2}),
    (Symptom.GPUS_DESCRIBED, "the tensor on the second GPU is wrong", "the form of NVIDIA/nccl reports", {"count": 2}),
    (Symptom.GPUS_DESCRIBED, "when I run on 8 A100s the job is stuck", "a GPU model's plural, as vllm-project/vllm reports write it", {"count": 8}),
    # a hang in a report's sentence
    (Symptom.HANG_NOTED, "Training hangs when using 2 GPUs", "the form of pytorch/pytorch reports (subject, verb)", {}),
    (Symptom.HANG_NOTED, "vLLM freezes with tp=2 and nothing is printed", "the form of vllm-project/vllm reports", {}),
    (Symptom.HANG_NOTED, "The all_reduce gets stuck at the first step", "the form of NVIDIA/nccl reports", {}),
    (Symptom.HANG_NOTED, "Stuck at init_process_group", "the form of report titles (the verb first)", {}),
    (Symptom.HANG_NOTED, "Hangs when using tensor parallel", "the form of vllm-project/vllm titles (the verb first)", {}),
    (Symptom.HANG_NOTED, "dist.barrier() never returns", "the form of pytorch/pytorch reports (a call that never returns)", {}),
    (Symptom.HANG_NOTED, "With 4 GPUs there is no progress after the first iteration", "the form of pytorch/pytorch forum reports", {}),
    (Symptom.HANG_NOTED, "after that nothing happens", "the form of NVIDIA/nccl reports", {}),
    # wrong values in a report's sentence
    (Symptom.WRONG_VALUES, "torch.distributed.all_reduce returns wrong results on 4 GPUs", "the form of pytorch/pytorch reports", {}),
    (Symptom.WRONG_VALUES, "the outputs are different with 2 GPUs", "the form of vllm-project/vllm reports", {}),
    (Symptom.WRONG_VALUES, "Results differ between 1 GPU and 2 GPUs", "the form of huggingface/transformers reports", {}),
    (Symptom.WRONG_VALUES, "the output of all_reduce is all zeros on the second GPU", "the form of NVIDIA/nccl reports", {}),
    (Symptom.HANG_NOTED, "no output after that, GPU util stays at 100%", "the form of NVIDIA/nccl reports (spinning kernels)", {}),
    (Symptom.HANG_NOTED, "the server prints no output for 30 minutes", "the form of vllm-project/vllm reports", {}),
    (Symptom.WRONG_VALUES, "output is gibberish with tp=2 but fine with tp=1", "the form of vllm-project/vllm reports", {}),
    (Symptom.WRONG_VALUES, "the model outputs only exclamation marks with 2 GPUs", "the form of ggml-org/llama.cpp and vllm reports", {}),
    (Symptom.PARALLEL_SIZE, "garbage with TP=4, fine with TP=1", "the form of sgl-project/sglang reports", {"count": 4}),
    # frameworks beginning their NCCL set-up
    (Symptom.COMM_INIT_STARTED, "[2026-12-01 10:00:00,000] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl",
     "DeepSpeed deepspeed/comm/comm.py (v0.8.0-v0.19.5)", {}),
    (Symptom.COMM_INIT_STARTED, "INFO 12-01 10:00:00 utils.py:1008] Found nccl from library libnccl.so.2", "vLLM vllm/utils.py find_nccl_library", {}),
    # Lightning's process-group set-up, in each release's words (the world size is the run's scale)
    (Symptom.COMM_INIT_STARTED, "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/8", "pytorch_lightning 1.4.9 plugins/training_type/ddp.py", {"nranks": 8}),
    (Symptom.COMM_INIT_STARTED, "initializing ddp (SLURM): GLOBAL_RANK: 3, MEMBER: 4/4",
     "pytorch_lightning 1.0.8 trainer/connectors/slurm_connector.py", {"nranks": 4}),
    (Symptom.COMM_INIT_STARTED, "All DDP processes registered. Starting ddp with 2 processes", "pytorch_lightning 0.9.0 accelerators", {"nranks": 2}),
    (Symptom.COMM_INIT_STARTED, "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2",
     "lightning 2.x fabric/utilities/distributed.py _init_dist_connection", {"nranks": 2}),
    # TensorFlow's MirroredStrategy: its devices, and its first NCCL all-reduce
    (Symptom.COMM_INIT_STARTED, "INFO:tensorflow:batch_all_reduce: 4 all-reduces with algorithm = nccl, num_packs = 1",
     "tensorflow/python/distribute/cross_device_ops.py NcclAllReduce._do_batch_all_reduce (TF 2.x)", {}),
    (Symptom.COMM_INIT_STARTED, "INFO:tensorflow:Collective all_reduce tensors: 4 all_reduces, num_devices = 2, group_size = 2, "
     "implementation = CommunicationImplementation.NCCL, num_packs = 1", "tensorflow/python/distribute/cross_device_ops.py CollectiveAllReduce", {}),
    (Symptom.GPUS_DESCRIBED, "INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:GPU:0', "
     "'/job:localhost/replica:0/task:0/device:GPU:1')", "tensorflow/python/distribute/mirrored_strategy.py (TF 2.x)", {"count": 2}),
    # a command-line program's own error line
    (Symptom.ERROR_LOGGED, "Error: No such option: --nproc_per_node", "click 8.x ClickException.show (a click CLI's usage error)",
     {"message": "No such option: --nproc_per_node"}),
    (Symptom.ERROR_LOGGED, "Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with libgomp.so.1 library.",
     "IntelPython/mkl-service _mklinitmodule.c", {}),
    # NCCL found the pair's P2P status not OK (NVML): an INFO on PCIe (it falls back), a WARN on NVLink (it stops)
    (Symptom.P2P_UNAVAILABLE, "node01:4211:4260 [0] NCCL INFO P2P is disabled between connected GPUs 1 and 0. You can repress this "
     "message with NCCL_IGNORE_DISABLED_P2P=1.", "NVIDIA/nccl v2.21.5 graph/paths.cc INFO", {"device": 1, "peer_device": 0}),
    (Symptom.P2P_UNAVAILABLE, "node01:4211:4260 [0] graph/paths.cc:324 NCCL WARN P2P is disabled between NVLINK connected GPUs 3 and 2. "
     "This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you "
     "can set NCCL_IGNORE_DISABLED_P2P=1.", "NVIDIA/nccl v2.12.12 graph/paths.cc WARN", {"device": 3, "peer_device": 2}),
    # a channel names the two ranks it joins
    (Symptom.CHANNELS_SET_UP, "node01:4211:4260 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC", "NVIDIA/nccl transport/p2p.cc (2.18)",
     {"from_rank": 1, "to_rank": 0}),
    (Symptom.CHANNELS_SET_UP, "node01:4211:4260 [0] NCCL INFO Ring 00 : 0 -> 1 via P2P/IPC", "NVIDIA/nccl transport/p2p.cc (2.3)",
     {"from_rank": 0, "to_rank": 1}),
]


@pytest.mark.parametrize("symptom,line,source,facts", WORDS, ids=[f"{w[0].value}-{i}" for i, w in enumerate(WORDS)])
def test_each_form_is_observed_with_typed_facts(symptom, line, source, facts):
    assert_typed_facts(symptom, line, source, facts)


def test_every_symptom_here_is_tested_in_forms_from_two_sources():
    assert_two_sources(WORDS)


@pytest.mark.parametrize("line", [
    # programs' own sentences with the words in them: a possibility, a cause, advice, a check of shapes
    "Warning: Gloo backend using Overlapping DDP with ZeRO may meet hangs",  # torch/distributed/optim/zero_redundancy_optimizer.py
    "This is typically caused by a remote worker hanging or bugs in the application.",  # libtorch (2.13.0 strings)
    "No progress made in scheduling - possible deadlock",  # torch/_inductor
    "Setting NCCL_BLOCKING_WAIT could give incorrect results or hang.",
    "RuntimeError: Input/output mismatch in the collective sequence number: 5",
    "RuntimeError: Size mismatch between tensors",
    "RuntimeError: inconsistent tensor size, expected tensor [4] and src [8] to have the same number of elements",
    "Outputs get different pools so memory gets freed properly",
    "Initializing weights with random values",
    "Error: 0.123",  # a metric named Error, not a program's error line
    # a report's sentence that is no observation: fixed, advice, a condition
    "the job no longer hangs after setting NCCL_P2P_DISABLE=1",
    "if the training gets stuck, set NCCL_DEBUG=INFO",
    "set a timeout to avoid the process getting stuck",
    "It does not hang when NCCL_P2P_DISABLE=1 is set",
])
def test_programs_sentences_and_fixed_reports_are_no_hang_and_no_wrong_values(line):
    obs = observe(line)
    assert not obs.has(Symptom.HANG_NOTED) and not obs.has(Symptom.WRONG_VALUES) and not obs.has(Symptom.ERROR_LOGGED), line


def test_a_world_size_of_one_and_a_single_gpu_make_no_multi_gpu_run():
    d = diagnose_text("Process rank: 0, device: cuda:0, n_gpu: 1, distributed training: False\nWORLD_SIZE=1\ntraining on 1 GPU\n"
                      "The training is stuck here forever\n")
    assert d.run["gpus"]["count"] == 1
    assert not any("several GPUs" in f.title for f in d.findings)


# NVIDIA/nccl 2.18.1 init.cc / transport/p2p.cc INFO lines, as a 2-GPU torchrun prints them (host:pid:tid [cudaDev])
NCCL_SETUP_2_GPUS = "".join(
    f"node01:4211:{tid} [{dev}] NCCL INFO {text}\n" for dev, tid, text in (
        (0, 4211, "NCCL version 2.18.1+cuda12.1"),
        (0, 4260, "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC"),
        (1, 4261, "Channel 00/0 : 1[1] -> 0[0] via P2P/IPC"),
        (0, 4260, "Channel 01/0 : 0[0] -> 1[1] via P2P/IPC"),
    ))


def test_the_ranks_a_channel_joins_count_as_gpus_taking_part():
    d = diagnose_text(NCCL_SETUP_2_GPUS)
    assert d.run["gpus"]["count"] == 2


def test_a_report_that_opens_with_its_hang_stops_where_the_log_ends():
    # the report's first words say it hangs; the log it pastes ends in NCCL's channel set-up
    d = diagnose_text("Training hangs when using 2 GPUs, no error is printed:\n" + NCCL_SETUP_2_GPUS)
    stop = d.run["stop"]
    assert stop["kind"] == StopKind.HANG_NOTED.value and stop["phase"] == "channels" and stop["line"] == 5
    top = d.findings[0]
    assert top.severity.value == "error" and "NCCL_P2P_DISABLE" in (top.fix.env if top.fix else {})


def test_the_same_log_without_the_report_is_only_a_suspicion():
    d = diagnose_text(NCCL_SETUP_2_GPUS)
    assert d.run["stop"]["kind"] == StopKind.HANG_SILENT.value
    assert not any(f.is_error for f in d.findings)


def test_a_report_of_a_multi_gpu_hang_with_no_nccl_line_names_the_p2p_experiment():
    d = diagnose_text("$ torchrun --standalone train.py\nThe training is stuck with nothing printed, nvidia-smi shows 100% on both GPUs\n")
    top = d.findings[0]
    assert top.signature == "multi-gpu-hang-before-nccl" and top.severity.value == "error"


def test_a_report_of_wrong_collective_results_on_several_gpus_is_p2p_corruption_first():
    d = diagnose_text("torch.distributed.all_reduce returns wrong results on 4 GPUs (RTX 4090, no NVLink)\n")
    assert d.findings[0].signature == "p2p-silent-corruption"


def test_wrong_results_on_one_gpu_are_no_p2p_cause():
    d = diagnose_text("the outputs are different with 1 GPU after the upgrade\n")
    assert not any(f.signature == "p2p-silent-corruption" for f in d.findings)


# tensorflow/python/distribute: MirroredStrategy's devices, Keras' epoch line, the first NCCL all-reduce, then the
# "Reduce to %s then broadcast to %r." INFO lines of its reductions to one device (cross_device_ops.py, TF 2.x)
TF_FIRST_ALLREDUCE = (
    "INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:GPU:0', "
    "'/job:localhost/replica:0/task:0/device:GPU:1')\n"
    "Epoch 1/500\n"
    "INFO:tensorflow:batch_all_reduce: 4 all-reduces with algorithm = nccl, num_packs = 1\n"
    "INFO:tensorflow:Reduce to /job:localhost/replica:0/task:0/device:CPU:0 then broadcast to ('/job:localhost/replica:0/task:0/device:CPU:0',).\n"
    "INFO:tensorflow:Reduce to /job:localhost/replica:0/task:0/device:CPU:0 then broadcast to ('/job:localhost/replica:0/task:0/device:CPU:0',).\n")


def test_a_log_ending_in_its_loggers_chatter_after_the_first_nccl_all_reduce_stopped_there():
    d = diagnose_text(TF_FIRST_ALLREDUCE)
    assert d.run["gpus"]["count"] == 2
    assert d.run["stop"]["kind"] == StopKind.HANG_SILENT.value and d.run["stop"]["silence"] == "nccl-setup"
    assert d.findings[0].signature == "nccl-hang-at-setup" and d.findings[0].severity.value == "warning"


def test_chatter_that_says_the_run_went_on_is_no_stop_in_set_up():
    d = diagnose_text(TF_FIRST_ALLREDUCE + "INFO:tensorflow:Epoch 1 finished in 41 seconds\n")
    assert d.run["stop"]["kind"] != StopKind.HANG_SILENT.value
