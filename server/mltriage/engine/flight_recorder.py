"""PyTorch Flight Recorder dumps (``TORCH_NCCL_DEBUG_INFO_TEMP_FILE`` per-rank files).

A dump is a pickle of plain data: a dict with the ring buffer of the last collectives each rank
issued (``entries``: sequence id, op name, sizes, state scheduled/started/completed). Pickles can
execute code on load, so they are read with an unpickler that resolves no class or function at
all: only the built-in containers and scalars the pickle protocol encodes directly pass. Anything
else is rejected with a clear error.

Plain data can still be hostile: a small pickle of shared references expands to gigabytes when it
is walked or printed, a deep one overflows the stack, a huge integer cannot be printed. So the
file's size is checked before it is read, and the loaded document is walked once, iteratively,
against a depth and a total-size budget (shared references count every time they are reached)
before anything else reads it. A dump over a budget is skipped with the reason.

Analysis compares ranks on the last collective each one reached: a rank that never scheduled or
started the collective others are stuck in is the likely culprit; ranks that disagree on the op or
sizes of the same sequence id show a collective mismatch.
"""

from __future__ import annotations

import io
import os
import pickle
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

from mltriage.numbers import parse_int

MAX_DUMP_BYTES = 256 * 1024 * 1024
# A real dump (2,000 entries of ~25 fields and a stack of frames each) nests 6 levels deep and holds
# about half a million values; the budgets leave room for that and refuse what only an attack needs.
MAX_DEPTH = 32
MAX_VALUES = 4_000_000  # containers, keys and scalars reached, shared references counted each time
MAX_TEXT = 256 * 1024 * 1024  # characters/bytes of all strings reached, counted the same way
MAX_INT_BITS = 256  # sequence ids, sizes and nanosecond times fit in 64 bits
PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")
_RANK_IN_NAME = re.compile(r"(\d+)$")


class FlightRecorderError(ValueError):
    """The file is not a Flight Recorder dump we can read safely."""


class _PlainDataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):  # noqa: D401 - pickle API
        raise FlightRecorderError(
            f"refusing to load {module}.{name} from a pickle: Flight Recorder dumps hold plain data only"
        )

    def persistent_load(self, pid):
        raise FlightRecorderError("refusing a pickle with persistent references")


class DumpTooLarge(FlightRecorderError):
    """A dump over a size, depth or decoded-size budget: it may be real, it was not read."""


