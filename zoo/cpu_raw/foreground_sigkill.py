"""A process the kernel kills with SIGKILL while it loads data (what the OOM killer does to a job that
runs out of host RAM): it prints progress, then receives SIGKILL. Run in an interactive shell, the
shell reports the foreground job as "Killed"."""

import os
import signal
import sys

for shard in range(1, 4):
    print(f"Loading checkpoint shard {shard}/8", flush=True)
sys.stdout.flush()
os.kill(os.getpid(), signal.SIGKILL)
