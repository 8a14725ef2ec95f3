torchrun --standalone --nproc-per-node 2 --tee 3 zoo/cpu_raw/prepare_evaluate_save_ok.py
# exit_code=0 wall_s=16.0 torch=2.13.0+cpu (cwd: repo root)
