NCCL_SOCKET_IFNAME=doesnotexist NCCL_DEBUG=INFO torchrun --standalone --nproc-per-node 1 --tee 3 zoo/gpu/raw/nccl_allreduce.py
# exit_code=1 wall_s=15.1 host=nvidia-h200 torch=2.11.0+cu130 nccl=2.28.9
