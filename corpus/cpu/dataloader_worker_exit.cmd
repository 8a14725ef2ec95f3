python zoo/cpu_raw/dataloader_worker_exit.py
# exit_code=1 wall_s=2.4 torch=2.13.0+cpu (cwd: repo root)
