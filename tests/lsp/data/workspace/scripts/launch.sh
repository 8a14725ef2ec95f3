#!/usr/bin/env bash
# Single-node run.
export OMP_NUM_THREADS=1
torchrun --standalone --nproc-per-node 4 train.py "$@"
