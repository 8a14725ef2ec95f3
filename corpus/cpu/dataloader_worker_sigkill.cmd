python zoo/cpu_raw/dataloader_worker_sigkill.py
# exit_code=1 wall_s=1.8 torch=2.13.0+cpu (cwd: repo root)
