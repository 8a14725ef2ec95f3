"""The matching loop: find the lines that matter in a log, fast, and match signatures on them.

Almost every line of a healthy multi-gigabyte log is irrelevant, so the scanner runs one compiled
pre-filter (every signature's literal triggers) over whole blocks of bytes and only decodes,
cleans and parses the lines it lands on. Python tracebacks are the exception: from a
``Traceback (most recent call last):`` header on, lines of that stream are read one by one until
the exception line closes the block, so a finding inside it can cite the whole traceback.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from time import perf_counter

from mltriage.engine.catalogue_lines import (
    CATALOGUE_BUDGETS,
    CATALOGUE_MARKERS,
    ERROR_MARKERS,
    VERSION_MARKERS,
    CatalogueLines,
)
from mltriage.engine import timed_regex
from mltriage.engine.launcher import ENTRY_FIELDS, SECTION_TRIGGERS, TorchrunSummary, WorkerFailure, section_for
from mltriage.engine.prefilter import Prefilter, make_prefilter
from mltriage.engine.prefixes import LineContext, parse_prefixes
from mltriage.engine.rank_groups import (
    GROUP_DETAIL,
    MAX_MEMBERS,
    PAST_HIT_LIMIT,
    GroupKey,
    RankGroup,
    foldable,
    shared_facts,
)
from mltriage.engine.reader import Source, clean_line
from mltriage.engine.run_facts import MARKER_LITERALS, MARKERS, TAIL_BYTES, RunFacts, is_marker, note_markers, read_tail
from mltriage.symptoms.observe import LOOKAHEAD_BYTES, Observations
from mltriage.symptoms.vocabulary import SPANNING_LITERALS, SYMPTOM_LITERALS
from mltriage.engine.tracebacks import (
    FRAME_LINE,
    MAX_FRAME_LINE,
    CHAIN_MARKERS,
    FRAME_MARKER,
    GENERIC_TRACEBACK_RULE,
    IGNORED_MARKER,
    LAST_ERROR_MARKER,
    MAX_TRACEBACK_LINES,
    ORIGINAL_TRACEBACK,
    TRACEBACK_HEADER,
    StreamKey,
    TracebackBlock,
    TracebackTracker,
)
from mltriage.library import Library, Rule, cache_dir
from mltriage.masking import clip
from mltriage.model import ERROR_SEVERITIES

# Bounded regex work: a pathological pattern or line costs its facts, never a hung run. Each search
# has a time limit, and all the searches of one diagnosis share a budget that grows with the input
# (real logs spend ~1 ms per MB): once it is spent, signatures fire on their trigger phrase alone
# (trigger-only findings, no facts) for the rest of the input, and the diagnosis says so.
MATCH_TIMEOUT_S = 0.05
REGEX_BUDGET_S = 0.25
REGEX_BUDGET_PER_MB_S = 0.01
TIMED_MESSAGE = 512  # bounded patterns cannot be slow on shorter lines: only longer ones are timed
MAX_LINE_FOR_MATCHING = 16 * 1024  # a longer line is matched in a window around its trigger
WINDOW = 8 * 1024  # each side of the trigger: wider than any signature pattern's reach
# Full hits (each cited with its line, facts and traceback): beyond MAX_HITS a hit is only counted,
# except a stream's first error, up to MAX_FIRST_ERROR_STREAMS streams; past that a rank's first
# error of a signature is kept as its number and line (engine/rank_groups.py), so no rank leaves
# the answer. So is each rank past MAX_RANKS_PER_SIGNATURE of one signature in one input whose
# details differ from rank to rank (the same details fold long before: GROUP_DETAIL).
MAX_HITS = 20_000
MAX_FIRST_ERROR_STREAMS = 20_000
MAX_RANKS_PER_SIGNATURE = 4_096
HITS_PER_KEY = 8  # repeats of one signature on one stream: later ones only add to its count
MAX_REQUIRE_EVIDENCE = 4_096
# A phrase that landed on this many lines in a row that fired nothing, while it was on at least one
# line in FLOOD_SHARE of all, is a flood (a loop printing one harmless line): it leaves the
# pre-filter for the rest of the diagnosis, and the diagnosis says so. Without this, 10 MB of
# `Error: x` cost 7 s of per-line Python for no finding; a phrase merely common in a long log
# (`connect to ` in 1,024 ranks' NCCL set-up) stays.
FLOOD_LANDINGS = 20_000
FLOOD_SHARE = 4

# Which ranks a log holds at all, sampled from launcher tags at the head of each block: a rank that
# printed only healthy lines is still a rank (and, in a hang, often the culprit).
_RANK_TAG = re.compile(rb"\[(?:rank|Rank |[A-Za-z_]{1,20}?)(\d{1,6})\]:")
RANK_SAMPLE_BYTES = 256 * 1024


@dataclass(slots=True)
class Hit:
    rule: Rule
    source: Source
    stream: StreamKey
    line: int
    column_start: int
    column_end: int
    text: str
    context: LineContext
    facts: dict[str, str]
    block: TracebackBlock | None
    timestamp: float | None
    clock: str | None = None  # "wall" (full date) or "time" (time of day only): which times compare
    partial: bool = False  # only a trigger matched: a wording the patterns do not know, so no facts
    group: GroupKey | None = None  # the rank group (same failure on many ranks) this hit's rank belongs to


_FRAME_ONLY = frozenset({FRAME_MARKER})
_STRUCTURE_MARKERS = (*CHAIN_MARKERS, IGNORED_MARKER, LAST_ERROR_MARKER)  # lines the traceback tracker reads
_MARKER_SET = frozenset(MARKER_LITERALS)
FINISH_LITERALS = frozenset(MARKERS["finished"])
FINISH_QUIET_LINES = 256  # finish lines in one input with no new rank among them
FINISH_QUIET_LINES_ONE_RANK = 8  # ... in one rank's own file, whose first finish line is all it says


def prefilter_for(library: Library) -> Prefilter:
    """One compiled pre-filter per library (kept on it): every signature trigger plus the scanner's
    own structure markers (tracebacks, chains, torchrun's summary) and the run-description phrases."""
    prefilter = library.__dict__.get("_prefilter")
    if prefilter is None:
        builtin = [TRACEBACK_HEADER, IGNORED_MARKER, FRAME_MARKER, LAST_ERROR_MARKER, *CHAIN_MARKERS, *SECTION_TRIGGERS,
                   *MARKER_LITERALS, *CATALOGUE_MARKERS, *sorted(SYMPTOM_LITERALS)]
        prefilter = library.__dict__["_prefilter"] = make_prefilter([*library.trigger_index, *builtin], cache_dir())
    return prefilter


def _facts_of(m) -> dict[str, str]:
    """A hit's facts from its match: the stripped groups that matched (a remembered match keeps
    them made; no match, none)."""
    if m is None:
        return {}
    if type(m) is _Matched:
        return dict(m.facts)
    return {k: v.strip() for k, v in m.groupdict().items() if v is not None}


def hit_key(rule_id: str, source: str, rank: int | None, facts: dict[str, str]) -> tuple:
    """What makes two hits the same finding: one signature, one stream, and, for lines without a rank
    prefix, the worker they name (a pid, or a rank / local rank the line itself captured)."""
    if rank is not None:
        return (rule_id, source, rank, None)
    return (rule_id, source, None, (facts.get("pid"), facts.get("rank"), facts.get("local_rank")))


@dataclass(frozen=True)
class _Matched:
    """A pattern's match as ``_record`` reads it, kept for the next line with the same message:
    its facts (stripped, the groups that matched) and what of them ranks must share to fold."""

    facts: dict[str, str]
    begin: int
    finish: int
    shared: tuple

    def groupdict(self) -> dict[str, str]:
        return self.facts

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.finish


_MATCHED, _SUPPORTS, _PHRASE_ONLY = "matched", "supports", "phrase-only"  # what a signature makes of a message
_NOTHING = ("nothing",)
MAX_OUTCOMES = 8_192  # (signature, trigger, message) outcomes remembered per diagnosis


class Scanner:
    """Feeds blocks of one source at a time; ``hits`` collects what fired."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self._triggers = list(library.trigger_index)
        self._present: frozenset[str] | None = None  # the pre-filter's literals on the line being handled
        self._windowed = False  # the line being handled is matched in a window around its trigger
        # run-description phrases seen often enough to say nothing new: dropped from the pre-filter
        self._saturated: set[str] = set()
        # warning and version phrases for the catalogue: past their budget in one diagnosis (all its
        # files: 1,024 ranks print the same warnings), no longer landed on
        self._catalogue_counts: dict[str, int] = {}
        # phrase -> (lines in a row it landed on that fired nothing, the input line where that began)
        self._barren_run: dict[str, tuple[int, int]] = {}
        self.flooded: dict[str, tuple[str, int]] = {}  # phrase -> (source, line) where it left the pre-filter
        self.record_calls = 0  # every hit, kept or only counted: what tells a productive landing
        self._use_prefilter(prefilter_for(library))
        self.hits: list[Hit] = []
        self.dropped_hits = 0
        self._streams_with_error: set[StreamKey] = set()  # streams (source, rank) that have an error hit kept
        self.hits_per_key: dict[tuple, int] = {}  # (rule, source, rank, pid) -> hits seen
        self.repeats: dict[tuple, int] = {}  # hits beyond HITS_PER_KEY, only counted
        # one failure on many ranks: past GROUP_DETAIL ranks of a group, a rank is a number and a line
        self.rank_groups: dict[GroupKey, RankGroup] = {}
        self._group_sizes: dict[GroupKey, int] = {}  # group -> ranks kept as full hits
        self._folded_keys: dict[tuple, RankGroup] = {}  # hit key of a folded rank -> its group
        self.folded_members = 0
        self._ranks_per_signature: dict[tuple[str, str], int] = {}  # (signature, source) -> ranks kept as full hits
        self.past_limit_ranks = 0  # ranks whose first error of a signature came past MAX_HITS: kept without facts
        self._outcomes: dict[tuple[str, str, str], tuple] = {}  # (signature, trigger, message) -> outcome
        self.require_evidence: dict[tuple[str, StreamKey], deque[int]] = {}
        self.tracebacks = TracebackTracker()
        self.worker_failures: list[tuple[str, WorkerFailure]] = []  # (source, entry) from torchrun summaries
        self.ranks_seen: set[int] = set()
        self.lines_read = 0
        self.bytes_read = 0
        self.timeouts = 0
        self.regex_seconds = 0.0  # time spent matching lines longer than TIMED_MESSAGE
        self.budget_spent_at: tuple[str, int] | None = None  # (source, line) where the regex budget ran out
        self.trigger_only_lines = 0  # lines matched on trigger phrases alone once the budget was spent
        self.run = RunFacts()
        self.observations = Observations()  # typed symptoms (mltriage.symptoms), for the run model and the causes
        self._block = b""  # the block and the end of the line being handled: what symptoms spanning lines read ahead in
        self._line_end = 0
        self.catalogue_lines = CatalogueLines()  # error/warning lines for the catalogue to name
        self._reset_source(None)

    def _use_prefilter(self, prefilter) -> None:
        self._prefilter = prefilter
        self._literal_text = [lit.decode("utf-8") for lit in prefilter.literals]
        self._finish_ids = {n for n, lit in enumerate(self._literal_text) if lit in FINISH_LITERALS}
        self._id_of = {lit: n for n, lit in enumerate(self._literal_text)}
        index = self.library.trigger_index
        self._marker_only = {n for n, lit in enumerate(self._literal_text) if is_marker(lit) and lit not in index}
        self._dropped = set(self._saturated)
        # phrases dropped (flooded, or past their catalogue budget) since this pre-filter was compiled:
        # they leave it at the next block, and are skipped in what is left of this one
        self._gone_quiet_ids: set[int] = set()

    def _drop_saturated_markers(self) -> None:
        """Compiling a pre-filter costs milliseconds; reporting a channel line per peer and channel
        of every NCCL communicator in a long log costs far more."""
        keep = [lit for lit in self._literal_text if lit not in self._saturated]
        self._use_prefilter(make_prefilter(keep, None))

    # -- per source state -------------------------------------------------------------------
    def _reset_source(self, source: Source | None, first_line: int = 1) -> None:
        self.source = source
        self._line_base = first_line - 1  # a selection of a document counts the document's lines
        self.line_no = self._line_base  # lines fully consumed so far in this source (plus the base)
        self.tracebacks.reset()
        self._finish_lines = 0  # "finished" phrases seen in this source
        self._finish_new_at = 0  # ... when the last one came from a rank not yet finished
        self.open_blocks = self.tracebacks.open  # the stream -> open traceback map the loop consults
        self.last_time: dict[StreamKey, tuple[float, str | None]] = {}  # stream -> (time, clock kind)
        self.summary: TorchrunSummary | None = None
        self._ended_without_newline = False
        self._tail = b""

    def begin(self, source: Source, first_line: int = 1) -> None:
        self._reset_source(source, first_line)
        if source.rank is not None:
            self.ranks_seen.add(source.rank)

    def end(self) -> None:
        self._close_summary()
        if self.observations.pending:
            self.observations.resume(None)
        if self._ended_without_newline:
            self.line_no += 1
        self.lines_read += self.line_no - self._line_base
        if self.source is not None and len(self.run.tails) < 4096:
            self.run.tails[self.source.name] = read_tail(self._tail, self.line_no)
        self.tracebacks.end_source()

    # -- the loop ---------------------------------------------------------------------------
    def feed(self, block: bytes) -> None:
        """Scan one block that ends at a line end (or is a piece of a monster line)."""
        self.bytes_read += len(block)
        if self.observations.pending:
            self.observations.resume(block[:LOOKAHEAD_BYTES])
        size = len(block)
        if self._saturated - self._dropped:
            self._drop_saturated_markers()
        found = self._prefilter.matches(block)
        quiet_after = FINISH_QUIET_LINES if self.source is None or self.source.rank is None else FINISH_QUIET_LINES_ONE_RANK
        if self._finish_lines - self._finish_new_at >= quiet_after:
            # this input's ranks have all said they finished, many times over: nothing new in those lines
            found = [hit for hit in found if hit[1] not in self._finish_ids]
        starts = [offset for offset, _ in found]
        literal_ids = [n for _, n in found]
        if len(self.ranks_seen) < 100_000:
            # (a bytes pattern's \d is ASCII only: int() is safe, and each distinct tag is converted once)
            self.ranks_seen.update(map(int, set(_RANK_TAG.findall(block, 0, RANK_SAMPLE_BYTES))))
        n_starts = len(starts)
        i = 0  # next trigger occurrence not yet behind us
        pos = 0
        counted = 0
        base = self.line_no
        while pos < size:
            while i < n_starts and starts[i] < pos:
                i += 1
            if self.summary is not None and not self.open_blocks:
                base += block.count(b"\n", counted, pos)
                counted = pos
                entry = self.summary.read_entry(block, pos, base + 1)
                if entry is not None:
                    i = self._match_entry_fields(block, entry, literal_ids, starts, i, base + 1)
                    base += 1 + len(ENTRY_FIELDS)
                    counted = pos = entry.end()
                    continue
                limit = starts[i] if i < n_starts else size
                after, read = self.summary.feed_fields(block, pos, limit, MAX_LINE_FOR_MATCHING, base + 1)
                if read:
                    base += read
                    counted = pos = after
                    continue
                end = self.summary.field_line(block, pos, MAX_LINE_FOR_MATCHING) if i < n_starts else None
                if end is not None:
                    self._match_field(block, pos, end, literal_ids, starts, i, base + 1)
                    pos = end + 1
                    continue
            if self.open_blocks or self.summary is not None:
                end = block.find(b"\n", pos)
                end = size if end == -1 else end
                base += block.count(b"\n", counted, pos)
                counted = pos
                if i < n_starts and starts[i] < end:
                    self._present = self._literals_between(literal_ids, starts, i, end)
                    # inside a traceback a frame line is only a frame: the frame marker alone is no trigger there
                    has_trigger = self._present != _FRAME_ONLY
                else:
                    self._present, has_trigger = frozenset(), False
                self._slow_line(block, pos, end, base + 1, has_trigger)
                pos = end + 1
                continue
            if i >= n_starts:
                break
            anchor = starts[i]
            start = block.rfind(b"\n", pos, anchor) + 1 or pos
            end = block.find(b"\n", anchor)
            end = size if end == -1 else end
            base += block.count(b"\n", counted, start)
            counted = start
            present_ids = self._ids_between(literal_ids, starts, i, end)
            # phrases that went quiet within this block (the block's matches were filtered before)
            if self._gone_quiet_ids:
                present_ids -= self._gone_quiet_ids
            if self._finish_lines - self._finish_new_at >= quiet_after:
                present_ids -= self._finish_ids
            if not present_ids:
                pos = end + 1
                continue
            self._present = frozenset(self._literal_text[n] for n in present_ids)
            records_before = self.record_calls
            self._fast_line(block, start, end, base + 1, anchor)
            self._note_landing(present_ids, records_before, base + 1)
            for n in present_ids & self._marker_only:
                if self.run.saturated(self._literal_text[n]):
                    self._saturated.add(self._literal_text[n])
            pos = end + 1
        self.line_no = base + block.count(b"\n", counted)
        self._ended_without_newline = not block.endswith(b"\n")
        self._keep_tail(block)

    def _match_entry_fields(self, block: bytes, entry, literal_ids: list[int], starts: list[int], i: int,
                            first_line: int) -> int:
        """Match the field lines of a torchrun entry just read (``entry``: its match) that hold a
        trigger phrase (``_match_field``). Returns the next trigger occurrence not yet behind."""
        n_starts = len(starts)
        for k in range(len(ENTRY_FIELDS)):
            value_start, end = entry.span(2 + k)
            start = block.rfind(b"\n", 0, value_start) + 1
            while i < n_starts and starts[i] < start:
                i += 1
            if i < n_starts and starts[i] < end:
                self._match_field(block, start, end, literal_ids, starts, i, first_line + 1 + k)
        return i

    def _match_field(self, block: bytes, start: int, end: int, literal_ids: list[int], starts: list[int], i: int,
                     line_no: int) -> None:
        """Match a torchrun field line that holds a trigger phrase (`exitcode  : -9 (pid: 10000)`,
        printable ASCII, just read into the current entry): it speaks for that entry's worker, and an
        indented line has no prefix to parse, so it is matched as it is."""
        self._present = self._literals_between(literal_ids, starts, i, end)
        self._windowed = False
        rank = self.summary.entries[-1].rank
        if self._present != _FRAME_ONLY and rank is not None:
            text = block[start:end].decode("ascii")
            self._match(text, LineContext(message=text, offset=0), (self.source.name, rank), line_no)

    def _note_landing(self, present_ids: set[int], records_before: int, line_no: int) -> None:
        """Count the landings of each phrase that fired nothing; a flood's phrase is dropped."""
        productive = self.record_calls != records_before or self.open_blocks or self.summary is not None
        if productive and not self._barren_run:
            return  # (the common case on a failing log: nothing to reset)
        for n in present_ids - self._marker_only:  # run-description markers have their own saturation
            phrase = self._literal_text[n]
            if productive:
                self._barren_run.pop(phrase, None)
                continue
            here = self.lines_read + line_no - self._line_base  # lines of the whole input so far
            run, began = self._barren_run.get(phrase, (0, here))
            self._barren_run[phrase] = (run + 1, began)
            if run + 1 >= FLOOD_LANDINGS and (run + 1) * FLOOD_SHARE >= here - began:
                self._go_quiet(n)
                self.flooded[phrase] = (self.source.name, line_no)

    def _go_quiet(self, n: int) -> None:
        """Literal ``n`` is no longer landed on: skipped in the rest of this block, and recompiled out
        of the pre-filter at the next one."""
        self._saturated.add(self._literal_text[n])
        self._gone_quiet_ids.add(n)

    def _keep_tail(self, block: bytes) -> None:
        """The input's last bytes, for its last lines (NUL padding never reaches here: the reader
        drops it, so it never pushes the last real lines out)."""
        self._tail = (self._tail + block)[-TAIL_BYTES:] if len(block) < TAIL_BYTES else block[-TAIL_BYTES:]

    @staticmethod
    def _ids_between(literal_ids: list[int], starts: list[int], i: int, end: int) -> set[int]:
        ids = set()
        while i < len(starts) and starts[i] < end:
            ids.add(literal_ids[i])
            i += 1
        return ids

    def _literals_between(self, literal_ids: list[int], starts: list[int], i: int, end: int) -> frozenset[str]:
        return frozenset(self._literal_text[n] for n in self._ids_between(literal_ids, starts, i, end))

    def _line_text(self, block: bytes, start: int, end: int, anchor: int) -> str:
        self._windowed = end - start > MAX_LINE_FOR_MATCHING
        if self._windowed:
            # columns of a match are then relative to this window, not to the whole line
            return clean_line(block[max(start, anchor - WINDOW) : min(end, anchor + WINDOW)])
        return clean_line(block[start:end])

    def _stream(self, ctx: LineContext) -> StreamKey:
        rank = ctx.rank if ctx.rank is not None else self.source.rank
        return (self.source.name, rank)

    def _timestamp(self, stream: StreamKey, ctx: LineContext) -> tuple[float | None, str | None]:
        """This line's time and clock kind, else the stream's last one (a traceback line has none)."""
        if ctx.timestamp is not None and ctx.clock != "uptime":
            self.last_time[stream] = (ctx.timestamp, ctx.clock)
            return ctx.timestamp, ctx.clock
        return self.last_time.get(stream, (None, None))

    def _fast_line(self, block: bytes, start: int, end: int, line_no: int, anchor: int) -> None:
        self._block, self._line_end = block, end
        text = self._line_text(block, start, end, anchor)
        ctx = parse_prefixes(text)
        stream = self._stream(ctx)
        message = ctx.message
        section = section_for(message)
        if section is not None:
            self._close_summary()
            self.summary = TorchrunSummary(section=section, start=line_no)
            return
        stripped = message.lstrip()
        header = stripped.startswith(TRACEBACK_HEADER)
        if header:
            self.tracebacks.start(stream, line_no, text)
        elif stripped.startswith(ORIGINAL_TRACEBACK):
            self.tracebacks.start(stream, line_no, text, continues=True)
            return
        self._match(text, ctx, stream, line_no, structural=header)

    def _close_summary(self) -> None:
        if self.summary is not None:
            self.worker_failures.extend((self.source.name, e) for e in self.summary.entries)
            del self.worker_failures[100_000:]
            self.summary = None

    def _summary_line(self, block: bytes, start: int, end: int, line_no: int, has_trigger: bool) -> None:
        text = self._line_text(block, start, end, start)
        ctx = parse_prefixes(text)
        section = section_for(ctx.message)
        if section is not None:
            self._close_summary()
            self.summary = TorchrunSummary(section=section, start=line_no)
            return
        summary = self.summary
        if not summary.feed(text, line_no):
            self._close_summary()
            if has_trigger:
                self._fast_line(block, start, end, line_no, start)
            return
        if has_trigger and summary.entries and summary.entries[-1].rank is not None:
            # A worker's traceback quoted in the summary speaks for that worker's rank.
            self._match(text, ctx, (self.source.name, summary.entries[-1].rank), line_no)

    def _slow_line(self, block: bytes, start: int, end: int, line_no: int, has_trigger: bool) -> None:
        self._block, self._line_end = block, end
        if self.summary is not None:
            self._summary_line(block, start, end, line_no, has_trigger)
            return
        raw = block[start:end]
        if not has_trigger and raw[:1] in (b" ", b"\t"):
            # An unprefixed frame or source line: it can only extend the source's own traceback.
            own = self.open_blocks.get((self.source.name, self.source.rank))
            if own is not None:
                line = clip(clean_line(raw[:6144]), 2048)
                self.tracebacks.extend(own, line_no, line, line)
            return
        text = self._line_text(block, start, end, start)
        ctx = parse_prefixes(text)
        stream = self._stream(ctx)
        message = ctx.message
        open_block = self.open_blocks.get(stream)
        if message.lstrip().startswith(TRACEBACK_HEADER):
            self.tracebacks.start(stream, line_no, text)
            self._match(text, ctx, stream, line_no, structural=True)
            return
        if message.lstrip().startswith(ORIGINAL_TRACEBACK):
            self.tracebacks.start(stream, line_no, text, continues=True)
            return
        if open_block is not None:
            if not message.strip() or message[0] in " \t":
                self.tracebacks.extend(open_block, line_no, clip(text, 2048), message)
                if has_trigger:  # a frame never fires a signature, but may satisfy another's `requires`
                    self._match(text, ctx, stream, line_no, requires_only=True)
            elif message.lstrip().startswith(CHAIN_MARKERS):
                open_block.end = line_no
                open_block.chain_pending = True
            else:
                if has_trigger:  # match first, so the hit is tied to the block it closes
                    self._match(text, ctx, stream, line_no, structural=True)
                if self.tracebacks.close(open_block, line_no, text, message):
                    # frames that end in an exception line are an error report even without their header
                    rule = self.library.get(GENERIC_TRACEBACK_RULE)
                    if rule is not None:
                        self._record(rule, None, text, ctx, stream, line_no, block=open_block)
                return
            if line_no - open_block.start > MAX_TRACEBACK_LINES:
                self.tracebacks.give_up(stream)
            return
        if has_trigger:
            self._match(text, ctx, stream, line_no)

    # -- signatures -------------------------------------------------------------------------
    def _match(self, text: str, ctx: LineContext, stream: StreamKey, line_no: int, requires_only: bool = False,
               structural: bool = False) -> None:
        """Match the signatures whose triggers are on this line; ``structural``: it opens or closes a
        traceback (its header or exception line), which triage needs even once the regex budget is spent."""
        message = ctx.message
        present = self._present
        if present and not present.isdisjoint(SYMPTOM_LITERALS):
            self._observe(present & SYMPTOM_LITERALS, text, ctx, stream, line_no)
        lead = message.lstrip() if message[:1].isspace() else message
        if lead.startswith(_STRUCTURE_MARKERS):
            if lead.startswith(CHAIN_MARKERS):
                self.tracebacks.chain_marker(stream, line_no)
            elif lead.startswith(IGNORED_MARKER):
                self.tracebacks.ignored(stream, line_no)
            else:
                self.tracebacks.continued(stream, message, line_no)
            return
        if not requires_only:
            finished_before = len(self.run.finished)
            if present is None or not present.isdisjoint(_MARKER_SET):
                note_markers(self.run, text, self.source.name, line_no, present, stream[1])
            if present and present & FINISH_LITERALS:
                self._finish_lines += 1
                if len(self.run.finished) != finished_before:
                    self._finish_new_at = self._finish_lines
            if (FRAME_MARKER in message and self.summary is None and stream not in self.open_blocks
                    and timed_regex.match(FRAME_LINE, lead[:MAX_FRAME_LINE])):
                self.tracebacks.start_headerless(stream, line_no, text, ctx.message)
                return
        index = self.library.trigger_index
        if present and not requires_only and not present.isdisjoint(CATALOGUE_MARKERS) and (
                stream not in self.open_blocks or not present.isdisjoint(VERSION_MARKERS)):  # c10d's "..., NCCL version X"
            self.catalogue_lines.offer(self.source, stream, line_no, text, ctx, error=not present.isdisjoint(ERROR_MARKERS))
            for lit in present & CATALOGUE_BUDGETS.keys():
                seen = self._catalogue_counts[lit] = self._catalogue_counts.get(lit, 0) + 1
                if seen == CATALOGUE_BUDGETS[lit]:
                    self._go_quiet(self._id_of[lit])
        seen: set[str] = set()
        candidates = self._triggers if present is None else [t for t in present if t in index]
        timed = len(message) > TIMED_MESSAGE and self.budget_spent_at is None
        if timed:  # compiling a pattern the first time is no matching cost: done before the clock starts
            for trigger in candidates:
                for rule in index.get(trigger, ()):
                    rule.patterns, rule.requires, rule.excludes  # noqa: B018 - cached on first access
        started = perf_counter() if timed else 0.0
        # once the budget is spent, patterns run only on a short line that opens or closes a
        # traceback: a rank's own error report, which triage needs
        patterns = self.budget_spent_at is None or (structural and len(message) <= TIMED_MESSAGE)
        if not patterns and not requires_only:
            self.trigger_only_lines += 1
        # the pre-filter saw these literals on the line; only a window of a long line may lack one
        check = present is None or self._windowed
        for trigger in candidates:
            if check and trigger not in text:
                continue
            for rule in index[trigger]:
                if rule.id in seen:
                    continue
                seen.add(rule.id)
                if requires_only:
                    self._note_requires(rule, ctx.message, stream, line_no)
                else:
                    self._match_rule(rule, trigger, text, ctx, stream, line_no, patterns)
        if timed:
            self.regex_seconds += perf_counter() - started
            if self.regex_seconds > REGEX_BUDGET_S + REGEX_BUDGET_PER_MB_S * self.bytes_read / 1e6:
                self.budget_spent_at = (self.source.name, line_no)

    def _observe(self, literals: frozenset[str], text: str, ctx: LineContext, stream: StreamKey, line_no: int) -> None:
        ahead = None
        if not literals.isdisjoint(SPANNING_LITERALS):  # only these read the lines below (a tensor, a matrix)
            block, end = self._block, self._line_end
            ahead = block[end + 1:end + 1 + LOOKAHEAD_BYTES]
        self.observations.line(literals, ctx.message, text, self.source.name, line_no, stream[1], ahead)

    def _search(self, pattern, message: str):
        try:
            return pattern.search(message, timeout=MATCH_TIMEOUT_S)
        except TimeoutError:
            self.timeouts += 1
            return None

    def _match_rule(self, rule: Rule, trigger: str, text: str, ctx: LineContext, stream: StreamKey, line_no: int,
                    patterns: bool = True) -> None:
        message = ctx.message
        if stream[1] is not None and not rule.requires:
            key = (rule.id, self.source.name, stream[1], None)
            if self._only_counted(key, self.hits_per_key.get(key, 0)):
                # its trigger phrase counts one more, without running the patterns
                self._record_count(key)
                return
        if not patterns:  # the regex budget is spent: the trigger phrase alone decides
            if trigger in message and rule.fires_alone(trigger) and not rule.require_sources:
                self._record(rule, None, text, ctx, stream, line_no, partial=trigger)
            return
        # Ranks print the same message again and again: what a signature makes of a message is
        # decided once (for messages short enough that their searches are not timed).
        remembered_as = (rule.id, trigger, message) if len(message) <= TIMED_MESSAGE else None
        outcome = self._outcomes.get(remembered_as) if remembered_as is not None else None
        if outcome is None:
            timeouts = self.timeouts
            outcome = self._outcome(rule, trigger, message)
            if remembered_as is not None and self.timeouts == timeouts and len(self._outcomes) < MAX_OUTCOMES:
                self._outcomes[remembered_as] = outcome
        kind = outcome[0]
        if kind is _MATCHED:
            self._record(rule, outcome[1], text, ctx, stream, line_no)
        elif kind is _SUPPORTS:  # a supporting line of this rule, not a firing one
            self._add_require_evidence(rule, stream, line_no)
        elif kind is _PHRASE_ONLY:
            # the phrase is there but the patterns know another release's wording: still the failure
            self._record(rule, None, text, ctx, stream, line_no, partial=trigger)

    def _outcome(self, rule: Rule, trigger: str, message: str) -> tuple:
        """What ``rule`` makes of ``message`` (no side effects: ``_match_rule`` acts on it)."""
        for pattern in rule.patterns:
            m = self._search(pattern, message)
            if m is None:
                continue
            if any(self._search(x, message) for x in rule.excludes):
                return _NOTHING
            facts = _facts_of(m)
            return (_MATCHED, _Matched(facts, m.start(), m.end(), shared_facts(facts)))
        if rule.requires and any(self._search(r, message) for r in rule.requires):
            return (_SUPPORTS,)
        if trigger in message and rule.fires_alone(trigger) and not any(self._search(x, message) for x in rule.excludes):
            return (_PHRASE_ONLY,)
        return _NOTHING

    def _note_requires(self, rule: Rule, message: str, stream: StreamKey, line_no: int) -> bool:
        if rule.requires and any(self._search(r, message) for r in rule.requires):
            self._add_require_evidence(rule, stream, line_no)
            return True
        return False

    def _add_require_evidence(self, rule: Rule, stream: StreamKey, line_no: int) -> None:
        evidence = self.require_evidence.setdefault((rule.id, stream), deque(maxlen=MAX_REQUIRE_EVIDENCE))
        evidence.append(line_no)

    def _record(self, rule: Rule, m, text: str, ctx: LineContext, stream: StreamKey, line_no: int,
                partial: str | None = None, block: TracebackBlock | None = None) -> None:
        """Keep a hit (``m``: the pattern's match; ``partial``: the trigger phrase that alone fired)."""
        remembered = type(m) is _Matched
        facts = None  # made only for a hit that is kept: a folded rank needs none
        if stream[1] is not None:
            key = (rule.id, self.source.name, stream[1], None)  # (hit_key of a ranked stream)
        else:
            facts = _facts_of(m)
            key = hit_key(rule.id, self.source.name, None, facts)
        seen = self.hits_per_key.get(key, 0)
        if self._only_counted(key, seen):
            self._record_count(key)
            return
        self.record_calls += 1
        self.hits_per_key[key] = seen + 1
        group = None
        if seen == 0:
            in_traceback = block is not None or stream in self.open_blocks
            if foldable(rule, stream, in_traceback, self.summary is not None):
                if remembered:
                    shared = m.shared
                else:
                    facts = _facts_of(m)
                    shared = shared_facts(facts)
                group = (rule.id, self.source.name, shared)
                kept = self._group_sizes.get(group, 0)
                if kept >= GROUP_DETAIL and self.folded_members < MAX_MEMBERS:
                    self._fold(group, key, rule, m, text, ctx, stream, line_no, partial, facts)
                    return
                signature = (rule.id, self.source.name)
                ranks = self._ranks_per_signature.get(signature, 0)
                if ranks >= MAX_RANKS_PER_SIGNATURE and self._past_limit(rule, block, stream):
                    self._fold_past_limit(key, rule, text, ctx, stream, line_no)
                    return
                self._ranks_per_signature[signature] = ranks + 1
                self._group_sizes[group] = kept + 1
        if len(self.hits) >= MAX_HITS:
            # The cap bounds memory, but never takes a rank's first error: triage needs every rank's
            # (the culprit's may come after MAX_HITS hits of other ranks). Those are bounded separately.
            first_error = (rule.severity in ERROR_SEVERITIES and stream not in self._streams_with_error
                           and len(self._streams_with_error) < MAX_FIRST_ERROR_STREAMS)
            if not first_error:
                if seen == 0 and rule.severity in ERROR_SEVERITIES and self._past_limit(rule, block, stream):
                    self._fold_past_limit(key, rule, text, ctx, stream, line_no)  # a rank's first error of it
                    return
                self.dropped_hits += 1
                return
        if rule.severity in ERROR_SEVERITIES and len(self._streams_with_error) < MAX_FIRST_ERROR_STREAMS:
            self._streams_with_error.add(stream)
        if facts is None:
            facts = _facts_of(m)
        self.hits.append(self._hit(rule, m, text, ctx, stream, line_no, partial, facts, block, group))

    def _past_limit(self, rule: Rule, block: TracebackBlock | None, stream: StreamKey) -> bool:
        """Whether a rank's hit past a limit can be kept as its number and line: not a catch-all's,
        nor one inside a traceback (whether another finding explains those is decided hit by hit,
        from what a folded rank no longer has), and only while the folded ranks' bound holds."""
        return (stream[1] is not None and not rule.fallback and block is None and stream not in self.open_blocks
                and not rule.requires and self.folded_members < MAX_MEMBERS)

    def _fold_past_limit(self, key: tuple, rule: Rule, text: str, ctx: LineContext, stream: StreamKey,
                         line_no: int) -> None:
        """A rank's hit past a limit on kept details: the rank stays in the answer, as its number and
        line in its signature's past-the-limit group; its facts do not."""
        self._fold((rule.id, self.source.name, PAST_HIT_LIMIT), key, rule, None, text, ctx, stream, line_no, None, {})
        self.past_limit_ranks += 1

    def _only_counted(self, key: tuple, seen: int) -> bool:
        """Whether this key's further hits are only counted: its rank was folded into a group, or it
        has HITS_PER_KEY hits already."""
        return seen >= HITS_PER_KEY or (seen > 0 and key in self._folded_keys)

    def _record_count(self, key: tuple) -> None:
        """One more hit of a key that is only counted (``_only_counted``)."""
        self.record_calls += 1
        self.hits_per_key[key] += 1
        folded = self._folded_keys.get(key)
        if folded is not None:
            folded.hits += 1
        else:
            self.repeats[key] = self.repeats.get(key, 0) + 1

    def _fold(self, group: GroupKey, key: tuple, rule: Rule, m, text: str, ctx: LineContext, stream: StreamKey,
              line_no: int, partial: str | None, facts: dict[str, str] | None) -> None:
        """One more rank of a failure many ranks share: its number and line, no hit of its own."""
        folded = self.rank_groups.get(group)
        if folded is None:
            if facts is None:
                facts = _facts_of(m)
            hit = self._hit(rule, m, text, ctx, stream, line_no, partial, facts, None, group)
            folded = self.rank_groups[group] = RankGroup(hit)
        elif ctx.timestamp is not None:
            self._timestamp(stream, ctx)  # the stream's clock stays current for its later lines
        if rule.fallback:  # this rank's hit may be explained away: it keeps what its finding would cite
            start, end = self._span(m, partial, ctx)
            folded.members.append((stream, line_no, ctx.offset + start, ctx.offset + end, clip(text, 2048)))
        else:
            folded.members.append((stream, line_no))
        folded.hits += 1
        self._folded_keys[key] = folded
        self.folded_members += 1

    @staticmethod
    def _span(m, partial: str | None, ctx: LineContext) -> tuple[int, int]:
        """Where in the message the hit is: the pattern's match, else its trigger phrase."""
        if m is not None:
            return m.start(), m.end()
        if partial is not None:  # trigger only: the trigger's own span
            start = ctx.message.find(partial)
            return start, start + len(partial)
        return 0, len(ctx.message)  # raised by the scanner's own structure (a headerless traceback)

    def _hit(self, rule: Rule, m, text: str, ctx: LineContext, stream: StreamKey, line_no: int, partial: str | None,
             facts: dict[str, str], block: TracebackBlock | None, group: GroupKey | None) -> Hit:
        start, end = self._span(m, partial, ctx)
        when, clock = self._timestamp(stream, ctx)
        return Hit(
            rule=rule,
            source=self.source,
            stream=stream,
            line=line_no,
            column_start=ctx.offset + start,
            column_end=ctx.offset + end,
            text=clip(text, 2048),
            context=ctx,
            facts=facts,
            block=block or self.open_blocks.get(stream) or self.tracebacks.continued(stream, ctx.message, line_no),
            timestamp=when,
            clock=clock,
            partial=partial is not None,
            group=group,
        )
