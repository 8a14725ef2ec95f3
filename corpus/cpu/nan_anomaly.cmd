python zoo/cpu_raw/nan_anomaly.py
# exit_code=1 wall_s=2.2 torch=2.13.0+cpu (cwd: repo root)
