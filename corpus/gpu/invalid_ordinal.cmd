python3 zoo/gpu/raw/invalid_ordinal.py
# exit_code=1 wall_s=5.365 host=nvidia-h200-x2 torch=2.11.0+cu130
