"""Check the probe's "verify" advice for real: an NCCL all-reduce whose channels NCCL_DEBUG prints.

``NCCL_DEBUG=INFO torchrun --nproc_per_node=2 bench/probe/nccl_verify.py 2>&1 | grep -E 'via (P2P|SHM)'``
"""

import os

import torch
import torch.distributed as dist


def main() -> None:
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    x = torch.full((1 << 20,), float(rank + 1), device="cuda")
    dist.all_reduce(x)
    expected = sum(range(1, dist.get_world_size() + 1))
    print(f"rank {rank}: all_reduce {'correct' if bool((x == expected).all()) else 'WRONG'}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
