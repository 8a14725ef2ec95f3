torchrun --standalone --nproc-per-node 2 --tee 3 --log-dir zoo/gpu/nccl_mismatch/logdir zoo/gpu/scenarios/nccl_mismatch.py
# exit_code=0 wall_s=13.508 host=nvidia-h200-x2 torch=2.11.0+cu130
