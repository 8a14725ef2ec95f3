NCCL_DEBUG=INFO torchrun --standalone --nproc-per-node 2 --tee 3 --log-dir corpus/healthy/nccl-info-h200x2/logdir zoo/gpu/scenarios/nccl_healthy.py
# exit_code=0 wall_s=11.863 host=nvidia-h200-x2 torch=2.11.0+cu130
