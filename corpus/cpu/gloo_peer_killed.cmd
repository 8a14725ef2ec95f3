python zoo/cpu_raw/gloo_peer_killed.py
# exit_code=1 wall_s=5.6 torch=2.13.0+cpu (cwd: repo root)
