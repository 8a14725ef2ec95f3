ZOO_MISMATCH_NUMEL=1024,268435456 TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_DEBUG_INFO_TEMP_FILE=zoo/gpu/nccl_mismatch_protocol_fr/fr/nccl_trace_rank_ torchrun --standalone --nproc-per-node 2 --tee 3 --log-dir zoo/gpu/nccl_mismatch_protocol_fr/logdir zoo/gpu/scenarios/nccl_mismatch.py
# exit_code=1 wall_s=107.836 host=nvidia-h200-x2 torch=2.11.0+cu130
