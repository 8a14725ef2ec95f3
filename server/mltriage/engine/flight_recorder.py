"""PyTorch Flight Recorder dumps (``TORCH_NCCL_DEBUG_INFO_TEMP_FILE`` per-rank files).

A dump is a pickle of plain data: a dict with the ring buffer of the last collectives each rank
issued (``entries``: sequence id, op name, sizes, state scheduled/started/completed). Pickles can
execute code on load, so they are read with an unpickler that resolves no class or function at
all: only the built-in containers and scalars the pickle protocol encodes directly pass. Anything
else is rejected with a clear error.

Analysis compares ranks on the last collective each one reached: a rank that never scheduled or
started the collective others are stuck in is the likely culprit; ranks that disagree on the op or
sizes of the same sequence id show a collective mismatch.
"""

from __future__ import annotations

import io
import pickle
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mltriage.numbers import parse_int

MAX_DUMP_BYTES = 256 * 1024 * 1024
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


def load_dump(data: bytes) -> dict:
    if len(data) > MAX_DUMP_BYTES:
        raise FlightRecorderError("dump larger than 256 MiB")
    if not data.startswith(PICKLE_MAGIC):
        raise FlightRecorderError("not a pickle (Flight Recorder dumps are pickles)")
    try:
        doc = _PlainDataUnpickler(io.BytesIO(data)).load()
    except FlightRecorderError:
        raise
    except Exception as exc:
        raise FlightRecorderError(f"corrupt pickle: {exc}") from None
    if not isinstance(doc, dict) or "entries" not in doc:
        raise FlightRecorderError("pickle is not a Flight Recorder dump (no 'entries')")
    return doc


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
        name = str(entry.get("profiling_name", "?"))
        trace.ops[seq] = (name, str(entry.get("input_sizes", "")))
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
