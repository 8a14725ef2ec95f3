"""Inputs for the fuzz targets (tests/test_hardening_fuzz.py) and the long run (bench/fuzz/fuzz_engine.py).

Logs are assembled from the pieces the engine reacts to: launcher and timestamp prefixes, every
signature's positive-sample lines and triggers, traceback headers and frames, torchrun's failure
summary, Flight Recorder-ish and matrix headers, hostile numbers (4,301 digits, ``²``, Arabic-Indic
digits), and bytes no log should hold (NUL, CR, ANSI CSI/OSC, invalid UTF-8, BOMs, surrogates,
gzip/pickle magic); then cut, spliced and flipped like a damaged file. The same pieces feed a
hypothesis strategy (shrinkable) and a seeded ``random.Random`` generator (fast, for millions).
"""

from __future__ import annotations

import random
from functools import lru_cache

from hypothesis import strategies as st

PREFIXES = [
    "", "[rank3]:", "[rank0]: ", "[default1]:", "[Rank 2] ", "3: ", "[1,3]<stderr>:", "(VllmWorker rank=1 pid=812) ",
    "(Worker_TP1 pid=52817) ", "node-b:7731:7804 [2] ", "2026-11-30 09:00:01 ", "2026-11-30T09:00:01.123Z ",
    "E1130 09:31:55.073966125 10030 ProcessGroupNCCL.cpp:689] ", "INFO 11-30 09:20:31 [multiproc_executor.py:1057] ",
    "[Mon Nov 30 09:00:01 2026] ", "[  123.456789] ", "[WARNING] ", "(RayWorkerWrapper pid=9, ip=10.0.0.1) ",
]
STRUCTURE = [
    "Traceback (most recent call last):", '  File "/opt/app/train.py", line 42, in <module>', "    main()",
    '  File "/usr/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce',
    "RuntimeError: CUDA error: an illegal memory access was encountered", "IndexError: list index out of range",
    "The above exception was the direct cause of the following exception:", "Exception ignored in: <function X.__del__>",
    "Root Cause (first observed failure):", "Failures:", "[0]:", "  time      : 2026-11-30_09:23:35",
    "  host      : localhost", "  rank      : 1 (local_rank: 1)", "  exitcode  : -9 (pid: 9283)  (SIGKILL)",
    "  error_file: <N/A>", "  traceback : Signal 9 (SIGKILL) received by PID 9283", "=" * 54,
    "P2P Connectivity Matrix", "     D\\D     0     1", "     0\t     1     1", "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
    "\x1b[4m\tGPU0\tGPU1\tCPU Affinity\x1b[0m", "GPU0\t X \tNV18\t0-63", "GPU1\tNV18\t X \t0-63",
    "$ torchrun --nproc_per_node=8 train.py", "+ python3 train.py --lr 1e-4", "Training finished", "Destroy COMPLETE",
    "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM", "NCCL INFO Init COMPLETE", "NCCL version 2.21.5+cuda12.4",
]
NUMBERS = ["0", "-1", "-15", "2", "517", "9" * 30, "9" * 4301, "²", "①", "٣", "1_000", "1e309", "nan", "-" * 3, "0x1f"]
NOISE = ["\x00", "\x00" * 300, "\r", "\r\n", "\x1b[31m", "\x1b[0m", "\x1b]633;A\x07", "\x1b]0;title", "\t", "\ufeff",
         "\ud800", "\U0001f3d6", "\\", '"', "'", "`", "[", "]", "(", ")", ":", " " * 200, "a" * 2000]
MAGIC = [b"\x1f\x8b\x08\x00", b"\x80\x04\x95", b"\xff\xfe", b"\xfe\xff", b"PK\x03\x04", b"\x7fELF", b"\xff", b"\xc3\x28"]


@lru_cache(maxsize=1)
def library_pieces() -> tuple[list[str], list[str]]:
    """Every trigger and every positive sample line of the installed library."""
    from mltriage.library import load_library, signature_files, signatures_dir, validate_file

    triggers = sorted(load_library().trigger_index)
    lines = []
    for path in signature_files(signatures_dir()):
        for sample in validate_file(path).samples.positive:
            lines.extend(line for line in sample.text.splitlines() if line.strip())
    return triggers, lines


def _pieces() -> list[str]:
    triggers, lines = library_pieces()
    return [*STRUCTURE, *triggers, *lines, *NUMBERS, *NOISE]


# -- the seeded generator (the long run) -----------------------------------------------------------
def random_line(rng: random.Random) -> str:
    pieces = _pieces()
    parts = [rng.choice(PREFIXES) for _ in range(rng.choice((0, 1, 1, 2)))]
    for _ in range(rng.randint(1, 4)):
        piece = rng.choice(pieces)
        if rng.random() < 0.2:  # a number where the line had one
            piece = "".join(rng.choice(NUMBERS) if ch.isdigit() and rng.random() < 0.3 else ch for ch in piece)
        if rng.random() < 0.05:  # a flood: a 1-8 KB run of one piece
            piece = piece * rng.randint(2, max(2, 8192 // max(1, len(piece))))
        parts.append(piece)
    return "".join(parts)


def random_input(rng: random.Random, max_lines: int = 60) -> bytes:
    text = "\n".join(random_line(rng) for _ in range(rng.randint(0, max_lines)))
    data = text.encode("utf-8", "surrogatepass")
    return damage(rng, data)


def damage(rng: random.Random, data: bytes) -> bytes:
    """What happens to files: a cut, a spliced magic number, flipped bytes, a NUL tail, UTF-16."""
    roll = rng.random()
    if roll < 0.05:
        data = rng.choice(MAGIC) + data
    elif roll < 0.10 and data:
        data = data[: rng.randrange(len(data))]
    elif roll < 0.15:
        data = data + b"\x00" * rng.randint(1, 70_000)
    elif roll < 0.20:
        data = data.decode("utf-8", "replace").encode(rng.choice(("utf-16", "utf-16-le", "utf-16-be")))
    elif roll < 0.30 and data:
        buf = bytearray(data)
        for _ in range(rng.randint(1, 16)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        data = bytes(buf)
    elif roll < 0.32:
        data = rng.randbytes(rng.randint(0, 4096))
    return data


# -- the hypothesis strategy (the suite: shrinks a failure to its smallest input) ----------------
def log_lines() -> st.SearchStrategy[str]:
    piece = st.sampled_from(_pieces()) | st.text(max_size=40)
    line = st.tuples(st.lists(st.sampled_from(PREFIXES), max_size=2), st.lists(piece, min_size=1, max_size=4))
    return line.map(lambda t: "".join(t[0]) + "".join(t[1]))


def log_bytes() -> st.SearchStrategy[bytes]:
    text = st.lists(log_lines(), max_size=30).map("\n".join)
    encoded = text.map(lambda s: s.encode("utf-8", "surrogatepass"))
    framed = st.tuples(st.sampled_from([b"", b""] + MAGIC), encoded, st.sampled_from([b"", b"\n", b"\x00" * 5000]))
    return framed.map(lambda t: t[0] + t[1] + t[2]) | st.binary(max_size=2048)
