python -m torch.distributed.launch --nproc-per-node 2 zoo/cpu_raw/argparse_local_rank.py
# exit_code=1 wall_s=1.6 torch=2.13.0+cpu (cwd: repo root)
