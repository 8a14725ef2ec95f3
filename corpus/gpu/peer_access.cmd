python3 zoo/gpu/raw/peer_access.py
# exit_code=0 wall_s=5.346 host=nvidia-h200-x2 torch=2.11.0+cu130
