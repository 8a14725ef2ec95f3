import os, time, torch, torch.distributed as dist
dist.init_process_group("gloo")
dist.all_reduce(torch.ones(2))
if os.environ.get("FAILME") == "1":
    raise RuntimeError("node A worker fails")
time.sleep(3)
dist.all_reduce(torch.ones(2))
