torchrun --standalone --nproc-per-node 2 --tee 3 --log-dir zoo/gpu/nccl_oom/logdir zoo/gpu/scenarios/nccl_oom.py
# exit_code=1 wall_s=12.920 host=nvidia-h200-x2 torch=2.11.0+cu130
