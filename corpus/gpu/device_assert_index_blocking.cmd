CUDA_LAUNCH_BLOCKING=1 python3 zoo/gpu/raw/device_assert_index.py
# exit_code=1 wall_s=6.039 host=nvidia-h200-x2 torch=2.11.0+cu130
