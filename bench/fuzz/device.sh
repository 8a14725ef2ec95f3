#!/bin/bash
# The long fuzz run and the 10 MB worst cases on the lent device machine (16 cores, its own Python).
# Our pinned dependencies travel as wheels in .whl/ (made here with `pip download --python-version
# 3.12 ...`, see bench/RESULTS.md), so the device runs the same regex/hyperscan/pydantic as CI.
#   bash bench/fuzz/device.sh worst            # bench_worst_case CLI column + adversarial 10 MB logs
#   bash bench/fuzz/device.sh fuzz SEED MINUTES
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD/server MLTRIAGE_CACHE_DIR=/tmp/mltcache
python3 -m pip install -q --no-index --find-links .whl --target /tmp/site .whl/*.whl 2>&1 | tail -2
python3 -c "import sys, regex, hyperscan, pydantic; print(sys.version.split()[0], 'regex', regex.__version__, 'hyperscan', hyperscan.__version__, 'pydantic', pydantic.VERSION)"
nproc; lscpu | grep -E "Model name|^CPU\(s\)" | head -2
case "$1" in
  worst)
    timeout 280 python3 bench/lsp/bench_worst_case.py --no-server
    timeout 280 python3 bench/fuzz/adversarial_lines.py --repeat 2 --cli-mb 10 --top 6
    ;;
  fuzz)
    python3 bench/fuzz/fuzz_engine.py --workers "$(nproc)" --seed "$2" --minutes "$3"
    ;;
esac