def read_dump(path: Path) -> dict:
    """Load one dump file; its size is checked before a byte of it is read."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_DUMP_BYTES:
            raise DumpTooLarge(f"dump of {size / 2**20:.0f} MiB is over the {MAX_DUMP_BYTES // 2**20} MiB limit: not read")
        data = fh.read(MAX_DUMP_BYTES + 1)  # the file may grow while it is read
    return load_dump(data)


def load_dump(data: bytes) -> dict:
    if len(data) > MAX_DUMP_BYTES:
        raise DumpTooLarge(f"dump larger than {MAX_DUMP_BYTES // 2**20} MiB: not read")
    if not data.startswith(PICKLE_MAGIC):
        raise FlightRecorderError("not a pickle (Flight Recorder dumps are pickles)")
    try:
        doc = _PlainDataUnpickler(io.BytesIO(data)).load()
    except FlightRecorderError:
        raise
    except Exception as exc:
        raise FlightRecorderError(f"corrupt pickle: {type(exc).__name__}: {str(exc)[:200]}") from None
    check_budgets(doc)
    if not isinstance(doc, dict) or "entries" not in doc:
        raise FlightRecorderError("pickle is not a Flight Recorder dump (no 'entries')")
    return doc


def check_budgets(doc: object) -> None:
    """Walk the loaded document once, without recursion, as a reader would (shared references are
    reached again each time): refuse it once it nests deeper than ``MAX_DEPTH``, reaches more than
    ``MAX_VALUES`` values or ``MAX_TEXT`` characters, or holds an integer over ``MAX_INT_BITS``."""
    values = text = 0
    stack: list[Iterator[object]] = [iter((doc,))]  # one iterator per open container: at most MAX_DEPTH
    while stack:
        for value in stack[-1]:
            values += 1
            if values > MAX_VALUES:
                raise DumpTooLarge(f"dump expands to more than {MAX_VALUES:,} values (shared references): not read")
            if isinstance(value, (str, bytes, bytearray)):
                text += len(value)
                if text > MAX_TEXT:
                    raise DumpTooLarge(f"dump expands to more than {MAX_TEXT // 2**20} MiB of text (shared references): not read")
            elif isinstance(value, int):
                if value.bit_length() > MAX_INT_BITS:
                    raise FlightRecorderError(f"corrupt dump: an integer of {value.bit_length():,} bits")
            elif isinstance(value, (dict, list, tuple, set, frozenset)):
                if len(stack) >= MAX_DEPTH:
                    raise DumpTooLarge(f"dump nests deeper than {MAX_DEPTH} levels: not read")
                stack.append(chain.from_iterable(value.items()) if isinstance(value, dict) else iter(value))
                break
        else:
            stack.pop()


@dataclass
class RankTrace:
    rank: int
    source: str
    last_started: int | None = None  # highest collective_seq_id that started (or completed)
    last_completed: int | None = None
    last_scheduled: int | None = None
    ops: dict[int, tuple[str, str]] = field(default_factory=dict)  # seq -> (op name, sizes)
    stuck_op: str | None = None


def summarize(doc: dict, rank: int, source: str) -> RankTrace:
    trace = RankTrace(rank=rank, source=source)
    for entry in doc.get("entries") or []:
        if not isinstance(entry, dict) or entry.get("is_p2p"):
            continue
        seq = entry.get("collective_seq_id")
        if not isinstance(seq, int):
            continue
        state = str(entry.get("state", ""))
        name = str(entry.get("profiling_name", "?"))[:200]
        trace.ops[seq] = (name, str(entry.get("input_sizes", ""))[:200])
        trace.last_scheduled = max(trace.last_scheduled or 0, seq)
        if state in ("started", "completed"):
            trace.last_started = max(trace.last_started or 0, seq)
        if state == "completed":
            trace.last_completed = max(trace.last_completed or 0, seq)
        if state in ("scheduled", "started"):
            trace.stuck_op = name
    return trace


def rank_of(path: Path, doc: dict) -> int | None:
    rank = doc.get("rank")
    if isinstance(rank, int):
        return rank
    m = _RANK_IN_NAME.search(path.stem) or _RANK_IN_NAME.search(path.name)
    return parse_int(m.group(1)) if m else None


@dataclass
class Verdict:
    initiator: int | None
    reason: str
    mismatch: bool = False


def analyse(traces: list[RankTrace]) -> Verdict:
    """The culprit from the ranks' collective sequence ids, or a mismatch between them."""
    if len(traces) < 2:
        return Verdict(None, "")
    # same sequence id, different op or sizes: a collective mismatch
    by_seq: dict[int, dict[int, tuple[str, str]]] = {}
    for t in traces:
        for seq, op in t.ops.items():
            by_seq.setdefault(seq, {})[t.rank] = op
    for seq in sorted(by_seq):
        ops = by_seq[seq]
        if len(ops) < 2 or len(set(ops.values())) == 1:
            continue
        (common, n), *_ = Counter(ops.values()).most_common()
        odd = sorted(r for r, op in ops.items() if op != common)
        if len(odd) == 1 and n >= 2 or len(ops) == 2:
            culprit = odd[0] if len(odd) == 1 and n >= 2 else None
            detail = "; ".join(f"rank {r}: {op[0]} {op[1]}" for r, op in sorted(ops.items()))
            who = f"rank {culprit} issued a different collective" if culprit is not None else "ranks disagree"
            return Verdict(culprit, f"Flight Recorder: at collective SeqNum {seq} {who} ({detail})", mismatch=True)
    reached = {t.rank: (t.last_scheduled or 0) for t in traces}
    low = min(reached.values())
    behind = sorted(r for r, v in reached.items() if v == low)
    if len(behind) == 1 and low < max(reached.values()):
        r = behind[0]
        ahead = sorted(x for x in reached if x != r)
        stuck = next((t.stuck_op for t in traces if t.rank in ahead and t.stuck_op), "a collective")
        who = f"ranks {', '.join(map(str, ahead))} were" if len(ahead) > 1 else f"rank {ahead[0]} was"
        return Verdict(
            r, f"Flight Recorder: rank {r} never issued collective SeqNum {low + 1} ({stuck}) that {who} waiting in; its last was SeqNum {low}"
        )
    return Verdict(None, "")
