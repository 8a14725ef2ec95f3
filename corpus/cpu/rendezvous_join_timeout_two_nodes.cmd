LOGLEVEL=INFO torchrun --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29534 --rdzv-conf join_timeout=8 zoo/scenarios/healthy.py
# exit_code=1 wall_s=12.2 torch=2.13.0+cpu (cwd: repo root)
