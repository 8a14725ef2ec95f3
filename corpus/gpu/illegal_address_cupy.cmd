python3 zoo/gpu/raw/illegal_address_cupy.py
# exit_code=1 wall_s=2.486 host=nvidia-h200-x2 torch=2.11.0+cu130
