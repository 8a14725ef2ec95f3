# rank 1 raises; others block in allreduce (gloo) -> ChildFailedError + survivors killed
import os, time, torch, torch.distributed as dist
from datetime import timedelta
dist.init_process_group("gloo", timeout=timedelta(seconds=int(os.environ.get("PG_TIMEOUT","20"))))
r = dist.get_rank()
t = torch.ones(4)
dist.all_reduce(t)
if r == 1:
    mode = os.environ.get("MODE", "raise")
    if mode == "raise":
        raise RuntimeError("boom on rank 1")
    elif mode == "kill9":
        os.kill(os.getpid(), 9)
    elif mode == "exit":
        os._exit(3)
    elif mode == "hang":
        time.sleep(600)
dist.all_reduce(t)
dist.destroy_process_group()
