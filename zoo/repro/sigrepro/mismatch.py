import torch, torch.distributed as dist
dist.init_process_group("gloo")
r = dist.get_rank()
if r == 0:
    dist.all_reduce(torch.ones(4))
else:
    dist.broadcast(torch.ones(4), src=0)
dist.destroy_process_group()
