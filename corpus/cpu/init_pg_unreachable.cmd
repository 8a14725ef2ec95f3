python zoo/cpu_raw/init_pg_unreachable.py
# exit_code=1 wall_s=20.2 torch=2.13.0+cpu (cwd: repo root)
