"""Throughput on real logs (issue 20 item 3), each beside its comparator in the same run.

    python bench/bench_real_logs.py [--real-mb 200] [--ranks-mb 256] [--profile] [--keep] [--field DIR] [--tree TREE]

Two inputs, written to /tmp and removed after (the field cases are measurement-only: repeated into
the bench input, never committed):

1. **real, varied**: every log of corpus/ and examples/ and every field case's log
   (../shared/field/cases/*.json, "log"; ``--field``: another copy of that folder), concatenated in turn, repeated to ``--real-mb``. Varied
   lines defeat the caches a synthetic repeated log enjoys; most lines of a failure log are near a
   trigger phrase.
2. **8 ranks interleaved**: bench/bench_engine.py's log (recorded healthy torchrun + NCCL INFO
   output under 8 rank prefixes, a recorded rank-2 failure at the end), ``--ranks-mb`` of it.

Each is diagnosed by a fresh ``python -m mltriage diagnose --json`` and scanned by
``grep -c -F -f LITERALS`` with the pre-filter's own literals (every signature trigger and the
scanner's markers), both on one core; CPU time (user + sys of the child) is compared. Bars:
>= 100 MB per CPU-second on both, and CPU time <= 1/1.5 of grep's (1.5x faster). The answers are
asserted: the 8-rank log names rank 2 and its IndexError; the real-log file is a failure whose root
cause is the one the same text gives once (``--profile``: cProfile of the in-process diagnosis, top
25 by own time). ``--tree``: diagnose with another source tree (e.g. a worktree of main) for a before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIELD = ROOT.parent / "shared" / "field" / "cases"
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "bench"))

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
MB_PER_CPU_S_BAR = 100
GREP_RATIO_BAR = 1.5
PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []


def real_texts(field: Path = FIELD) -> list[bytes]:
    texts = [p.read_bytes() for d in ("corpus", "examples") for p in sorted((ROOT / d).rglob("*"))
             if p.is_file() and p.suffix not in (".json", ".md", ".gz", ".zst", ".pickle", ".pkl")]
    for case in sorted(field.glob("*.json")) if field.is_dir() else []:
        log = json.loads(case.read_text()).get("log")
        if log:
            texts.append(log.encode())
    return [t if t.endswith(b"\n") else t + b"\n" for t in texts if t.strip()]


def build_real(path: Path, size: int, field: Path = FIELD) -> bytes:
    one = b"".join(real_texts(field))
    with open(path, "wb") as fh:
        written = 0
        while written < size:
            fh.write(one)
            written += len(one)
    return one


def _cpu_of(cmd: list[str], **kw) -> tuple[subprocess.CompletedProcess, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([*PIN, *cmd], capture_output=True, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def literals_file(tmp: Path) -> Path:
    from mltriage.engine.prefilter_budget import prefilter_for
    from mltriage.library import load_library

    path = tmp / "literals.txt"
    path.write_bytes(b"\n".join(prefilter_for(load_library()).literals) + b"\n")
    return path


def measure(log: Path, literals: Path) -> dict:
    size = log.stat().st_size
    diag, cpu = _cpu_of([sys.executable, "-m", "mltriage", "diagnose", "--json", str(log)], env=ENV)
    if diag.returncode not in (0, 1):
        raise SystemExit(f"mltriage failed on {log}: {diag.stderr.decode()[-2000:]}")
    grep_cpu = min(_cpu_of(["grep", "-c", "-F", "-f", str(literals), str(log)])[1] for _ in range(2))
    return {"size_mb": round(size / 1e6), "cpu_s": round(cpu, 2), "mb_per_cpu_s": round(size / 1e6 / cpu, 1),
            "grep_cpu_s": round(grep_cpu, 2), "grep_mb_per_cpu_s": round(size / 1e6 / max(grep_cpu, 1e-3), 1),
            "faster_than_grep": round(grep_cpu / cpu, 2), "doc": json.loads(diag.stdout)}


def root_cause(doc: dict) -> str | None:
    i = doc.get("root_cause_index")
    return doc["findings"][i]["signature"] if i is not None else None


def profile(log: Path) -> None:
    import cProfile
    import pstats

    from mltriage.engine import diagnose_path

    pr = cProfile.Profile()
    pr.enable()
    diagnose_path(log)
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--real-mb", type=float, default=200)
    ap.add_argument("--ranks-mb", type=float, default=256)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--field", type=Path, default=FIELD)
    ap.add_argument("--tree", type=Path, default=ROOT)
    args = ap.parse_args()
    ENV["PYTHONPATH"] = str(args.tree.resolve() / "server")
    from bench_engine import build_big_log

    tmp = Path(tempfile.mkdtemp(prefix="mltriage-real-logs-"))
    ok = True
    try:
        literals = literals_file(tmp)
        real = tmp / "real-varied.log"
        one = build_real(real, int(args.real_mb * 1e6), args.field)
        (tmp / "once.log").write_bytes(one)
        once = json.loads(subprocess.run([sys.executable, "-m", "mltriage", "diagnose", "--json", str(tmp / "once.log")],
                                         capture_output=True, env=ENV).stdout)
        ranks = tmp / "eight-ranks.log"
        build_big_log(ranks, int(args.ranks_mb * 2**20))
        for name, log in (("real, varied", real), ("8 ranks interleaved", ranks)):
            r = measure(log, literals)
            doc = r.pop("doc")
            if log is real:
                answer = root_cause(doc) == root_cause(once) and doc["status"] == "failure"
                said = f"root cause {root_cause(doc)} (once: {root_cause(once)})"
            else:
                top = doc["findings"][doc["root_cause_index"]] if doc.get("root_cause_index") is not None else {}
                answer = doc.get("initiating_rank") == 2 and top.get("facts", {}).get("exception_type") == "IndexError"
                said = f"initiating rank {doc.get('initiating_rank')}, {top.get('signature')}"
            bars = r["mb_per_cpu_s"] >= MB_PER_CPU_S_BAR and r["faster_than_grep"] >= GREP_RATIO_BAR
            ok &= answer and bars
            print(f"{name}: {r['size_mb']:,} MB, mltriage {r['cpu_s']} CPU-s = {r['mb_per_cpu_s']} MB/CPU-s; "
                  f"grep -c -F -f ({len(literals.read_bytes().splitlines())} literals) {r['grep_cpu_s']} CPU-s = "
                  f"{r['grep_mb_per_cpu_s']} MB/CPU-s; {r['faster_than_grep']}x grep's speed "
                  f"(bars: >= {MB_PER_CPU_S_BAR} MB/CPU-s, >= {GREP_RATIO_BAR}x: {'met' if bars else 'missed'}); "
                  f"answer: {said}: {'right' if answer else 'WRONG'}")
            if args.profile:
                profile(log)
    finally:
        if args.keep:
            print(f"inputs kept in {tmp}")
        else:
            shutil.rmtree(tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
