"""Issue 5's scale goal: triage a 1,024-rank job, 50,000 lines per rank, from a directory of
per-rank files, on this 2-core machine with bounded memory. Prints numbers, asserts nothing, but
checks itself: it says whether the culprit rank was named the initiator and whether its own error
(the IndexError) is among the findings (issue 13 item 13: a global hit cap once dropped it).

    python bench/bench_triage.py [--ranks 1024] [--lines 50000] [--culprit 517] [--keep]

The files are synthesised from recorded real logs: healthy per-rank training and NCCL INFO output
(corpus/healthy) fill each rank; the culprit rank ends with the real IndexError traceback of
zoo/cpu/python_exception (rank 2) and every other rank with the real gloo "Connection closed by
peer" traceback that rank 1 printed in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "server")}


def _rank_file(zoo_rank: int, name: str) -> bytes:
    (path,) = (ROOT / "zoo" / "cpu" / "python_exception" / "logdir").glob(f"*/attempt_0/{zoo_rank}/{name}")
    return path.read_bytes()


def _healthy_lines() -> list[bytes]:
    lines: list[bytes] = []
    for src in sorted((ROOT / "corpus" / "healthy").rglob("*.log")):
        for line in src.read_bytes().splitlines(keepends=True):
            if line.strip():
                lines.append(line.split(b"]:", 1)[-1] if line.startswith(b"[default") else line)
    return lines


def build(job: Path, ranks: int, lines: int, culprit: int) -> int:
    healthy = _healthy_lines()
    reps, rest = divmod(lines, len(healthy))
    body = b"".join(healthy) * reps + b"".join(healthy[:rest])
    failing = _rank_file(2, "stderr.log").replace(b"[rank2]", b"[rank%d]" % culprit)
    total = 0
    for r in range(ranks):
        tail = failing if r == culprit else _rank_file(1, "stderr.log").replace(b"[rank1]", b"[rank%d]" % r)
        data = body + tail
        (job / f"rank_{r:04d}.log").write_bytes(data)
        total += len(data)
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--lines", type=int, default=50_000)
    ap.add_argument("--culprit", type=int, default=517)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    job = Path(tempfile.mkdtemp(prefix="mltriage-1024-"))
    t = time.perf_counter()
    size = build(job, args.ranks, args.lines, args.culprit)
    built = time.perf_counter() - t
    runner = (
        "import json, resource, sys, time\n"
        "from mltriage.engine import diagnose_path\n"
        "t = time.perf_counter(); d = diagnose_path(sys.argv[1]); dt = time.perf_counter() - t\n"
        "roles = {}\n"
        "for r in d.ranks: roles[r.role] = roles.get(r.role, 0) + 1\n"
        "print(json.dumps({'seconds': round(dt, 2), 'peak_rss_mb': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),"
        " 'initiating_rank': d.initiating_rank, 'roles': roles, 'lines': d.lines_read, 'findings': len(d.findings),"
        " 'explanation': d.explanation[:300], 'warnings': d.warnings,"
        " 'culprit_errors': sorted({f.signature for f in d.findings if f.rank == int(sys.argv[2]) and f.is_error})}))\n"
    )
    out = subprocess.run([sys.executable, "-c", runner, str(job), str(args.culprit)], capture_output=True, text=True, env=ENV)
    if not args.keep:
        shutil.rmtree(job)
    result = json.loads(out.stdout) if out.returncode == 0 else {"error": out.stderr[-3000:]}
    result.update({"ranks": args.ranks, "lines_per_rank": args.lines, "culprit": args.culprit, "size_mb": round(size / 1e6), "build_s": round(built, 1)})
    if "seconds" in result:
        result["mb_per_s"] = round(size / 1e6 / result["seconds"])
    print(json.dumps(result, indent=1))
    named = result.get("initiating_rank") == args.culprit
    own_error = "python-unhandled-exception" in result.get("culprit_errors", [])
    print(f"culprit rank {args.culprit}: {'FOUND' if named and own_error else 'NOT FOUND'} "
          f"(named initiator: {'yes' if named else 'no'}; its own IndexError among the findings: {'yes' if own_error else 'no'})")


if __name__ == "__main__":
    main()
