"""Run every GPU backend's real benchmark and latency loop (the loop shared in backends/base.py) on
the GPUs this machine has, and print seconds and GB/s per backend and path.

    python bench/probe/backend_loop_check.py [--mib 256] [--iters 20]

With one GPU the direction is 0 -> 0 (the copy paths and the loop run for real; peer pairs need two
GPUs); with two or more, 0 -> 1 and both ways."""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from mltriage.probe.backends import ORDER, NoRuntime, _make  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    nbytes = a.mib * 1024 * 1024
    out = {}
    for name in ORDER:
        try:
            be = _make(name)
        except (NoRuntime, Exception) as exc:  # a runtime that is not installed here
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        n = be.device_count()
        pairs = [(0, 1)] if n >= 2 else [(0, 0)]
        if n >= 2:
            be.enable_peer(0, 1)
        row = {"devices": n}
        for path in ("p2p", "host"):
            be.bench(path, pairs, nbytes, 1)  # warm-up
            secs = be.bench(path, pairs, nbytes, a.iters)
            row[f"{path}_gbps_one_way"] = round(nbytes / secs / 1e9, 1)
            if n >= 2:
                secs2 = be.bench(path, [(0, 1), (1, 0)], nbytes, a.iters)
                row[f"{path}_gbps_both_ways"] = round(2 * nbytes / secs2 / 1e9, 1)
            row[f"{path}_latency_us"] = round(be.latency(path, *pairs[0], 200) * 1e6, 2)
        be.close()
        out[name] = row
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
