"""Reference for the probe's P2P number: a plain large torch copy between two GPUs.

Run on the GPU machine: ``python3 bench/probe/reference_copy.py [SRC DST]``. Prints JSON with
the GB/s of ``dst.copy_(src)`` (cudaMemcpyAsync peer-to-peer) for 1 GiB buffers, timed with
CUDA events over 20 copies after a warm-up, and whether the copy was byte-exact.
"""

import json
import sys

import torch


def main() -> None:
    s, d = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (0, 1)
    out = {"src": s, "dst": d, "can_access_peer": torch.cuda.can_device_access_peer(s, d)}
    for nbytes in (256 << 20, 1 << 30):
        src = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, device=f"cuda:{s}")
        dst = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{d}")
        dst.copy_(src)
        torch.cuda.synchronize(s)
        torch.cuda.synchronize(d)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.device(s):
            start.record()
            for _ in range(20):
                dst.copy_(src)
            stop.record()
        torch.cuda.synchronize(s)
        torch.cuda.synchronize(d)
        ms = start.elapsed_time(stop) / 20
        out[f"gbps_{nbytes >> 20}MiB"] = round(nbytes / (ms / 1e3) / 1e9, 2)
        out[f"exact_{nbytes >> 20}MiB"] = bool(torch.equal(dst.to(f"cuda:{s}"), src))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
