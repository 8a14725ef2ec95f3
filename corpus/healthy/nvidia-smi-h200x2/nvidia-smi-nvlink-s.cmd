nvidia-smi nvlink -s
# exit_code=0 wall_s=0.044 host=nvidia-h200-x2 torch=2.11.0+cu130
