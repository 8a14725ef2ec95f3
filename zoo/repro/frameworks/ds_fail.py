import os, sys, time
rank = int(os.environ.get("RANK", "0"))
if rank == 1:
    raise RuntimeError("simulated failure on rank 1")
time.sleep(3)
