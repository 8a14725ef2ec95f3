#!/bin/bash
# The measured run on nvidia-h200-x2 (see RESULTS.md): bash bench/probe/device_run.sh
# Writes everything under $OUT.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 PYTHONPATH=server MLTRIAGE_CACHE_DIR=/tmp/mltcache
now() { python3 -c 'import time; print(time.time())'; }
t() { local a=$(now); "$@"; local rc=$?; python3 -c "print('wall %.2f s rc=$rc' % ($(now) - $a))" >&2; return $rc; }
summary() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(' ', r['message'], r['timing'])" "$1"; }
{
  date -u; nvidia-smi -L; python3 -c 'import torch, cupy, numpy; print(torch.__version__, cupy.__version__, numpy.__version__)'
  for i in 1 2; do
    echo "== probe torch, run $i (whole CLI process: python start, import torch, CUDA init, probe)"
    echo "\$ python3 -m mltriage.probe --json --refresh"
    t python3 -m mltriage.probe --json --refresh > $OUT/h200x2.json; summary $OUT/h200x2.json
  done
  echo "== probe torch, human-readable"
  echo "\$ python3 -m mltriage.probe --refresh"
  t python3 -m mltriage.probe --refresh > $OUT/h200x2-matrix.txt
  echo "== probe from the cache (no GPU work)"
  t python3 -m mltriage.probe > /dev/null
  for b in ctypes cupy; do
    echo "== probe $b backend"
    t python3 -m mltriage.probe --json --refresh --backend $b > $OUT/h200x2-$b.json; summary $OUT/h200x2-$b.json
  done
  echo "== reference: plain torch copy, 256 MiB and 1 GiB, CUDA events"
  python3 bench/probe/reference_copy.py 0 1 > $OUT/reference.json; python3 bench/probe/reference_copy.py 1 0 >> $OUT/reference.json
  cat $OUT/reference.json
  echo "== verify commands from the advice: NCCL channels with and without NCCL_P2P_DISABLE=1"
  for env in "" "NCCL_P2P_DISABLE=1"; do
    echo "\$ $env NCCL_DEBUG=INFO torchrun --nproc_per_node=2 bench/probe/nccl_verify.py 2>&1 | grep -E 'via (P2P|SHM)'"
    env $env NCCL_DEBUG=INFO torchrun --nproc_per_node=2 bench/probe/nccl_verify.py > /tmp/nccl.log 2>&1
    grep -E 'via (P2P|SHM)' /tmp/nccl.log | head -2; grep -oE 'via (P2P|SHM)[^ ]*' /tmp/nccl.log | sort | uniq -c; grep all_reduce /tmp/nccl.log
  done
  echo "== the probe's own tests on this machine"
  python3 -m pytest tests/probe -q -p no:cacheprovider 2>&1 | tail -3
} > $OUT/log.txt 2>&1
cat $OUT/log.txt
