python3 zoo/gpu/raw/misaligned_address_torch.py
# exit_code=1 wall_s=6.305 host=nvidia-h200-x2 torch=2.11.0+cu130
# recorded as zoo/gpu/raw/illegal_address_torch.py; the script was renamed afterwards (content unchanged) because the odd pointer gave a misaligned, not illegal, address
