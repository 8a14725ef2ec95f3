"""Run under torchrun with CUDA_VISIBLE_DEVICES="": the NCCL process group on a host with no visible GPU."""
import torch.distributed as dist

dist.init_process_group("nccl")
dist.barrier()
