python zoo/cpu_raw/dataloader_worker_sigbus.py
# exit_code=1 wall_s=1.6 torch=2.13.0+cpu (cwd: repo root)
