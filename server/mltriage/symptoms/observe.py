"""Lines in, typed observations out.

The scanner hands over each line the pre-filter landed on whose literals include a symptom's;
``Observations.line`` matches that symptom's wordings and keeps what they capture. Two symptoms
span lines and read ahead in the block the line came in: a tensor's repr (``tensor([...],
device='cuda:1')``) and a p2pBandwidthLatencyTest matrix. What is kept is bounded: per symptom and
input the first ``KEPT`` observations and the last, and a count of the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from mltriage.engine.prefixes import parse_prefixes
from mltriage.lazy_pattern import lazy
from mltriage.masking import clip
from mltriage.symptoms.vocabulary import BELOW_ERROR_LEVEL, BY_LITERAL, Symptom, Wording

KEPT = 8  # observations kept per (symptom, input); the rest are counted, and the last one kept
MATCH_CHARS = 4096  # a wording is matched in this much of a line's message
SATURATED = 512  # past this many of one (symptom, input), a line is counted without matching
MAX_TENSORS = 256
MAX_MATRICES = 32  # p2pBandwidthLatencyTest matrices kept (each with the lines below its title)
LOOKAHEAD_BYTES = 16 * 1024
MEMO_SUBJECT = 512  # subjects this long or shorter are searched once per wording and diagnosis
MAX_KEYS = 16_384  # (symptom, input) pairs kept: a directory of 100,000 rank logs keeps counts only past it
IMPORTER_REACH = 12  # lines from a traceback's innermost package frame to its exception (IPython lists 5-7 lines of code between)


@dataclass(frozen=True, slots=True)
class Observation:
    symptom: Symptom
    source: str
    line: int
    rank: int | None
    text: str  # the line as logged, clipped
    facts: dict[str, object] = field(default_factory=dict)
    host: str | None = None  # the host its line's prefix names (NCCL's host:pid:tid, a Ray worker's ip=), read at capture


@dataclass(slots=True)
class TensorPrint:
    source: str
    line: int
    rank: int | None
    device: int | None  # the CUDA device index, None for a CPU tensor
    numbers: int  # values shown
    all_zero: bool
    text: str


_TENSOR = lazy(re.compile, r"tensor\((?P<body>\[[^()]{0,15000}?\])(?P<rest>[^()]{0,300})\)")
# (not `\d+\.?\d*`: on a long run of digits the two repetitions split it every way, quadratic)
_NUMBER = lazy(re.compile, r"(?<![\w.])-?(?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|nan|inf)(?![\w])")
_DEVICE = lazy(re.compile, r"device='cuda:(\d{1,3})'")
# faulthandler: '  File "x.py", line 3 in f'; py-spy: '    f (x.py:3)'
_DUMP_FRAME = lazy(re.compile, r'File "(?P<file>[^"\n]{1,300})", line (?P<line>\d{1,7}) in (?P<function>[\w<>.]{1,100})'
                         r'|^\s{2,8}(?P<function2>[\w<>.]{1,100}) \((?P<file2>[^():\n]{1,300}):(?P<line2>\d{1,7})\)')


def wordings_of(present: frozenset[str]) -> tuple[Wording, ...]:
    """The wordings of the symptom literals ``present``, each once, in the order they are tried."""
    tried: dict[int, Wording] = {}
    for literal in present:
        for wording in BY_LITERAL.get(literal, ()):
            tried.setdefault(id(wording), wording)
    return tuple(tried.values())


class Observations:
    """Everything observed in one diagnosis, bounded."""

    def __init__(self) -> None:
        self._line_host: str | None = None  # the host of the line being matched (its prefix's)
        self.kept: dict[tuple[Symptom, str], list[Observation]] = {}
        self.last: dict[tuple[Symptom, str], Observation] = {}
        self.counts: dict[Symptom, int] = {}
        self._key_counts: dict[tuple[Symptom, str], int] = {}
        self.tensors: list[TensorPrint] = []
        # the last step each rank printed, per input (a per-rank step count the kept first/last lines cannot give)
        self.last_steps: dict[tuple[str, int], Observation] = {}
        # p2pBandwidthLatencyTest: each matrix title with the lines below it, read by the probe's own
        # parser of pasted output (mltriage.probe.pasted) once the input is read
        self.matrix_texts: list[tuple[str, int, str]] = []  # (source, line, title and following lines)
        self.topology = None  # the parsed PastedTopology, after finish()
        self._finished = False
        # a capture whose lines ran past the end of its block: finished with the next block's head
        self.pending: list[tuple[str, tuple, bytes]] = []
        # each input's last frame inside an installed package: who made a failed import, where an exception was raised
        self._last_frame: dict[str, tuple[int, dict[str, object]]] = {}
        self._searched: dict[tuple[int, str], tuple[int, dict[str, object]] | None] = {}  # (wording, subject) -> _search

    # -- capture ------------------------------------------------------------------------------------
    def line(self, wordings: tuple[Wording, ...], message: str, text: str, source: str, line: int, rank: int | None,
             ahead: bytes | None, host: str | None = None) -> None:
        """Match ``wordings`` (``wordings_of`` the line's symptom literals) on this line; a fallback wording
        only where no other wording of its symptom matched and the line is not below error level. ``ahead``:
        the bytes that follow the line in its block (for the symptoms that span lines)."""
        self._line_host = host
        fallbacks: list[Wording] = []
        matched: set[Symptom] = set()
        for wording in wordings:
            if wording.fallback:
                fallbacks.append(wording)
            elif self._try(wording, message, text, source, line, rank, ahead):
                matched.add(wording.symptom)
        if not fallbacks or BELOW_ERROR_LEVEL.match(text):
            return
        for wording in fallbacks:
            if wording.symptom not in matched and self._try(wording, message, text, source, line, rank, ahead):
                matched.add(wording.symptom)

    def _try(self, wording: Wording, message: str, text: str, source: str, line: int, rank: int | None,
             ahead: bytes | None) -> bool:
        """Match one wording on the line; True when it matched (counted past saturation too)."""
        key = (wording.symptom, source)
        if self._key_counts.get(key, 0) >= SATURATED:
            self._count(key)
            return True
        subject = text if wording.whole_line else message
        if wording.symptom is Symptom.PROGRESS_BAR:  # a bar redrawn with \r: its last state is what it had reached
            subject = subject.rstrip("\r").rsplit("\r", 1)[-1]
        found = self._search(wording, subject[:MATCH_CHARS])
        if found is None:
            return False
        start, facts = found[0], dict(found[1])  # (a copy: the facts below are added to this line's own)
        if wording.symptom is Symptom.TENSOR_PRINTED:
            args = (message[start:], source, line, rank, text)
            if ahead is not None and len(ahead) < LOOKAHEAD_BYTES and ")" not in message[start:]:
                self.pending.append(("tensor", args, ahead))  # the repr may go on in the next block
            else:
                self._tensor(*args, ahead)
            return True
        if wording.symptom is Symptom.P2P_BANDWIDTH:
            if ahead is not None and len(ahead) < LOOKAHEAD_BYTES:
                self.pending.append(("matrix", (facts, source, line, text), ahead))
            else:
                self._matrix(facts, source, line, text, ahead)
        if wording.symptom is Symptom.STACK_DUMP and ahead:
            facts.update(_innermost_frame(ahead))
            waits_in = communication_wait(message, ahead)
            if waits_in is not None:
                facts["waits_in"] = waits_in
        if wording.symptom is Symptom.PACKAGE_FRAME:
            self._last_frame[source] = (line, facts)
        elif wording.symptom in (Symptom.IMPORT_FAILED, Symptom.KEY_ERROR):
            frame = self._last_frame.get(source)
            frame_facts = frame[1] if frame is not None and 0 <= line - frame[0] <= IMPORTER_REACH else {}
            if wording.symptom is Symptom.IMPORT_FAILED:
                facts.update(_import_facts(facts, str(frame_facts.get("package") or "")))
            elif frame_facts:
                facts.update(raised_in=frame_facts.get("file"), raised_in_function=frame_facts.get("function"))
                if _config_mapping_lookup(frame_facts):
                    self.add(Observation(Symptom.MODEL_TYPE_UNKNOWN, source, line, rank, clip(text, 400), {
                        "model_type": facts.get("key"), "transformers_before": "4.37", "form": "config-mapping-key-error"}))
        self.add(Observation(wording.symptom, source, line, rank, clip(text, 400), facts, self._line_host))
        return True

    def _search(self, wording: Wording, subject: str) -> tuple[int, dict[str, object]] | None:
        """Where ``wording`` matches ``subject`` and the facts it captures (None: no match). A function
        of the two alone, so a short subject is searched once: ranks and loops print the same lines."""
        key = (id(wording), subject) if len(subject) <= MEMO_SUBJECT else None
        if key is not None and key in self._searched:
            return self._searched[key]
        # no time limit (output is a function of the input): the wordings are linear (tests/test_regex_shape.py)
        # and each searches at most MATCH_CHARS characters
        m = wording.compiled.search(subject)
        found = None if m is None else (m.start(), wording.facts_of(m))
        if key is not None and len(self._searched) < MAX_KEYS:
            self._searched[key] = found
        return found

    def add(self, obs: Observation) -> None:
        key = (obs.symptom, obs.source)
        if obs.symptom is Symptom.STEP_LOGGED:
            rank = obs.facts.get("rank", obs.rank)
            if isinstance(rank, int) and ((obs.source, rank) in self.last_steps or len(self.last_steps) < MAX_KEYS):
                self.last_steps[(obs.source, rank)] = obs
        if key not in self.kept and len(self.kept) >= MAX_KEYS:
            self._count(key)
            return
        seen = self._count(key)
        if seen <= KEPT:
            self.kept.setdefault(key, []).append(obs)
        else:
            self.last[key] = obs

    def _count(self, key: tuple[Symptom, str]) -> int:
        self.counts[key[0]] = self.counts.get(key[0], 0) + 1
        n = self._key_counts.get(key, 0) + 1
        if len(self._key_counts) < MAX_KEYS or key in self._key_counts:
            self._key_counts[key] = n
        return n

    def _tensor(self, message: str, source: str, line: int, rank: int | None, text: str, ahead: bytes | None) -> None:
        if len(self.tensors) >= MAX_TENSORS:
            return
        chunk = message
        if ")" not in message and ahead:
            # the repr's next lines, each past its own prefixes (a container's or launcher's name holds digits too)
            below = ahead[:LOOKAHEAD_BYTES].decode("utf-8", "replace").split("\n")
            chunk = "\n".join([message, *(parse_prefixes(t).message for t in below)])
        m = _TENSOR.search(chunk)
        if m is None:
            return
        numbers = _NUMBER.findall(m.group("body"))
        if not numbers:
            return
        device = _DEVICE.search(m.group("rest"))
        all_zero = all(_is_zero(n) for n in numbers)
        self.tensors.append(TensorPrint(source, line, rank, int(device.group(1)) if device else None, len(numbers),
                                        all_zero, clip(text, 400)))

    def _matrix(self, facts: dict[str, object], source: str, line: int, text: str, ahead: bytes | None) -> None:
        if len(self.matrix_texts) >= MAX_MATRICES or not ahead:
            return
        below = ahead[:LOOKAHEAD_BYTES].decode("utf-8", "replace").split("\n")[:66]
        self.matrix_texts.append((source, line, "\n".join([text, *below])))

    def resume(self, head: bytes | None) -> None:
        """Finish the captures cut at a block's end with the next block's first bytes (``None``: the
        input ended)."""
        pending, self.pending = self.pending, []
        for kind, args, ahead in pending:
            more = ahead + (head or b"")
            if kind == "tensor":
                self._tensor(*args, more)
            else:
                self._matrix(*args, more)

    # -- what spans lines, decided once the input is read -----------------------------------------
    def finish(self) -> None:
        """Derive the symptoms that compare several captures (run once, after the scan)."""
        if self._finished:
            return
        self._finished = True
        self._zeros_after_copy()
        self._p2p_slower_than_staged()

    def _zeros_after_copy(self) -> None:
        """A tensor shown with values, then one on another GPU shown as all zeros: a copy between
        devices that arrived empty."""
        by_source: dict[str, list[TensorPrint]] = {}
        for t in self.tensors:
            by_source.setdefault(t.source, []).append(t)
        for source, prints in by_source.items():
            for i, t in enumerate(prints):
                if not t.all_zero or t.device is None:
                    continue
                before = [p for p in prints[:i] if not p.all_zero and p.device != t.device and t.line - p.line <= 200]
                if before:
                    origin = before[-1]
                    self.add(Observation(Symptom.WRONG_VALUES, source, t.line, t.rank, t.text, {
                        "kind": "zeros-after-copy", "device": t.device,
                        "from_device": origin.device if origin.device is not None else "cpu", "from_line": origin.line}))
                    break

    def _p2p_slower_than_staged(self) -> None:
        """P2P=Enabled copies at under half the bandwidth of copies staged through the host."""
        if not self.matrix_texts:
            return
        from mltriage.probe.pasted import parse_pasted_matrices

        source, line, _ = self.matrix_texts[0]
        self.topology = parse_pasted_matrices("\n".join(t for s, _, t in self.matrix_texts if s == source))
        if self.topology is None:
            return
        slow = self.topology.p2p_slower_than_disabled(ratio=0.5)
        if slow:
            import statistics  # (only here: it imports random, a start-up cost for every other log)

            on = [s["p2p_gbps"] for s in slow]
            off = [s["no_p2p_gbps"] for s in slow]
            titles = ((n, t.split("\n", 1)[0]) for s, n, t in self.matrix_texts if s == source)
            at, title = next(((n, head) for n, head in titles if "P2P=Enabled" in head), (line, ""))
            self.add(Observation(Symptom.P2P_SLOWER_THAN_STAGED, source, at, None, clip(title, 400), {
                "pairs": len(slow), "p2p_gbps": round(statistics.median(on), 2),
                "staged_gbps": round(statistics.median(off), 2), "ratio": round(statistics.median(on) / max(statistics.median(off), 1e-9), 3)}))

    # -- reading -------------------------------------------------------------------------------------
    def of(self, symptom: Symptom) -> list[Observation]:
        """Kept observations of ``symptom``, in input order per source (first ones, then the last)."""
        out: list[Observation] = []
        for (s, _), kept in self.kept.items():
            if s is symptom:
                out.extend(kept)
        for (s, _), last in self.last.items():
            if s is symptom:
                out.append(last)
        return out

    def first(self, symptom: Symptom) -> Observation | None:
        found = self.of(symptom)
        return found[0] if found else None

    def has(self, symptom: Symptom) -> bool:
        return self.counts.get(symptom, 0) > 0

    def count(self, symptom: Symptom) -> int:
        return self.counts.get(symptom, 0)


# The communication call a dumped thread waits in, innermost first: NCCL's own functions (py-spy --native, gdb) and
# ProcessGroupNCCL's C++ methods, a set-up call or a collective; or torch.distributed's Python call (any backend).
# (NVIDIA/nccl src/init.cc ncclCommInitRank*, bootstrap.cc, transport.cc, collectives.cc, enqueue.cc, group.cc;
# pytorch/pytorch ProcessGroupNCCL.cpp, torch/distributed/distributed_c10d.py)
_C10D_CALLS = r"(?:all_reduce|all_gather\w{0,20}|reduce_scatter\w{0,20}|broadcast\w{0,20}|barrier|all_to_all\w{0,20}|send|recv|monitored_barrier)"
_COMM_FRAME = lazy(re.compile,
    r"(?P<bootstrap>\bbootstrap(?:Init|Root|AllGather|Send|Recv|Connect|Accept|Barrier|Split|IntraNodeAllGather)\w{0,20})"
    r"|(?P<setup>\bnccl(?:CommInitRank\w{0,20}|CommInitAll|CommSplit|GetUniqueId)\b|\binitTransportsRank\b|\bncclTransportP2pSetup\b"
    r"|\bncclProxyConnect\b|ProcessGroupNCCL::(?:getNCCLComm|initNCCLComm)\b|\bNCCLComm::create\b)"
    r"|(?P<collective>\bnccl(?:AllReduce|AllGather|ReduceScatter|Reduce|Broadcast|Bcast|Send|Recv|AlltoAll|GroupEnd\w{0,20}|EnqueueCheck|"
    r"LaunchKernel\w{0,40})\b|ProcessGroupNCCL::(?:allreduce|allgather|reduce_scatter|broadcast|barrier|alltoall|send|recv|collective)\w{0,20})"
    r"|(?P<python>\bc10d::Work::wait\b|^\s{2,8}" + _C10D_CALLS + r" \([^()\n]{0,300}distributed_c10d\.py:\d{1,7}\)"  # py-spy
    r"|File \"[^\"\n]{0,300}distributed_c10d\.py\", line \d{1,7} in " + _C10D_CALLS + r"\s*$)")  # faulthandler
DUMP_REACH = 80  # lines of one dumped thread read for its communication call


class Waits(StrEnum):
    """Where a dumped thread waits: in NCCL's set-up (its bootstrap, or past it), in an NCCL collective, or in a
    torch.distributed call of any backend."""

    NCCL_BOOTSTRAP = "nccl-bootstrap"  # in set-up, waiting for the other ranks in NCCL's bootstrap (its sockets)
    NCCL_SETUP = "nccl-setup"
    NCCL_COLLECTIVE = "nccl-collective"
    COLLECTIVE = "collective"


def communication_wait(first: str, ahead: bytes) -> Waits | None:
    """The innermost communication call of a dumped thread: its dump's first line (gdb's ``#0`` frame; a py-spy or
    faulthandler header holds none), then the frames ``ahead``, up to a blank line or the next thread's header."""
    frames = ahead[:LOOKAHEAD_BYTES].decode("utf-8", "replace").split("\n")[:DUMP_REACH]
    for n, raw in enumerate([first, *frames]):
        if n and (not raw.strip() or raw.startswith(("Thread ", "Current thread ", "Process "))):
            break
        m = _COMM_FRAME.search(raw)
        if m:
            return (Waits.NCCL_BOOTSTRAP if m.group("bootstrap") else Waits.NCCL_SETUP if m.group("setup")
                    else Waits.NCCL_COLLECTIVE if m.group("collective") else Waits.COLLECTIVE)
    return None


