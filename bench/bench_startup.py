"""Start-up (issue 20 item 4): a cold `mltriage diagnose --json` of a 9-line log against
`python -c pass`, both fresh interpreters, run alternately in the same run.

    python bench/bench_startup.py [--runs 21] [--importtime] [--tree OTHER_TREE]

Two 9-line logs, cut from examples/torchrun-rank2-indexerror.log into /tmp: its first 9 lines
(healthy: launcher banner and steps, nothing to look up) and a rank's traceback ending in its
IndexError (a finding: the catalogue is consulted). The library cache is warmed first (a first run
ever builds it). Prints the median and the minimum wall time of each and their ratio (and the CPU
times' medians, steadier on a loaded machine); the bar is a
median ratio <= 6, printed "met" or "missed" (exit 1 when missed). The answers are asserted (the
healthy head is healthy, the traceback names IndexError). ``--importtime``: the top 10 modules by
their own import time (``python -X importtime``) for each log. ``--tree``: run another source tree
(e.g. a worktree of main) instead of this one, for a before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
BAR = 6.0


def _wall(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=ENV)
    return time.perf_counter() - t, proc


def _cpu(cmd: list[str]) -> float:
    """The child's CPU time (user + system): steadier than wall time on a loaded machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, capture_output=True, env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def logs(tmp: Path) -> dict[str, Path]:
    lines = (ROOT / "examples" / "torchrun-rank2-indexerror.log").read_text().splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if "IndexError:" in line) + 1
    out = {"healthy head": tmp / "head9.log", "IndexError traceback": tmp / "traceback9.log"}
    out["healthy head"].write_text("".join(lines[:9]))
    out["IndexError traceback"].write_text("".join(lines[end - 9:end]))
    return out


def importtime_top(log: Path, n: int = 10) -> list[tuple[int, str]]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "mltriage", "diagnose", "--json", str(log)],
                          capture_output=True, text=True, env=ENV)
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "self" not in line:
            own, _, name = line[len("import time:"):].split("|")
            rows.append((int(own), name.strip()))
    return sorted(rows, reverse=True)[:n]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--importtime", action="store_true")
    ap.add_argument("--tree", type=Path, default=ROOT)
    args = ap.parse_args()
    ENV["PYTHONPATH"] = str(args.tree.resolve() / "server")
    ok = True
    with tempfile.TemporaryDirectory(prefix="mltriage-startup-") as d:
        for name, log in logs(Path(d)).items():
            cmd = [sys.executable, "-m", "mltriage", "diagnose", "--json", str(log)]
            _, first = _wall(cmd)  # (builds the library cache if this tree never ran)
            doc = json.loads(first.stdout)
            if name == "healthy head":
                answer = doc["status"] == "healthy"
            else:
                answer = any(f["facts"].get("exception_type") == "IndexError" for f in doc["findings"])
            ours, bare, ours_cpu, bare_cpu = [], [], [], []
            for _ in range(args.runs):
                bare.append(_wall([sys.executable, "-c", "pass"])[0])
                ours.append(_wall(cmd)[0])
                bare_cpu.append(_cpu([sys.executable, "-c", "pass"]))
                ours_cpu.append(_cpu(cmd))
            ratio = statistics.median(ours) / statistics.median(bare)
            met = ratio <= BAR
            ok &= met and answer
            print(f"{name}: diagnose median {statistics.median(ours) * 1000:.0f} ms (min {min(ours) * 1000:.0f}), "
                  f"python -c pass median {statistics.median(bare) * 1000:.0f} ms (min {min(bare) * 1000:.0f}): "
                  f"{ratio:.1f}x (min/min {min(ours) / min(bare):.1f}x; bar <= {BAR:.0f}x: {'met' if met else 'missed'}); "
                  f"answer {'right' if answer else 'WRONG'} ({doc['status']}); CPU median {statistics.median(ours_cpu) * 1000:.0f} "
                  f"vs {statistics.median(bare_cpu) * 1000:.0f} ms: {statistics.median(ours_cpu) / max(statistics.median(bare_cpu), 1e-3):.1f}x")
            if args.importtime:
                for own, module in importtime_top(log):
                    print(f"    {own / 1000:6.1f} ms  {module}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
