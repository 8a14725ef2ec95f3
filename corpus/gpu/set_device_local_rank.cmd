torchrun --standalone --nproc-per-node 4 --tee 3 zoo/gpu/raw/set_device_local_rank.py
# exit_code=1 wall_s=12.298 host=nvidia-h200-x2 torch=2.11.0+cu130
