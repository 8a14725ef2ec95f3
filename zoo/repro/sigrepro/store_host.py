import time, torch.distributed as dist
s = dist.TCPStore("127.0.0.1", 29651, is_master=True, wait_for_workers=False)
time.sleep(90)
