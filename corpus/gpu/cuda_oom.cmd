python3 zoo/gpu/raw/cuda_oom.py
# exit_code=1 wall_s=5.897 host=nvidia-h200-x2 torch=2.11.0+cu130
