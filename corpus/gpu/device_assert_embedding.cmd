python3 zoo/gpu/raw/device_assert_embedding.py
# exit_code=1 wall_s=6.033 host=nvidia-h200-x2 torch=2.11.0+cu130
