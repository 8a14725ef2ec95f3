"""Issue 13 item 8: adversarial long lines through the whole engine, and the worst one at 10 MB through the CLI.

Every signature's adversarial lines (``mltriage.lint.adversarial_lines``: floods of one character
around its triggers, its triggers repeated, its positive samples cut open) plus lines aimed at the
engine's own parsing (traceback frames, torchrun's summary, launcher prefixes), each 64 KiB, are
diagnosed in-process a few at a time; the slowest generators are then written as a 10 MB log of
such lines and diagnosed by the real CLI. Prints numbers, asserts nothing.

    python bench/fuzz/adversarial_lines.py [--line-kib 64] [--repeat 4] [--cli-mb 10] [--top 12]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))

from mltriage.engine import diagnose_bytes  # noqa: E402
from mltriage.library import load_library, signature_files, signatures_dir, validate_file  # noqa: E402
from mltriage.lint import adversarial_lines  # noqa: E402


def engine_lines(size: int) -> dict[str, str]:
    """Lines aimed at the scanner's own structure rather than at one signature."""
    frame = '  File "/usr/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce'
    return {
        "frame: torch/distributed/ flood": "  File \"" + "torch/distributed/" * (size // 18),
        "frame: File \" flood": '  File "' * (size // 8),
        "frame: real frame repeated": (frame + " ") * (size // (len(frame) + 1)),
        "traceback header flood": "Traceback (most recent call last): " * (size // 35),
        "prefix: [rank flood": "[rank" * (size // 5),
        "prefix: ( flood": "(" + " " * size + "rank=1",
        "prefix: glog digits": "E1130 09:00:00.000000 " + "1" * size + " x.cpp:1] CUDA error: boom",
        "summary: Failures: + fields": "Failures:\n" + "  rank      : " + "1" * size,
        "command: spaces then python": " " * size + "$ python train.py",
        "ANSI OSC flood": "\x1b]" * (size // 2) + "CUDA error: boom",
        "all triggers on one line": " ".join(sorted(load_library().trigger_index))[:size],
    }


def generators(size: int) -> dict[str, str]:
    library = load_library()
    out = {}
    for path in signature_files(signatures_dir()):
        sig = validate_file(path)
        rule = library.rules.get(sig.id)
        if rule is None:
            continue
        for n, line in enumerate(adversarial_lines(rule, [s.text for s in sig.samples.positive], size)):
            out[f"{sig.id} #{n} {line[:24]!r}"] = line
    out.update(engine_lines(size))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--line-kib", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=4, help="lines of each generator per in-process input")
    ap.add_argument("--cli-mb", type=int, default=10)
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    size = args.line_kib * 1024
    load_library()
    timings = []
    started = time.perf_counter()
    for name, line in generators(size).items():
        data = ((line + "\n") * args.repeat).encode("utf-8", "surrogatepass")
        t = time.perf_counter()
        diagnose_bytes(data)
        timings.append(((time.perf_counter() - t) / args.repeat, name, line))
    total = time.perf_counter() - started
    timings.sort(reverse=True)
    print(f"{len(timings)} generators x {args.repeat} lines of {args.line_kib} KiB in process: {total:.1f} s; "
          f"per line median {sorted(t for t, _, _ in timings)[len(timings) // 2] * 1000:.2f} ms")
    for seconds, name, _ in timings[: args.top]:
        print(f"  {seconds * 1000:8.1f} ms/line  {name}")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    worst_cli = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for seconds, name, line in timings[:3]:
            log = Path(tmp) / "adversarial.log"
            one = (line + "\n").encode("utf-8", "surrogatepass")
            log.write_bytes(one * max(1, args.cli_mb * 1_000_000 // len(one)))
            t = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "mltriage", "diagnose", "--json", str(log)], capture_output=True, env=env)
            wall = time.perf_counter() - t
            worst_cli = max(worst_cli, wall)
            print(f"CLI on {log.stat().st_size / 1e6:.1f} MB of {name!r} lines: {wall:.2f} s, exit {r.returncode}, "
                  f"stderr {r.stderr.decode()[:120]!r}")
    print(f"worst CLI wall time on a {args.cli_mb} MB adversarial input: {worst_cli:.2f} s (goal < 2 s)")


if __name__ == "__main__":
    main()
