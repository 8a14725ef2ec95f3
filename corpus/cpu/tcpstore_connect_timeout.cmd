python zoo/cpu_raw/tcpstore_connect_timeout.py
# exit_code=1 wall_s=11.8 torch=2.13.0+cpu (cwd: repo root)
