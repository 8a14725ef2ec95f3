"""A client TCPStore connects to a port nobody listens on (MASTER_ADDR/PORT wrong, or master not up yet)."""
import socket
from datetime import timedelta

from torch.distributed import TCPStore

s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()  # a port that was free a moment ago and that nobody listens on
print(f"connecting to 127.0.0.1:{port}", flush=True)
TCPStore("127.0.0.1", port, world_size=2, is_master=False, timeout=timedelta(seconds=5))
