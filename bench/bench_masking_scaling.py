"""Secret masking scales linearly (issue 22, item 6): time per MB against a plain `re.sub` beside it.

    python bench/bench_masking_scaling.py            # asserts; exit 1 with the figures if it fails
    BENCH_SERVER=/tmp/old/server python bench/bench_masking_scaling.py   # another tree's masker

The comparator is the cheapest masker there is: one stdlib `re.sub` of `name=value` over the same
text (C speed, one pattern, no context, no allowlists). mltriage's masker runs some 30 rules and
gitleaks' allowlists on the same text; what must hold is that it costs a bounded multiple of that
pass per MB, and that the multiple does not grow with the text (the masker before this change
rescanned a line from its start for every match: 64 KB of a repeated near-secret took 10 s, a
10 MB file of such lines 145 s).

Inputs, each at 64 KB and 10 MB (best of 3 at 64 KB, one run at 10 MB):
  - a repeated near-secret on one line (`secret=true123456789 `: matched by two rules, exempted
    by gitleaks' global allowlist, so every match runs the allowlists);
  - lines of near-secrets (`[rankN]: token: 1234567890abcdefXYZ ...`), masked as one text;
  - the recorded logs under corpus/ (real output of real runs), repeated to the size.
Asserted: ratio(10 MB) <= 2 x ratio(64 KB) for each input (linear), and ratio <= MAX_RATIO.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = Path(os.environ.get("BENCH_SERVER", ROOT / "server"))
sys.path.insert(0, str(SERVER))

from mltriage.masking import WITHHELD, mask_secrets  # noqa: E402

SMALL, LARGE = 64 * 1024, 10 * 1024 * 1024
MAX_RATIO = 400  # the masker against one re.sub: measured 20-90 on a loaded 2-core machine
GROWTH = 2.0  # ratio(10 MB) / ratio(64 KB): linear work keeps it near 1
COMPARATOR = re.compile(r"(?i)\b(pass(?:word)?|secret|token|api_key|key)\s*[=:]\s*\S+")


def comparator(text: str) -> str:
    return COMPARATOR.sub(r"\1=****", text)


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def inputs(size: int) -> dict[str, str]:
    recorded = "".join(p.read_text(errors="replace") for p in sorted((ROOT / "corpus").rglob("*.log")))
    lines = "".join(f"[rank{n % 64}]: token: 1234567890abcdefXYZ secret=true123456789 step {n}\n" for n in range(size // 60 + 1))
    return {
        "one line of a repeated near-secret": _repeat("secret=true123456789 ", size),
        "lines of near-secrets": lines[:size],
        "recorded logs (corpus/)": _repeat(recorded, size),
    }


def timed(fn, text: str, repeat: int) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(repeat):
        started = time.perf_counter()
        out = fn(text)
        best = min(best, time.perf_counter() - started)
    return best, out


def main() -> int:
    print(f"masker: {SERVER}")
    mask_secrets("secret=true123456789 token: abc " * 4)  # rules loaded and compiled before timing
    failures = []
    for name in inputs(SMALL):
        ratios = {}
        for size, repeat in ((SMALL, 3), (LARGE, 1)):
            text = inputs(size)[name]
            mb = len(text.encode()) / 1e6
            ours, masked = timed(mask_secrets, text, repeat)
            base, _ = timed(comparator, text, repeat)
            ratios[size] = ours / base
            withheld = " (WITHHELD)" if masked == WITHHELD else ""
            print(f"{name:<36} {mb:6.2f} MB  mask_secrets {ours / mb * 1000:8.1f} ms/MB  re.sub {base / mb * 1000:7.1f} ms/MB  "
                  f"ratio {ratios[size]:6.1f}{withheld}")
            if withheld:
                failures.append(f"{name}: {mb:.2f} MB withheld (a search timed out)")
            if ratios[size] > MAX_RATIO:
                failures.append(f"{name}: ratio {ratios[size]:.1f} > {MAX_RATIO} at {mb:.2f} MB")
        growth = ratios[LARGE] / ratios[SMALL]
        print(f"{'':<36} growth of the ratio from 64 KB to 10 MB: {growth:.2f} (linear: <= {GROWTH})")
        if growth > GROWTH:
            failures.append(f"{name}: the ratio grew {growth:.2f}x from 64 KB to 10 MB")
    for failure in failures:
        print(f"FAIL: {failure}")
    print("OK: masking is linear" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
