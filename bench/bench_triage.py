"""Triage at scale: a job of many per-rank log files, one culprit among them. Asserts the answer
(the culprit named the initiator, its own IndexError the root cause, every other rank collateral
with its own gloo error) and prints the cost against `grep -rcF ERROR` over the same files, measured
in the same run: CPU seconds of each process (the machine may be shared), so the ratio is per byte.

    python bench/bench_triage.py [--scenario NAME ...] [--lines N] [--seed S] [--profile] [--keep]
    python bench/bench_triage.py --ranks 1024 --lines 50000 --culprit 517

Scenarios (issue 20 item 6; `--lines` overrides their lines per rank):
  1024-middle   1,024 ranks x 50,000 lines, culprit 517 (this script's former default)
  1100-last     1,100 ranks x 50,000 lines, culprit 1,099 (past the old MAX_HITS cliff at rank ~1,052)
  4096-random   4,096 ranks x 50,000 lines (~15 GB), culprit at a seeded random rank; bar: < 2x grep per byte
  8192-random   8,192 ranks x 6,000 lines (~3.5 GB), culprit at a seeded random rank

The files are written under /tmp (removed afterwards unless --keep), synthesised from recorded real
logs: healthy per-rank training and NCCL INFO output (corpus/healthy) fill each rank; the culprit
rank ends with the real IndexError traceback of zoo/cpu/python_exception (rank 2) and every other
rank with the real gloo "Connection closed by peer" traceback that rank 1 printed in the same run.
`--profile` adds the top costs (cProfile, by own time) of diagnosing the job's first 64 rank files.
Exit status 1 when an answer is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
SCENARIOS = {
    "1024-middle": {"ranks": 1024, "lines": 50_000, "culprit": 517},
    "1100-last": {"ranks": 1100, "lines": 50_000, "culprit": "last"},
    "4096-random": {"ranks": 4096, "lines": 50_000, "culprit": "random", "bar": 2.0},
    "8192-random": {"ranks": 8192, "lines": 6_000, "culprit": "random"},
}
PROFILED_RANKS = 64

RUNNER = r"""
import json, resource, sys, time
from mltriage.engine import diagnose_path
culprit = int(sys.argv[2])
t = time.perf_counter(); d = diagnose_path(sys.argv[1]); dt = time.perf_counter() - t
roles = {}
for r in d.ranks:
    roles[r.role] = roles.get(r.role, 0) + 1
root = d.root_cause
victims = {(r.role, r.first_error) for r in d.ranks if r.rank != culprit}
print(json.dumps({"seconds": round(dt, 2), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "initiating_rank": d.initiating_rank, "roles": roles, "ranks": len(d.ranks), "lines": d.lines_read,
                  "findings": len(d.findings), "warnings": d.warnings, "explanation": d.explanation[:300],
                  "root_cause": root and {"signature": root.signature, "rank": root.rank,
                                          "exception_type": root.facts.get("exception_type")},
                  "victims": sorted(map(list, victims))}))
"""

PROFILER = r"""
import cProfile, pstats, sys
from mltriage.engine import diagnose_path
diagnose_path(sys.argv[1])  # (warm: the library and its compiled pre-filter are cached on first use)
profile = cProfile.Profile()
profile.runcall(diagnose_path, sys.argv[1])
pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(12)
"""


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
    victim = _rank_file(1, "stderr.log")
    need = ranks * (len(body) + len(victim) + 16)
    if shutil.disk_usage(job).free < need * 1.1:
        raise SystemExit(f"{job}: {need / 1e9:.1f} GB needed, {shutil.disk_usage(job).free / 1e9:.1f} GB free")
    total = 0
    for r in range(ranks):
        tail = failing if r == culprit else victim.replace(b"[rank1]", b"[rank%d]" % r)
        with open(job / f"rank_{r:04d}.log", "wb") as fh:
            fh.write(body)
            fh.write(tail)
        total += len(body) + len(tail)
    return total


def _timed(cmd: list[str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """The command's result, its CPU seconds (user + system) and its wall seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def _check(result: dict, ranks: int, culprit: int) -> list[str]:
    wrong = []
    if result.get("initiating_rank") != culprit:
        wrong.append(f"initiator {result.get('initiating_rank')}, not the culprit {culprit}")
    if result.get("root_cause") != {"signature": "python-unhandled-exception", "rank": culprit, "exception_type": "IndexError"}:
        wrong.append(f"root cause {result.get('root_cause')}, not rank {culprit}'s IndexError")
    if result.get("ranks") != ranks:
        wrong.append(f"{result.get('ranks')} ranks in the answer, not {ranks}")
    if result.get("victims") != [["collateral", "torch-gloo-connection-closed"]]:
        wrong.append(f"the other ranks' roles and first errors: {result.get('victims')}")
    return wrong


