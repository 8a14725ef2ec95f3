python3 -m torch.distributed.flight_recorder.fr_trace zoo/gpu/nccl_mismatch_protocol_fr/fr -p nccl_trace_rank_
# exit_code=0 wall_s=6.052 host=nvidia-h200-x2 torch=2.11.0+cu130
