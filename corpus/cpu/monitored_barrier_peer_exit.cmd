python zoo/cpu_raw/monitored_barrier_peer_exit.py
# exit_code=1 wall_s=3.9 torch=2.13.0+cpu (cwd: repo root)
