TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --standalone --nproc-per-node 2 --tee 3 --log-dir zoo/gpu/nccl_mismatch_detail/logdir zoo/gpu/scenarios/nccl_mismatch.py
# exit_code=1 wall_s=15.339 host=nvidia-h200-x2 torch=2.11.0+cu130
