"""Secret-masking throughput (issue 13 items 4-5); prints numbers, asserts nothing.

    python bench/bench_masking.py
    BENCH_SERVER=/tmp/old/server python bench/bench_masking.py   # another tree's masker and engine

1. realistic: every recorded log under corpus/ and zoo/ (real output of real runs), masked one line
   at a time (as the engine masks each text it hands out) and as one text; best of 5, MB/s;
2. adversarial: 64 KB lines built to make a backtracking pattern rescan (a secret-looking name
   repeated, separators repeated, ...): seconds per line, the worst, MB/s, and how many were
   withheld (a search hit its timeout: the line is replaced, never shown unmasked);
3. end to end: `diagnose_text` of a 4-rank log whose RendezvousClosedError lines carry 64 KB of
   `TOKEN` as their detail (a fact the signature captures whole: the issue's "4 such ranks 55 s").

BENCH_SERVER points at another tree's `server/` (e.g. `git archive b872b55 server signatures | tar -x
-C /tmp/old`) to measure the masker before this change with the same inputs.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = Path(os.environ.get("BENCH_SERVER", ROOT / "server"))
sys.path.insert(0, str(SERVER))
if "BENCH_SERVER" in os.environ:
    os.environ.setdefault("MLTRIAGE_SIGNATURES", str(SERVER.parent / "signatures"))

from mltriage.engine import diagnose_text  # noqa: E402
from mltriage.masking import mask_secrets  # noqa: E402

LINE = 65_536


def realistic_lines() -> list[str]:
    paths = sorted(p for d in ("corpus", "zoo") for p in (ROOT / d).rglob("*.log"))
    return [line for p in paths for line in p.read_text(errors="replace").splitlines(keepends=True)]


def adversarial_lines() -> dict[str, str]:
    rnd = random.Random(13)
    b64 = "".join(rnd.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(LINE))
    pieces = ["TOKEN", "=", " ", "key", ":", '"', "hf_", "a1B2", "--", "://", "@", "/", "password", "'"]
    units = {
        "TOKEN": "TOKEN", "SECRET_": "SECRET_", "token=": "token=", "token ": "token ", "key: ": "key: ",
        "password: ": "password: ", '"password": "': '"password": "', "--password ": "--password ", "--": "--",
        "redis://:": "redis://:", "://a:": "://a:", "Basic ": "Basic ", "authorization: ": "authorization: ",
        "wandb login ": "wandb login ", "wandb.login(": "wandb.login(", "hf_": "hf_",
        "-----BEGIN RSA PRIVATE KEY-----": "-----BEGIN RSA PRIVATE KEY-----", "a": "a",
    }
    lines = {f"{name!r} repeated": (unit * (LINE // len(unit) + 1))[:LINE] for name, unit in units.items()}
    lines["api_key= then 64 KB of a"] = "api_key=" + "a" * LINE
    lines["64 KB of random base64"] = b64
    lines["random mix of secret syntax"] = "".join(rnd.choice(pieces) for _ in range(LINE))[:LINE]
    return lines


def best_of(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    print(f"masker: {SERVER}")
    lines = realistic_lines()
    size = sum(len(line.encode()) for line in lines)
    for line in lines:  # first use loads and compiles what the text needs
        mask_secrets(line)
    per_line = best_of(lambda: [mask_secrets(line) for line in lines])
    whole = "".join(lines)
    as_one = best_of(lambda: mask_secrets(whole), 3)
    changed = sum(mask_secrets(line) != line for line in lines)
    print(f"realistic: {len(lines):,} lines, {size / 1e6:.2f} MB of recorded logs; "
          f"line by line {size / 1e6 / per_line:.1f} MB/s ({per_line / len(lines) * 1e6:.1f} us/line), "
          f"as one text {size / 1e6 / as_one:.1f} MB/s; lines changed: {changed}")

    worst, total, withheld = ("", 0.0), 0.0, 0
    for name, line in adversarial_lines().items():
        mask_secrets(line[:4096])  # warm the rules this line needs
        started = time.perf_counter()
        masked = mask_secrets(line)
        took = time.perf_counter() - started
        withheld += masked.startswith("**** (text withheld")
        total += took
        print(f"  adversarial {name:<40} {took * 1000:9.1f} ms  {len(line) / 1e6 / took:8.2f} MB/s")
        if took > worst[1]:
            worst = (name, took)
    count = len(adversarial_lines())
    print(f"adversarial: {count} lines of {LINE // 1024} KB: worst {worst[1] * 1000:.1f} ms ({worst[0]}), "
          f"mean {total / count * 1000:.1f} ms, {count * LINE / 1e6 / total:.2f} MB/s overall; withheld {withheld}")

    log = "".join(f"[rank{r}]:torch.distributed.elastic.rendezvous.api.RendezvousClosedError: {'TOKEN' * (LINE // 5)}\n"
                  for r in range(4))
    started = time.perf_counter()
    d = diagnose_text(log, source="/logs/run.log")
    took = time.perf_counter() - started
    print(f"end to end: diagnose_text of 4 ranks x 64 KB `TOKEN` rendezvous errors: {took:.2f} s "
          f"({len(d.findings)} findings)")


if __name__ == "__main__":
    main()
