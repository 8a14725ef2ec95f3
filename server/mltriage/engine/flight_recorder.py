"""PyTorch Flight Recorder dumps (``TORCH_NCCL_DEBUG_INFO_TEMP_FILE`` per-rank files).

A dump is a pickle of plain data: a dict with the ring buffer of the last collectives each rank
issued (``entries``: sequence id, op name, sizes, state scheduled/started/completed). Pickles can
execute code on load, so they are read with an unpickler that resolves no class or function at
all: only the built-in containers and scalars the pickle protocol encodes directly pass. Anything
else is rejected with a clear error.

Plain data can still be hostile, in three ways, each bounded before it can cost memory:

- while it loads: 9 bytes can name memo slot 2**31 (the C unpickler allocates every slot below it),
  64 MB of DUP opcodes push 64 Mi references. So the opcodes are walked first, building nothing
  (``check_opcodes``): memo indexes must follow the values stored, and an estimate of what loading
  builds (objects, references, container slots) must stay under ``MAX_BUILT_BYTES``;
- once loaded: a small pickle of shared references expands to gigabytes when it is walked or
  printed, a deep one overflows the stack, a huge integer cannot be printed. So the document is
  walked once, iteratively, against a depth and a total-size budget (``check_budgets``);
- its shape: ``entries`` an int, an entry a string, a sequence id in a string. The fields read are
  checked against their types as they are read (``summarize``).

A dump over a budget, corrupt or of a wrong shape may be real: it is listed as not read
(``UnreadableDump``), which makes the diagnosis incomplete. A pickle that is no dump (no
``entries``) or refuses to be plain data is skipped with the reason.

Analysis compares ranks on the last collective each one reached: a rank that never scheduled or
started the collective others are stuck in is the likely culprit; ranks that disagree on the op or
sizes of the same sequence id show a collective mismatch.
"""

from __future__ import annotations

import functools
import io
import os
import re
import struct
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from mltriage.engine.reader import PICKLE_MAGIC
from mltriage.lazy_pattern import lazy
from mltriage.numbers import parse_int

MAX_DUMP_BYTES = 256 * 1024 * 1024
# A real dump (2,000 entries of ~25 fields and a stack of frames each) nests 6 levels deep and holds
# about half a million values; the budgets leave room for that and refuse what only an attack needs.
MAX_DEPTH = 32
MAX_VALUES = 4_000_000  # containers, keys and scalars reached, shared references counted each time
MAX_TEXT = 256 * 1024 * 1024  # characters/bytes of all strings reached, counted the same way
MAX_INT_BITS = 256  # sequence ids, sizes and nanosecond times fit in 64 bits
# Loading: a 2,000-entry dump (the real one's entries repeated) runs ~240,000 opcodes that build an
# estimated 14 MiB; 20,000 entries (TORCH_NCCL_TRACE_BUFFER_SIZE at ten times the usual) 2.4 million
# and 138 MiB. The budgets leave room above that and stop what only an attack needs.
MAX_OPCODES = 8_000_000
MAX_BUILT_BYTES = 512 * 1024 * 1024
MEMO_SLACK = 1024  # a pickler numbers memo slots 0, 1, 2...: an index may run this far ahead
_RANK_IN_NAME = lazy(re.compile, r"(\d+)$")


class FlightRecorderError(ValueError):
    """The file is not a Flight Recorder dump we can read safely."""


class UnreadableDump(FlightRecorderError):
    """A dump that may be real but was not read: corrupt, of a wrong shape or over a budget."""


class DumpTooLarge(UnreadableDump):
    """A dump over a size, depth, loading or decoded-size budget."""


@functools.cache
def _plain_data_unpickler() -> type:
    """The unpickler class, made when a dump is first read (pickle is no start-up cost of other logs)."""
    import pickle

    class _PlainDataUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str):  # noqa: D401 - pickle API
            raise FlightRecorderError(
                f"refusing to load {module}.{name} from a pickle: Flight Recorder dumps hold plain data only"
            )

        def persistent_load(self, pid):
            raise FlightRecorderError("refusing a pickle with persistent references")

    return _PlainDataUnpickler


