torchrun --standalone --nproc-per-node 2 --tee 3 zoo/cpu_raw/timeout_uneven_iterable.py
# exit_code=1 wall_s=15.0 torch=2.13.0+cpu (cwd: repo root)
