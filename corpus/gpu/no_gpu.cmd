CUDA_VISIBLE_DEVICES= python3 zoo/gpu/raw/no_gpu.py
# exit_code=1 wall_s=5.426 host=nvidia-h200-x2 torch=2.11.0+cu130
