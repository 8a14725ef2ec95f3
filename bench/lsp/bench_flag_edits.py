"""How long adding a fix's flag to a launch script takes (mltriage.command_line.flag_edits): a real
script, and 256 KiB scripts (the most the language server reads, launch_scripts.MAX_SCRIPT_BYTES) made
of one repeated piece each, the shapes that made an earlier version quadratic.

    python bench/lsp/bench_flag_edits.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))

from mltriage.command_line import flag_edits  # noqa: E402
from mltriage.model import LaunchFlag  # noqa: E402

ALLREDUCE = LaunchFlag("vllm serve", "--disable-custom-all-reduce", None, "NCCL does the all-reduce")
NPROC = LaunchFlag("torchrun", "--nproc_per_node", "gpu", "one worker per visible GPU")
SIZE = 256 * 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cases = {"tests/lsp/data/vllm/serve.sh": (ROOT / "tests/lsp/data/vllm/serve.sh").read_text()}
    for unit in ["vllm serve ", "vllm serve a; ", "vllm serve a\n", "torchrun --nproc_per_node ", "a", '"vllm serve ', "vllm serve $("]:
        cases[f"256 KiB of {unit!r}"] = (unit * (SIZE // len(unit) + 1))[:SIZE]
    print(f"{'script':40} {'edits':>7} {'best ms':>9}")
    for name, text in cases.items():
        best, count = float("inf"), 0
        for _ in range(args.repeat):
            started = time.perf_counter()
            count = len(flag_edits(text, ALLREDUCE)) + len(flag_edits(text, NPROC))
            best = min(best, time.perf_counter() - started)
        print(f"{name:40} {count:>7} {best * 1000:>9.2f}")
    print(f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


if __name__ == "__main__":
    main()
