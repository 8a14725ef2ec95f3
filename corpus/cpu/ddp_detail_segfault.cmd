TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --standalone --nproc-per-node 2 --tee 3 zoo/scenarios/healthy.py
# exit_code=1 wall_s=6.0 torch=2.13.0+cpu (cwd: repo root)
