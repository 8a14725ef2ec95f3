python zoo/cpu_raw/gloo_stall_progress.py
# exit_code=-9 wall_s=8.8 torch=2.13.0+cpu (cwd: repo root)
