"""Issue 13's long fuzz run: millions of assembled, damaged and random logs through the engine in-process.

Inputs come from ``tests/fuzz_inputs.py`` (the same pieces as the suite's hypothesis targets),
seeded per worker so a run can be repeated. For every input the engine must return a diagnosis
whose JSON, SARIF and text renderings work, or refuse it with ``InputError``; anything else is a
crash, and the input is saved under bench/out/fuzz/. Prints counts and the slowest input's time;
asserts nothing.

    python bench/fuzz/fuzz_engine.py [--inputs 1000000] [--workers N] [--minutes 15] [--seed 13]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import os
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "bench" / "out" / "fuzz"


def work(args: tuple[int, int, float]) -> dict:
    worker, count, deadline = args
    from fuzz_inputs import random_input
    from mltriage.engine import InputError, diagnose_bytes
    from mltriage.render import render_sarif, render_text

    rng = random.Random(f"{SEED}/{worker}")
    done = refused = crashes = 0
    slowest, slowest_input, size = 0.0, b"", 0
    while done < count and time.time() < deadline:
        data = random_input(rng)
        size += len(data)
        started = time.perf_counter()
        try:
            d = diagnose_bytes(data)
            json.dumps(d.to_json())
            json.dumps(render_sarif(d))
            render_text(d)
        except InputError:
            refused += 1
        except Exception:  # a crash: keep the input and the traceback
            crashes += 1
            OUT.mkdir(parents=True, exist_ok=True)
            name = hashlib.sha256(data).hexdigest()[:16]
            (OUT / f"crash-{name}.bin").write_bytes(data)
            (OUT / f"crash-{name}.txt").write_text(traceback.format_exc())
        elapsed = time.perf_counter() - started
        if elapsed > slowest:
            slowest, slowest_input = elapsed, data
        done += 1
    return {"done": done, "refused": refused, "crashes": crashes, "slowest": slowest, "slowest_input": slowest_input, "bytes": size}


SEED = 13


def main() -> None:
    global SEED
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--minutes", type=float, default=15.0, help="stop early after this long (the count says how many ran)")
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    SEED = args.seed
    deadline = time.time() + args.minutes * 60
    per_worker = -(-args.inputs // args.workers)
    started = time.perf_counter()
    with mp.get_context("fork").Pool(args.workers) as pool:
        results = pool.map(work, [(w, per_worker, deadline) for w in range(args.workers)])
    wall = time.perf_counter() - started
    total = sum(r["done"] for r in results)
    slow = max(results, key=lambda r: r["slowest"])
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "slowest.bin").write_bytes(slow["slowest_input"])
    over_1s = sum(1 for r in results if r["slowest"] > 1.0)
    print(json.dumps({
        "inputs": total, "refused_as_input_errors": sum(r["refused"] for r in results),
        "crashes": sum(r["crashes"] for r in results), "workers": args.workers, "seed": args.seed,
        "wall_s": round(wall, 1), "inputs_per_s": round(total / wall), "mb_total": round(sum(r["bytes"] for r in results) / 1e6),
        "slowest_input_s": round(slow["slowest"], 3), "slowest_input_bytes": len(slow["slowest_input"]),
        "workers_with_an_input_over_1s": over_1s,
    }, indent=1))


if __name__ == "__main__":
    main()
