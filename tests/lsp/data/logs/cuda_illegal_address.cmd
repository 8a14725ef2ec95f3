python3 zoo/gpu/raw/illegal_address_torch.py
# exit_code=1 wall_s=7.085 host=nvidia-h200-x2 torch=2.11.0+cu130
