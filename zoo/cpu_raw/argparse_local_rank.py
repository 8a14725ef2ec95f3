"""A script written for the old launcher: it accepts only --local_rank, while torch.distributed.launch
in PyTorch >= 2.0 passes --local-rank=N, so every worker's argparse rejects its command line."""
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
parser.parse_args()