def run(name: str, ranks: int, lines: int, culprit: int, bar: float | None, profile: bool, keep: bool) -> bool:
    job = Path(tempfile.mkdtemp(prefix=f"mltriage-{name}-", dir="/tmp"))
    try:
        t = time.perf_counter()
        size = build(job, ranks, lines, culprit)
        built = time.perf_counter() - t
        grep, grep_cpu, grep_wall = _timed(["grep", "-rcF", "ERROR", str(job)])  # (its output: a count per file)
        if grep.returncode not in (0, 1):
            raise SystemExit(f"grep failed: {grep.stderr[-500:]}")
        out, cpu, wall = _timed([sys.executable, "-c", RUNNER, str(job), str(culprit)])
        grep_again, grep_cpu_again, _ = _timed(["grep", "-rcF", "ERROR", str(job)])
        grep_cpu = min(grep_cpu, grep_cpu_again)  # (the first may have read the files from disk)
        result = json.loads(out.stdout) if out.returncode == 0 else {"error": out.stderr[-3000:]}
        wrong = _check(result, ranks, culprit) if "error" not in result else [result["error"]]
        result.update({"scenario": name, "ranks_in_job": ranks, "lines_per_rank": lines, "culprit": culprit,
                       "size_mb": round(size / 1e6), "build_s": round(built, 1), "cpu_s": round(cpu, 2),
                       "wall_s": round(wall, 2), "mb_per_cpu_s": round(size / 1e6 / cpu, 1),
                       "grep_cpu_s": round(grep_cpu, 3), "grep_wall_s": round(grep_wall, 2),
                       "grep_mb_per_cpu_s": round(size / 1e6 / max(grep_cpu, 1e-3)),
                       "ratio_to_grep": round(cpu / max(grep_cpu, 1e-3), 1)})
        print(json.dumps(result, indent=1))
        if profile:
            sample = job / "profiled"
            sample.mkdir()
            for r in range(min(ranks, PROFILED_RANKS)):
                (job / f"rank_{r:04d}.log").rename(sample / f"rank_{r:04d}.log")
            prof = subprocess.run([sys.executable, "-c", PROFILER, str(sample)], capture_output=True, text=True, env=ENV)
            print(f"profile of the first {min(ranks, PROFILED_RANKS)} rank files:\n" + (prof.stdout or prof.stderr)[-6000:])
        verdict = "RIGHT" if not wrong else "WRONG: " + "; ".join(wrong)
        speed = f"{result['ratio_to_grep']}x grep -rcF ERROR's CPU time on the same {result['size_mb']:,} MB"
        if bar is not None:
            speed += f" (bar: < {bar}x: {'met' if result['ratio_to_grep'] < bar else 'NOT met'})"
        print(f"{name}: answer {verdict}; {speed}")
        return not wrong
    finally:
        if keep:
            print(f"(kept {job})")
        else:
            shutil.rmtree(job, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", nargs="*", choices=sorted(SCENARIOS), help="default: all but 4096-random when --ranks is not given")
    ap.add_argument("--ranks", type=int, help="one job of this many ranks instead of the scenarios")
    ap.add_argument("--lines", type=int, help="lines per rank (overrides the scenarios')")
    ap.add_argument("--culprit", type=int, help="the culprit's rank (with --ranks; default: a seeded random one)")
    ap.add_argument("--seed", type=int, default=20, help="seeds the random culprit (default 20)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if args.ranks is not None:
        jobs = [("custom", {"ranks": args.ranks, "lines": args.lines or 50_000,
                            "culprit": "random" if args.culprit is None else args.culprit})]
    else:
        names = args.scenario or [n for n in SCENARIOS if n != "4096-random"]
        jobs = [(n, SCENARIOS[n]) for n in names]
    ok = True
    for name, spec in jobs:
        ranks, culprit = spec["ranks"], spec["culprit"]
        if culprit == "last":
            culprit = ranks - 1
        elif culprit == "random":
            culprit = random.Random(args.seed).randrange(ranks)
        ok &= run(name, ranks, args.lines or spec["lines"], culprit, spec.get("bar"), args.profile, args.keep)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
