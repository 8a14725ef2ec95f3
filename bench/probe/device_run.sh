#!/bin/bash
# The measured run on nvidia-h200-x2 (see RESULTS.md). Writes everything under $OUT.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 PYTHONPATH=server MLTRIAGE_CACHE_DIR=/tmp/mltcache
LOG=$OUT/log.txt
t() { local a=$(date +%s.%N); "$@"; local rc=$?; echo "wall $(echo "$(date +%s.%N) - $a" | bc) s rc=$rc" >&2; return $rc; }
{
  date -u; nvidia-smi -L; python3 -c 'import torch, numpy; print(torch.__version__, numpy.__version__)'
  nvidia-smi topo -m > $OUT/topo-m.txt 2>&1
  # build the upstream bandwidth test in the background (CPU only) while the probe runs
  ( cd bench/probe/p2p_src && nvcc -O2 -I. -o /tmp/p2pbw p2pBandwidthLatencyTest.cu > /tmp/nvcc.log 2>&1 ) &
  NVCC=$!
  echo "== probe torch (cold process: includes python start, import torch, CUDA init)"
  t python3 -m mltriage.probe --json --refresh > $OUT/h200x2.json
  echo "rc=$?"
  echo "== probe torch, human-readable"
  t python3 -m mltriage.probe --refresh > $OUT/h200x2-matrix.txt
  echo "rc=$?"
  echo "== probe cached"
  t python3 -m mltriage.probe > /dev/null; echo "rc=$?"
  echo "== probe ctypes backend"
  t python3 -m mltriage.probe --json --refresh --backend ctypes > $OUT/h200x2-ctypes.json
  echo "rc=$?"
  echo "== reference torch copy"
  python3 bench/probe/reference_copy.py 0 1 > $OUT/reference.json; python3 bench/probe/reference_copy.py 1 0 >> $OUT/reference.json
  cat $OUT/reference.json
  wait $NVCC; cat /tmp/nvcc.log
  echo "== p2pBandwidthLatencyTest"
  /tmp/p2pbw > $OUT/p2pBandwidthLatencyTest.txt 2>&1; echo "rc=$?"
} > $LOG 2>&1
cat $LOG
python3 -c "import json; r=json.load(open('$OUT/h200x2.json')); print(r['message'], r['timing'])"
