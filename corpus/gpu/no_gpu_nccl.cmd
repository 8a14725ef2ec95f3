CUDA_VISIBLE_DEVICES= torchrun --standalone --nproc-per-node 2 --tee 3 zoo/gpu/raw/no_gpu_nccl.py
# exit_code=1 wall_s=9.266 host=nvidia-h200-x2 torch=2.11.0+cu130
