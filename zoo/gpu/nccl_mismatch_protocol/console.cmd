ZOO_MISMATCH_NUMEL=1024,268435456 torchrun --standalone --nproc-per-node 2 --tee 3 --log-dir zoo/gpu/nccl_mismatch_protocol/logdir zoo/gpu/scenarios/nccl_mismatch.py
# exit_code=1 wall_s=101.731 host=nvidia-h200-x2 torch=2.11.0+cu130
