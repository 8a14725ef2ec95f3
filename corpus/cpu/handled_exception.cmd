python zoo/cpu_raw/handled_exception.py
# exit_code=0 wall_s=2.0 torch=2.13.0+cpu (cwd: repo root)
