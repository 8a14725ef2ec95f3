"""Engine benchmarks for issue 2's goals; prints numbers, asserts nothing.

    python bench/bench_engine.py [--size-gb 1.0] [--keep]

1. a real 5,000-line Python traceback (made by running a chain of 1,700 distinct functions)
   diagnosed in-process (goal < 50 ms);
2. `mltriage diagnose` of a small log as a fresh process, start-up included (goal < 300 ms);
3. a ~1 GB multi-rank log built from recorded real logs (zoo healthy run + a real failure),
   diagnosed on one core (goal >= 200 MB/s, peak RSS < 300 MB), and `grep -E` with the same
   trigger words over the same file as the reference.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from mltriage.engine import diagnose_text  # noqa: E402
from mltriage.library import load_library  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
# the same runs without the error catalogue (its data dir pointed elsewhere), for the comparison
CATALOGUE_SETTINGS = {"catalogue on": ENV, "catalogue off": {**ENV, "MLTRIAGE_CATALOGUE": "/nonexistent"}}


def deep_traceback(depth: int = 1700) -> str:
    code = "\n".join(f"def f{i}():\n    return f{i + 1}()" for i in range(depth))
    code = "import sys\nsys.setrecursionlimit(100_000)\nsys.tracebacklimit = 100_000\n" + code
    code += f"\ndef f{depth}():\n    raise ValueError('bottom of a {depth}-deep stack')\nf0()\n"
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(code)
    proc = subprocess.run([sys.executable, "-X", "frozen_modules=off", fh.name], capture_output=True, text=True)
    os.unlink(fh.name)
    return proc.stderr


def bench_traceback() -> dict:
    text = deep_traceback()
    lines = text.count("\n")
    load_library()
    diagnose_text(text)  # warm (regex compilation happens once per process)
    times = []
    for _ in range(20):
        t = time.perf_counter()
        d = diagnose_text(text)
        times.append(time.perf_counter() - t)
    top = d.findings[0]
    return {
        "lines": lines,
        "median_ms": round(statistics.median(times) * 1000, 1),
        "max_ms": round(max(times) * 1000, 1),
        "finding": top.signature,
        "block": list(top.lines),
    }


def bench_fresh_process(log: Path, env: dict = ENV) -> dict:
    cmd = [sys.executable, "-m", "mltriage", "diagnose", str(log)]
    subprocess.run(cmd, capture_output=True, env=env)  # warm the library cache once
    times = []
    for _ in range(15):
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env)
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], capture_output=True)
    bare = time.perf_counter() - t
    return {"log": str(log.relative_to(ROOT)), "median_ms": round(statistics.median(times) * 1000), "p90_ms": round(sorted(times)[int(len(times) * 0.9)] * 1000), "python_startup_ms": round(bare * 1000)}


def build_big_log(path: Path, size_bytes: int) -> None:
    """Interleaved 8-rank log from the recorded healthy torchrun run and NCCL INFO output, with a
    recorded real failure (zoo/cpu/python_exception) at the end."""
    healthy = []
    for src in sorted((ROOT / "corpus" / "healthy").rglob("*.log")):
        healthy.extend(src.read_bytes().splitlines(keepends=True))
    healthy = [l for l in healthy if l.strip()] or [b"step 1 loss 0.5\n"]
    failure = (ROOT / "zoo" / "cpu" / "python_exception" / "console.log").read_bytes()
    chunk = b"".join(healthy)
    with open(path, "wb") as fh:
        written = 0
        rank = 0
        while written < size_bytes - len(failure):
            block = re.sub(rb"(?m)^", b"[default%d]:" % rank, chunk)
            fh.write(block)
            written += len(block)
            rank = (rank + 1) % 8
        fh.write(failure)


def bench_big(size_gb: float, keep: bool, env: dict = ENV) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="mltriage-bench-"))
    log = tmp / "multi-rank.log"
    t = time.perf_counter()
    build_big_log(log, int(size_gb * 1024**3))
    size = log.stat().st_size
    built = time.perf_counter() - t
    runner = (
        "import resource, sys, time, json\n"
        "from mltriage.engine import diagnose_path\n"
        "t = time.perf_counter(); d = diagnose_path(sys.argv[1]); dt = time.perf_counter() - t\n"
        "print(json.dumps({'seconds': dt, 'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,"
        " 'status': d.status, 'initiating_rank': d.initiating_rank, 'top': d.findings[0].signature if d.findings else None,"
        " 'lines': d.lines_read, 'backend': __import__('mltriage.engine.prefilter_budget', fromlist=['x']).prefilter_for(__import__('mltriage.library', fromlist=['x']).load_library()).backend}))\n"
    )
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    out = subprocess.run([*pin, sys.executable, "-c", runner, str(log)], capture_output=True, text=True, env=env)
    result = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {"error": out.stderr[-2000:]}
    # grep -E with the same trigger words, on the same file, same core
    triggers = list(load_library().trigger_index) + ["Traceback (most recent call last)"]
    pattern_file = tmp / "triggers.txt"
    pattern_file.write_text("\n".join(re.escape(t) for t in triggers) + "\n")
    t = time.perf_counter()
    grep = subprocess.run([*pin, "grep", "-E", "-c", "-f", str(pattern_file), str(log)], capture_output=True, text=True)
    grep_s = time.perf_counter() - t
    if not keep:
        shutil.rmtree(tmp)
    mb = size / 1e6
    result.update(
        {
            "size_mb": round(mb),
            "build_s": round(built, 1),
            "mb_per_s": round(mb / result["seconds"]) if "seconds" in result else None,
            "grep_E_seconds": round(grep_s, 2),
            "grep_E_mb_per_s": round(mb / grep_s),
            "grep_matching_lines": int(grep.stdout.strip() or 0),
            "triggers": len(triggers),
        }
    )
    result["seconds"] = round(result.get("seconds", 0), 2)
    result["rss_mb"] = round(result.get("rss_mb", 0))
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    print("5,000-line traceback, in-process:", json.dumps(bench_traceback()))
    for name, env in CATALOGUE_SETTINGS.items():
        example = ROOT / "examples" / "torchrun-rank2-indexerror.log"
        print(f"small log, fresh process, {name}:", json.dumps(bench_fresh_process(example, env)))
    for name, env in CATALOGUE_SETTINGS.items():
        print(f"{args.size_gb} GB multi-rank log, one core, {name}:", json.dumps(bench_big(args.size_gb, args.keep, env)))


if __name__ == "__main__":
    main()
