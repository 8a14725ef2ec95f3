#!/usr/bin/env bash
# Records the GPU half of the zoo and corpus on the nvidia-h200-x2 device machine.
#   bash zoo/gpu/run_all.sh quick|full|extra     (from the repo root; $OUT is where results go back)
# Every output lands at its final repo path (zoo/gpu/<scenario>/, corpus/gpu/, corpus/healthy/...),
# then all of it is packed into $OUT/gpu.tar.gz (the device returns at most 8 files) + $OUT/summary.txt.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
MODE=${1:-full}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
TR=torchrun
command -v torchrun >/dev/null || TR="python3 -m torch.distributed.run"
RESULTS=()

# rec STEM TIMEOUT_S 'COMMAND': run COMMAND (env prefixes allowed) -> STEM.log; the command and exit go to STEM.cmd
rec() {
  local stem=$1 t=$2 cmd=$3 s rc ms
  mkdir -p "$(dirname "$stem")"
  s=$(date +%s%N)
  timeout -k 5 "$t" bash -c "$cmd" > "$stem.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - s) / 1000000 ))
  printf '%s\n# exit_code=%s wall_s=%d.%03d host=nvidia-h200-x2 torch=%s\n' "$cmd" "$rc" $((ms / 1000)) $((ms % 1000)) "$TORCH_VER" > "$stem.cmd"
  echo "$stem rc=$rc wall_ms=$ms" >> "$SUMMARY"
}

# zoo NAME TIMEOUT_S SCRIPT [ENV]: a 2-rank torchrun job -> zoo/gpu/NAME/{console.log,console.cmd,logdir/}
zoo() {
  local name=$1 t=$2 script=$3 envs=${4:-} d=zoo/gpu/$1
  rm -rf "$d"; mkdir -p "$d/fr"
  rec "$d/console" "$t" "${envs:+$envs }$TR --standalone --nproc-per-node 2 --tee 3 --log-dir $d/logdir zoo/gpu/scenarios/$script.py"
  if ls "$d"/fr/nccl_trace_rank_* >/dev/null 2>&1; then
    rec "$d/fr_trace" 60 "python3 -m torch.distributed.flight_recorder.fr_trace $d/fr -p nccl_trace_rank_"
  else
    rmdir "$d/fr"
  fi
}

FR="TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1"

# extras: added after the first full run (aligned wild pointer, far-apart mismatch sizes, DETAIL on NCCL)
extras() {
  (
    rec corpus/gpu/illegal_address_cupy 60 "python3 zoo/gpu/raw/illegal_address_cupy.py"
    rec corpus/gpu/illegal_address_torch 60 "python3 zoo/gpu/raw/illegal_address_torch.py"
    rec corpus/gpu/illegal_address_torch_blocking 60 "CUDA_LAUNCH_BLOCKING=1 python3 zoo/gpu/raw/illegal_address_torch.py"
    rec corpus/gpu/compute_sanitizer_illegal_write 90 "compute-sanitizer --tool memcheck python3 zoo/gpu/raw/illegal_address_cupy.py"
  ) & local L=$!
  zoo nccl_mismatch_protocol 150 nccl_mismatch "ZOO_MISMATCH_NUMEL=1024,268435456" & local A=$!
  zoo nccl_mismatch_protocol_fr 150 nccl_mismatch "ZOO_MISMATCH_NUMEL=1024,268435456 $FR TORCH_NCCL_DEBUG_INFO_TEMP_FILE=zoo/gpu/nccl_mismatch_protocol_fr/fr/nccl_trace_rank_" & local B=$!
  zoo nccl_mismatch_detail 150 nccl_mismatch "TORCH_DISTRIBUTED_DEBUG=DETAIL" & local C=$!
  wait $L $A $B $C
  RESULTS+=(zoo/gpu/nccl_mismatch_protocol zoo/gpu/nccl_mismatch_protocol_fr zoo/gpu/nccl_mismatch_detail)
}
T0=$(date +%s)
TORCH_VER=$(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)
echo "mode=$MODE torch=$TORCH_VER torchrun='$TR' start=$(date -u +%FT%TZ)" > "$SUMMARY"
mkdir -p corpus/gpu corpus/healthy/nvidia-smi-h200x2
RESULTS+=(corpus/gpu corpus/healthy/nvidia-smi-h200x2)

if [ "$MODE" = extra ]; then
  RESULTS=(corpus/gpu)
  extras
  echo "total_s=$(( $(date +%s) - T0 )) end=$(date -u +%FT%TZ)" >> "$SUMMARY"
  tar czf "$OUT/gpu.tar.gz" "${RESULTS[@]}"
  cat "$SUMMARY"
  exit 0
fi

