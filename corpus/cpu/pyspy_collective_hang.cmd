python zoo/cpu_raw/pyspy_collective_hang.py
# exit_code=0 wall_s=12.8 torch=2.13.0+cpu py-spy=0.4.3 (cwd: repo root)