def read_dump(path: Path) -> dict:
    """Load one dump file; its size is checked before a byte of it is read."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_DUMP_BYTES:
            raise DumpTooLarge(f"dump of {size / 2**20:.0f} MiB is over the {MAX_DUMP_BYTES // 2**20} MiB limit: not read")
        data = fh.read(size)  # what it held when opened: a dump still being written is read as far as it was
    return load_dump(data)


def load_dump(data: bytes) -> dict:
    if len(data) > MAX_DUMP_BYTES:
        raise DumpTooLarge(f"dump larger than {MAX_DUMP_BYTES // 2**20} MiB: not read")
    if not data.startswith(PICKLE_MAGIC):
        raise FlightRecorderError("not a pickle (Flight Recorder dumps are pickles)")
    check_opcodes(data)
    try:
        doc = _plain_data_unpickler()(io.BytesIO(data)).load()
    except FlightRecorderError:
        raise
    except Exception as exc:
        raise UnreadableDump(f"corrupt pickle: {type(exc).__name__}: {str(exc)[:200]}") from None
    check_budgets(doc)
    if not isinstance(doc, dict) or "entries" not in doc:
        raise FlightRecorderError("pickle is not a Flight Recorder dump (no 'entries')")
    return doc


# -- loading: the opcodes walked before anything is built ------------------------------------------
# What each opcode costs the C unpickler, in bytes (an estimate on the high side): a new object, a
# reference (a stack slot), and per item an opcode adds to a container.
_NEW_OBJECT, _REFERENCE = 64, 8
_PER_ITEM = {"APPEND": 16, "APPENDS": 16, "LIST": 16, "TUPLE": 16, "SETITEM": 96, "SETITEMS": 48, "DICT": 48,
             "ADDITEMS": 48, "FROZENSET": 48, "POP_MARK": 0, "INST": 16, "OBJ": 16}
_REFERENCES = {"DUP", "GET", "BINGET", "LONG_BINGET", "MEMOIZE", "READONLY_BUFFER"}
_MEMO_PUTS = {"PUT", "BINPUT", "LONG_BINPUT"}
# argument layouts: fixed size, a length prefix (struct format) then that many bytes, or text lines
_FIXED = {"uint1": 1, "uint2": 2, "int4": 4, "uint4": 4, "uint8": 8, "float8": 8}
_PREFIX = {"long1": "<B", "string1": "<B", "bytes1": "<B", "unicodestring1": "<B", "long4": "<i", "string4": "<i",
           "bytes4": "<I", "unicodestring4": "<I", "bytes8": "<Q", "bytearray8": "<Q", "unicodestring8": "<Q"}
_LINES = {"stringnl_noescape_pair": 2}  # every other newline-terminated argument is one line
_STRING_FACTOR = 4  # a str of n UTF-8 bytes takes up to 4n bytes (one astral character widens all)


class _Op(NamedTuple):
    name: str
    fixed: int  # bytes of a fixed-size argument
    prefix: struct.Struct | None  # the length prefix of a counted argument
    lines: int  # newline-terminated argument lines
    text: bool  # the argument becomes a str (counts _STRING_FACTOR bytes per byte)
    below_mark: int | None  # stack items below the mark it pops to (None: it pops no mark)
    pops: int
    pushes: int
    per_item: int  # bytes per item it adds to a container


@functools.cache  # (built on the first dump read, not on every start)
def _op_table() -> list[_Op | None]:
    import pickletools

    table: list[_Op | None] = [None] * 256
    for op in pickletools.opcodes:
        arg = op.arg.name if op.arg is not None else ""
        before = [s.name for s in op.stack_before]
        mark = before.index("mark") if "mark" in before else None
        table[ord(op.code)] = _Op(
            name=op.name, fixed=_FIXED.get(arg, 0), prefix=struct.Struct(_PREFIX[arg]) if arg in _PREFIX else None,
            lines=_LINES.get(arg, 1 if op.arg is not None and op.arg.n == pickletools.UP_TO_NEWLINE else 0),
            text="unicode" in arg, below_mark=mark, pops=len(before) if mark is None else 0,
            pushes=len([s for s in op.stack_after if s.name != "mark"]), per_item=_PER_ITEM.get(op.name, 0))
    return table



def check_opcodes(data: bytes) -> int:
    """Walk the pickle's opcodes up to STOP without building anything, as the unpickler will run
    them: refuse it (``DumpTooLarge``) once loading would build more than ``MAX_BUILT_BYTES`` or run
    more than ``MAX_OPCODES`` opcodes, store to a memo slot far past those used, or open more than
    ``MAX_DEPTH`` marks; ``UnreadableDump`` when the opcodes are corrupt (it would fail to load).
    Returns the estimate of the bytes loading builds."""
    end, pos, ops, built, depth, memo = len(data), 0, 0, 0, 0, 0
    marks: list[int] = []
    ops_table, unpack_index = _op_table(), struct.Struct("<I").unpack_from
    while True:
        if pos >= end:
            raise UnreadableDump("corrupt pickle: it ends before its STOP opcode (cut short?)")
        op = ops_table[data[pos]]
        if op is None:
            raise UnreadableDump(f"corrupt pickle: no opcode {data[pos]:#04x} (at byte {pos:,})")
        at, pos, ops = pos, pos + 1, ops + 1
        if ops > MAX_OPCODES:
            raise DumpTooLarge(f"dump runs more than {MAX_OPCODES:,} pickle opcodes while it loads: not read")
        payload = 0
        if op.fixed:
            pos += op.fixed
        elif op.prefix is not None:
            if pos + op.prefix.size > end:
                break
            (payload,) = op.prefix.unpack_from(data, pos)
            pos += op.prefix.size + payload
            if payload < 0:
                raise UnreadableDump(f"corrupt pickle: a negative length (at byte {at:,})")
        else:
            for _ in range(op.lines):
                line_end = data.find(b"\n", pos)
                if line_end == -1:
                    pos = end + 1
                    break
                payload, pos = payload + line_end - pos, line_end + 1
        if pos > end:
            break
        name = op.name
        if op.prefix is not None and name.startswith("LONG") and payload * 8 > MAX_INT_BITS + 8:
            raise UnreadableDump(f"corrupt dump: an integer of {payload * 8:,} bits")
        if name in _MEMO_PUTS or name == "MEMOIZE":
            if name == "BINPUT":
                index = data[at + 1]
            elif name == "LONG_BINPUT":
                (index,) = unpack_index(data, at + 1)
            elif name == "PUT":
                index = parse_int(data[at + 1 : pos - 1].decode("ascii", "replace").strip()) or 0
            else:
                index = memo
            if index > memo + MEMO_SLACK:
                raise DumpTooLarge(f"a pickle memo index of {index:,} after {memo:,} stored values (it would make "
                                   "the unpickler allocate them all): not read")
            memo += 1
        elif name == "MARK":
            marks.append(depth)
            if len(marks) > MAX_DEPTH:
                raise DumpTooLarge(f"dump nests deeper than {MAX_DEPTH} levels: not read")
        elif name == "STOP":
            return built
        if op.below_mark is not None:
            if not marks:
                raise UnreadableDump(f"corrupt pickle: {name} without a MARK (at byte {at:,})")
            mark = marks.pop()
            built += (depth - mark) * op.per_item
            depth = mark - op.below_mark
        else:
            depth -= op.pops
            built += op.per_item
        if depth < 0:
            raise UnreadableDump(f"corrupt pickle: {name} on an empty stack (at byte {at:,})")
        depth += op.pushes
        if op.pushes:
            built += _REFERENCE if name in _REFERENCES else _NEW_OBJECT + payload * (_STRING_FACTOR if op.text else 1)
        if built > MAX_BUILT_BYTES:
            raise DumpTooLarge(f"dump builds more than {MAX_BUILT_BYTES // 2**20} MiB while it loads: not read")
    raise UnreadableDump("corrupt pickle: it ends inside an opcode's argument (cut short?)")


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
                    raise UnreadableDump(f"corrupt dump: an integer of {value.bit_length():,} bits")
            elif isinstance(value, (dict, list, tuple, set, frozenset)):
                if len(stack) >= MAX_DEPTH:
                    raise DumpTooLarge(f"dump nests deeper than {MAX_DEPTH} levels: not read")
                stack.append(chain.from_iterable(value.items()) if isinstance(value, dict) else iter(value))
                break
        else:
            stack.pop()


# -- its shape: the fields read, each of the type torch writes -------------------------------------
def _kind(value: object) -> str:
    name = type(value).__name__
    return "None" if value is None else ("an " if name[0] in "aeiou" else "a ") + name


def _field(entry: dict, key: str, types: tuple[type, ...], where: str):
    """``entry[key]``, ``None`` when absent or None; ``UnreadableDump`` when of another type (a bool
    is no number)."""
    value = entry.get(key)
    if value is None or isinstance(value, types) and not (isinstance(value, bool) and bool not in types):
        return value
    raise UnreadableDump(f"dump of a wrong shape: {where}'{key}' is {_kind(value)}, not {' or '.join(t.__name__ for t in types)}")


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
    """The rank's collectives from its dump; ``UnreadableDump`` when a field read is of a wrong type."""
    trace = RankTrace(rank=rank, source=source)
    entries = doc.get("entries")
    if entries is None:
        entries = []
    if not isinstance(entries, (list, tuple)):
        raise UnreadableDump(f"dump of a wrong shape: 'entries' is {_kind(entries)}, not a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise UnreadableDump(f"dump of a wrong shape: entry {i} is {_kind(entry)}, not a dict")
        where = f"entry {i}: "
        if _field(entry, "is_p2p", (bool, int), where):
            continue
        seq = _field(entry, "collective_seq_id", (int,), where)
        if seq is None:
            continue
        state = _field(entry, "state", (str,), where) or ""
        name = (_field(entry, "profiling_name", (str,), where) or "?")[:200]
        sizes = _field(entry, "input_sizes", (list, tuple), where)
        trace.ops[seq] = (name, str(sizes if sizes is not None else "")[:200])
        trace.last_scheduled = max(trace.last_scheduled or 0, seq)
        if state in ("started", "completed"):
            trace.last_started = max(trace.last_started or 0, seq)
        if state == "completed":
            trace.last_completed = max(trace.last_completed or 0, seq)
        if state in ("scheduled", "started"):
            trace.stuck_op = name
    return trace


def rank_of(path: Path, doc: dict) -> int | None:
    rank = _field(doc, "rank", (int,), "")
    if rank is not None:
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
