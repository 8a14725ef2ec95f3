"""The master TCPStore cannot listen: another process (held here by a plain socket) owns the port."""
import socket
from datetime import timedelta

from torch.distributed import TCPStore

holder = socket.socket()
holder.bind(("0.0.0.0", 0))
holder.listen(1)
port = holder.getsockname()[1]
print(f"port {port} is held by another listener", flush=True)
TCPStore("127.0.0.1", port, world_size=1, is_master=True, timeout=timedelta(seconds=5))
