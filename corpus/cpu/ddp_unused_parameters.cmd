torchrun --standalone --nproc-per-node 2 --tee 3 zoo/cpu_raw/ddp_unused_parameters.py
# exit_code=1 wall_s=7.4 torch=2.13.0+cpu (cwd: repo root)
