#!/bin/bash
# Third device run: the final code end to end (torch + ctypes), and the test suite there.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 PYTHONPATH=server MLTRIAGE_CACHE_DIR=/tmp/mltcache
now() { python3 -c 'import time; print(time.time())'; }
t() { local a=$(now); "$@"; local rc=$?; python3 -c "print('wall %.2f s rc=$rc' % ($(now) - $a))" >&2; return $rc; }
summary() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(' ', r['message'], r['timing']); [print('   ', p['src'], p['dst'], p['verdict'], p['link'], p['correctness']['checks'], p['bandwidth']) for p in r['pairs']]" "$1"; }
{
  date -u; nvidia-smi -L
  for i in 1 2; do
    echo "== probe torch, run $i"; echo "\$ python3 -m mltriage.probe --json --refresh"
    t python3 -m mltriage.probe --json --refresh > $OUT/h200x2.json; summary $OUT/h200x2.json
  done
  echo "\$ python3 -m mltriage.probe --refresh"
  t python3 -m mltriage.probe --refresh > $OUT/h200x2-matrix.txt
  echo "== probe ctypes backend"
  t python3 -m mltriage.probe --json --refresh --backend ctypes > $OUT/h200x2-ctypes.json; summary $OUT/h200x2-ctypes.json
  echo "== single GPU (CUDA_VISIBLE_DEVICES=0) and --devices 1,0 --no-bandwidth"
  CUDA_VISIBLE_DEVICES=0 python3 -m mltriage.probe --refresh | head -3; echo "rc=${PIPESTATUS[0]}"
  python3 -m mltriage.probe --refresh --devices 1,0 --no-bandwidth --sizes 3,1M | head -8
  echo "== tests"
  python3 -m pytest tests/probe -q -p no:cacheprovider 2>&1 | tail -2
} > $OUT/log.txt 2>&1
cat $OUT/log.txt
