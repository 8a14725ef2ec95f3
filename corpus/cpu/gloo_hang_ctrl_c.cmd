python zoo/cpu_raw/gloo_hang_ctrl_c.py
