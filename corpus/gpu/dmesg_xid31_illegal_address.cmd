python3 zoo/gpu/raw/illegal_address_cupy.py; dmesg | grep -iE 'xid|nvrm'   # nvidia-h200-x2 (Firecracker, driver 580.159.04), 2026-11-30; see bench/gpu-checks/run.sh