H=corpus/healthy/nvidia-smi-h200x2
rec $H/nvidia-smi 30 "nvidia-smi"
rec $H/nvidia-smi-topo-m 30 "nvidia-smi topo -m"
rec corpus/gpu/peer_access 60 "python3 zoo/gpu/raw/peer_access.py"
rec corpus/gpu/device_assert_index 60 "python3 zoo/gpu/raw/device_assert_index.py"
rm -rf corpus/healthy/nccl-info-h200x2; mkdir -p corpus/healthy/nccl-info-h200x2
RESULTS+=(corpus/healthy/nccl-info-h200x2)
rec corpus/healthy/nccl-info-h200x2/console 90 "NCCL_DEBUG=INFO $TR --standalone --nproc-per-node 2 --tee 3 --log-dir corpus/healthy/nccl-info-h200x2/logdir zoo/gpu/scenarios/nccl_healthy.py"

if [ "$MODE" = full ]; then
  rec $H/nvidia-smi-nvlink-s 30 "nvidia-smi nvlink -s"
  rec $H/nvidia-smi-q 30 "nvidia-smi -q"
  # OOM alone, so the allocator's numbers are not mixed with other processes
  rec corpus/gpu/cuda_oom 60 "python3 zoo/gpu/raw/cuda_oom.py"
  # lane 2: single-process CUDA errors, alongside the torchrun jobs (which use little memory)
  (
    rec corpus/gpu/device_assert_index_blocking 60 "CUDA_LAUNCH_BLOCKING=1 python3 zoo/gpu/raw/device_assert_index.py"
    rec corpus/gpu/device_assert_embedding 60 "python3 zoo/gpu/raw/device_assert_embedding.py"
    rec corpus/gpu/misaligned_address_cupy 60 "python3 zoo/gpu/raw/misaligned_address_cupy.py"
    rec corpus/gpu/misaligned_address_torch 60 "python3 zoo/gpu/raw/misaligned_address_torch.py"
    rec corpus/gpu/misaligned_address_torch_blocking 60 "CUDA_LAUNCH_BLOCKING=1 python3 zoo/gpu/raw/misaligned_address_torch.py"
    rec corpus/gpu/invalid_ordinal 60 "python3 zoo/gpu/raw/invalid_ordinal.py"
    rec corpus/gpu/no_gpu 60 "CUDA_VISIBLE_DEVICES= python3 zoo/gpu/raw/no_gpu.py"
    rec corpus/gpu/no_gpu_nccl 90 "CUDA_VISIBLE_DEVICES= $TR --standalone --nproc-per-node 2 --tee 3 zoo/gpu/raw/no_gpu_nccl.py"
    rec corpus/gpu/compute_sanitizer_misaligned_write 90 "compute-sanitizer --tool memcheck python3 zoo/gpu/raw/misaligned_address_cupy.py"
  ) &
  LANE2=$!
  # lane 1: NCCL jobs over both GPUs
  rec corpus/gpu/nccl_version 90 "NCCL_DEBUG=VERSION $TR --standalone --nproc-per-node 2 --tee 3 zoo/gpu/raw/nccl_allreduce.py"
  zoo nccl_oom 100 nccl_oom
  # each hang pair runs side by side: both are mostly waiting for their 20 s watchdog
  zoo nccl_stuck 120 nccl_stuck & A=$!
  zoo nccl_stuck_fr 120 nccl_stuck "$FR TORCH_NCCL_DEBUG_INFO_TEMP_FILE=zoo/gpu/nccl_stuck_fr/fr/nccl_trace_rank_" & B=$!
  wait $A $B
  zoo nccl_mismatch 120 nccl_mismatch & A=$!
  zoo nccl_mismatch_fr 120 nccl_mismatch "$FR TORCH_NCCL_DEBUG_INFO_TEMP_FILE=zoo/gpu/nccl_mismatch_fr/fr/nccl_trace_rank_" & B=$!
  rec corpus/gpu/nccl_socket_ifname 90 "NCCL_SOCKET_IFNAME=doesnotexist NCCL_DEBUG=WARN $TR --standalone --nproc-per-node 2 --tee 3 zoo/gpu/raw/nccl_allreduce.py"
  rec corpus/gpu/nccl_p2p_disable 90 "NCCL_P2P_DISABLE=1 NCCL_DEBUG=INFO $TR --standalone --nproc-per-node 2 --tee 3 zoo/gpu/raw/nccl_allreduce.py"
  rec corpus/gpu/nccl_p2p_shm_disable 90 "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_DEBUG=INFO $TR --standalone --nproc-per-node 2 --tee 3 zoo/gpu/raw/nccl_allreduce.py"
  rec corpus/gpu/set_device_local_rank 90 "$TR --standalone --nproc-per-node 4 --tee 3 zoo/gpu/raw/set_device_local_rank.py"
  wait $A $B $LANE2
  extras
  RESULTS+=(zoo/gpu/nccl_oom zoo/gpu/nccl_stuck zoo/gpu/nccl_stuck_fr zoo/gpu/nccl_mismatch zoo/gpu/nccl_mismatch_fr)
fi

echo "total_s=$(( $(date +%s) - T0 )) end=$(date -u +%FT%TZ)" >> "$SUMMARY"
tar czf "$OUT/gpu.tar.gz" "${RESULTS[@]}"
ls -la "$OUT"
cat "$SUMMARY"
