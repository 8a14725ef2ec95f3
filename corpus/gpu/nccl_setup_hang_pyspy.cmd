PY_SPY=py-spy python zoo/gpu/raw/nccl_setup_hang_pyspy.py
# exit_code=0 wall_s=36.7 host=nvidia-h200 torch=2.11.0+cu130 nccl=2.28.9 py-spy=0.4.3
