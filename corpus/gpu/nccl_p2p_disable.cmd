NCCL_P2P_DISABLE=1 NCCL_DEBUG=INFO torchrun --standalone --nproc-per-node 2 --tee 3 zoo/gpu/raw/nccl_allreduce.py
# exit_code=0 wall_s=11.989 host=nvidia-h200-x2 torch=2.11.0+cu130
