#!/bin/bash
# One device call (nvidia-h200-x2): real Xid lines in dmesg after a wild-pointer kernel, the real
# probe joined to a diagnosis (`mltriage diagnose --probe`), and the probe run through the real
# language server over stdio. Run from the repository root with the wheels of .whl installed.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:server MLTRIAGE_CACHE_DIR=/tmp/mltcache
{
  date -u; uname -r; nvidia-smi -L
  echo "== dmesg before"; dmesg 2>&1 | grep -ciE "xid|nvrm" ; dmesg 2>&1 | tail -3
  echo "== illegal address kernel (cupy)"; timeout 120 python3 zoo/gpu/raw/illegal_address_cupy.py 2>&1 | tail -3
  sleep 2
  echo "== dmesg NVRM/Xid after"; dmesg 2>&1 | grep -iE "xid|nvrm" | tail -20
  dmesg 2>&1 | grep -iE "xid|nvrm" > $OUT/dmesg-xid.txt
  echo "== diagnose --probe (real probe)"
  printf '%s\n' "$(python3 - <<'PY'
import tomllib
print(tomllib.load(open('signatures/nccl/nccl-p2p-peer-access-unsupported.toml','rb'))['samples']['positive'][0]['text'])
PY
)" > /tmp/p2p.log
  /usr/bin/time -f "wall %e s" python3 -m mltriage diagnose /tmp/p2p.log --probe --json > $OUT/diagnose-probe.json; echo "rc=$?"
  python3 -c "import json; d=json.load(open('$OUT/diagnose-probe.json')); f=[x for x in d['findings'] if x['p2p_related']][0]; print(d['probe']['machine_verdict'], f['confidence'], f['notes'])"
  echo "== LSP runProbe over stdio"
  timeout 300 python3 bench/gpu-checks/lsp_probe_client.py > $OUT/lsp-run-probe.json; echo "rc=$?"
  python3 -c "import json; d=json.load(open('$OUT/lsp-run-probe.json')); r=d['answer'].get('result') or {}; print(d['wall_s'], r.get('machine_verdict'), [p.get('verdict') for p in r.get('pairs', [])], d['answer'].get('error'))"
} > $OUT/log.txt 2>&1
cat $OUT/log.txt
