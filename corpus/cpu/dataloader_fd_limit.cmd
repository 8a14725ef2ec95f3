python zoo/cpu_raw/dataloader_fd_limit.py
# exit_code=1 wall_s=1.9 torch=2.13.0+cpu (cwd: repo root)
