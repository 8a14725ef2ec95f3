NCCL_SOCKET_IFNAME=doesnotexist NCCL_DEBUG=WARN torchrun --standalone --nproc-per-node 2 --tee 3 zoo/gpu/raw/nccl_allreduce.py
# exit_code=1 wall_s=12.478 host=nvidia-h200-x2 torch=2.11.0+cu130
