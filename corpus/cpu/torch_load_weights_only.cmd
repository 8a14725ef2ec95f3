python zoo/cpu_raw/torch_load_weights_only.py
# exit_code=1 wall_s=1.6 torch=2.13.0+cpu (cwd: repo root)
