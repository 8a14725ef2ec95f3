torchrun --standalone --nproc-per-node 2 --tee 3 --log-dir zoo/gpu/nccl_stuck/logdir zoo/gpu/scenarios/nccl_stuck.py
# exit_code=1 wall_s=98.233 host=nvidia-h200-x2 torch=2.11.0+cu130
