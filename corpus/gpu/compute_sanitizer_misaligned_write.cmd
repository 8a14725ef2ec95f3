compute-sanitizer --tool memcheck python3 zoo/gpu/raw/misaligned_address_cupy.py
# exit_code=1 wall_s=2.402 host=nvidia-h200-x2 torch=2.11.0+cu130
# recorded as zoo/gpu/raw/illegal_address_cupy.py; the script was renamed afterwards (content unchanged) because the odd pointer gave a misaligned, not illegal, address