def _innermost_frame(ahead: bytes) -> dict[str, object]:
    """faulthandler and py-spy print the innermost frame first: where the dumped process waits."""
    for raw in ahead[:2048].decode("utf-8", "replace").split("\n")[:3]:
        m = _DUMP_FRAME.search(raw)
        if m:
            function = m.group("function") or m.group("function2")
            where = f"{m.group('file') or m.group('file2')}:{m.group('line') or m.group('line2')}"
            return {"waiting_in": function, "at": where}
    return {}


def _config_mapping_lookup(frame: dict[str, object]) -> bool:
    """transformers before 4.37 looked a checkpoint's model_type up in CONFIG_MAPPING, whose
    _LazyConfigMapping.__getitem__ raises KeyError(key) for a type it does not know (v4.36.2
    src/transformers/models/auto/configuration_auto.py): a KeyError raised there is that lookup."""
    return (str(frame.get("file") or "").replace("\\", "/") == "transformers/models/auto/configuration_auto.py"
            and frame.get("function") == "__getitem__")


def _import_facts(facts: dict[str, object], importer: str) -> dict[str, object]:
    """What a failed import names: the top-level package it imported from, what that package lacks,
    and the installed package whose frame made the import (the innermost package frame just above)."""
    out: dict[str, object] = {}
    module = str(facts.get("module") or "")
    if module:
        out["package"] = module.split(".", 1)[0]
    name, form = facts.get("name"), facts.get("form")
    if form == "module" and module:
        out["missing"] = f"module {module}"
    elif form == "name" and name:
        out["missing"] = f"'{name}'" + (f" in {module}" if module else "")
    elif form == "attribute" and name:
        out["missing"] = f"the attribute '{name}' of {module}"
    if importer:
        out["importer"] = importer
    return out


def _is_zero(number: str) -> bool:
    try:
        return float(number) == 0.0
    except ValueError:
        return False
