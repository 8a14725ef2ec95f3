#!/usr/bin/env bash
# Serve the model on two GPUs of this node.
set -euo pipefail
export VLLM_LOGGING_LEVEL=INFO
vllm serve Qwen/Qwen2.5-7B-Instruct \
  --tensor-parallel-size 2 \
  --max-model-len 8192 \
  --port 8000 2>&1 | tee vllm.log
