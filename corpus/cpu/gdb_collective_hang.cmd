python zoo/cpu_raw/gdb_collective_hang.py
# exit_code=0 wall_s=22.0 torch=2.13.0+cpu gdb=13.1 (cwd: repo root)
