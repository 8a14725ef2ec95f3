python zoo/cpu_raw/tcpstore_addr_in_use.py
# exit_code=1 wall_s=1.7 torch=2.13.0+cpu (cwd: repo root)
