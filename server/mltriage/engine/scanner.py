"""The line loop: find the lines that matter in a log, fast, and hand each to what reads it.

Almost every line of a healthy multi-gigabyte log is irrelevant, so the loop runs one compiled
pre-filter (``prefilter_budget``: every signature's literal triggers, less the phrases that have
said enough) over whole blocks of bytes and only decodes, cleans and parses the lines it lands on.
Python tracebacks are the exception: from a ``Traceback (most recent call last):`` header on, lines
of that stream are read one by one until the exception line closes the block, so a finding inside
it can cite the whole traceback. So are torchrun's failure summaries (``torchrun_reader``).

Each line the pre-filter lands on goes, in ``_match``, to the symptom observations
(``mltriage.symptoms``), the traceback tracker, the run facts, the catalogue's lines and the
signature ``matcher``, whose hits the ``hit_store`` keeps, folds or counts.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from mltriage.engine import linear_regex
from mltriage.engine.catalogue_lines import CATALOGUE_MARKERS, ERROR_MARKERS, VERSION_MARKERS, CatalogueLines
from mltriage.engine.hit_store import HitStore
from mltriage.engine.matcher import Matcher
from mltriage.engine.prefilter_budget import FINISH_LITERALS, PrefilterBudget
from mltriage.engine.prefixes import MEMO_LINE, LineContext, parse_prefixes_behind
from mltriage.engine.reader import ANSI_BYTES, Source, clean_line, common_margin
from mltriage.engine.rewrap import newlines_between, rejoin, wrap_width
from mltriage.engine.run_facts import MARKER_LITERALS, TAIL_BYTES, RunFacts, note_markers, read_tail
from mltriage.engine.torchrun_reader import SummaryLine, TorchrunReader
from mltriage.engine.tracebacks import (
    CHAIN_MARKERS,
    FRAME_LINE,
    FRAME_MARKER,
    GENERIC_TRACEBACK_RULE,
    IGNORED_MARKER,
    LAST_ERROR_MARKER,
    MAX_FRAME_LINE,
    MAX_TRACEBACK_LINES,
    ORIGINAL_TRACEBACK,
    TRACEBACK_HEADER,
    StreamKey,
    TracebackTracker,
)
from mltriage.lazy_pattern import lazy
from mltriage.library import Library
from mltriage.masking import clip
from mltriage.symptoms.observe import LOOKAHEAD_BYTES, Observations, wordings_of
from mltriage.symptoms.vocabulary import SPANNING_LITERALS, SYMPTOM_LITERALS, Wording

MAX_LINE_FOR_MATCHING = 16 * 1024  # a longer line is matched in a window around its trigger
WINDOW = 8 * 1024  # each side of the trigger: wider than any signature pattern's reach

# Which ranks a log holds at all, sampled from launcher tags at the head of each block: a rank that
# printed only healthy lines is still a rank (and, in a hang, often the culprit).
_RANK_TAG = lazy(re.compile, rb"\[(?:rank|Rank |[A-Za-z_]{1,20}?)(\d{1,6})\]:")
RANK_SAMPLE_BYTES = 256 * 1024
MAX_RANKS_SEEN = 100_000

_FRAME_ONLY = frozenset({FRAME_MARKER})
_STRUCTURE_MARKERS = (*CHAIN_MARKERS, IGNORED_MARKER, LAST_ERROR_MARKER)  # lines the traceback tracker reads
_MARKER_SET = frozenset(MARKER_LITERALS)
MAX_PLANS = 65_536  # distinct sets of literals remembered (a real log shows a few hundred)
MAX_TEXTS = 8_192  # distinct short lines whose cleaned text is remembered (at most ~8 MB)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the pre-filter's literals on a line ask of ``_match``: a function of the set alone, so it
    is decided once per distinct set (lines repeat their sets), not once per line."""

    wordings: tuple[Wording, ...]  # the symptom wordings their symptom literals name
    spanning: bool  # ... one of which reads the lines below
    markers: bool  # a run-description marker
    finish: bool  # a "finished" phrase
    catalogue: bool  # a phrase that offers the line to the catalogue
    error: bool  # ... as an error line
    version: bool  # ... a version banner (offered even inside a traceback)

    @classmethod
    def of(cls, present: frozenset[str]) -> _Plan:
        symptoms = present & SYMPTOM_LITERALS
        return cls(wordings_of(symptoms), not symptoms.isdisjoint(SPANNING_LITERALS), not present.isdisjoint(_MARKER_SET),
                   not present.isdisjoint(FINISH_LITERALS), not present.isdisjoint(CATALOGUE_MARKERS), not present.isdisjoint(ERROR_MARKERS),
                   not present.isdisjoint(VERSION_MARKERS))


# tqdm's "[elapsed<remaining, rate]" closing a bar that had no newline yet, the header right behind it
_GLUED_HEADER = lazy(re.compile, r"\[\d[\d:]*<[^\]\n]{0,80}\]Traceback \(most recent call last\):\s*$")


def opens_traceback(message: str) -> bool:
    """A traceback's header: at the line's start, or at its end behind output that had no newline of its own
    (a tqdm bar redrawn with \\r, a print(end='')), which glues the header onto the line before."""
    if message.startswith(TRACEBACK_HEADER):
        return True
    return message.rstrip().endswith(TRACEBACK_HEADER + ":") and bool(_GLUED_HEADER.search(message))


class Scanner:
    """Feeds blocks of one source at a time (``begin``, ``feed``..., ``end``); ``store`` holds what
    fired, ``observations`` the symptoms, ``run`` what the run shows as a whole."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self.budget = PrefilterBudget(library)
        self.tracebacks = TracebackTracker()
        self.store = HitStore(self.tracebacks)
        self.matcher = Matcher(library, self.store)
        self.torchrun = TorchrunReader(MAX_LINE_FOR_MATCHING)
        self._present: frozenset[str] | None = None  # the pre-filter's literals on the line being handled
        self._windowed = False  # the line being handled is matched in a window around its trigger
        self.ranks_seen: set[int] = set()
        self.lines_read = 0
        self.bytes_read = 0
        self.run = RunFacts()
        self.observations = Observations()  # typed symptoms (mltriage.symptoms), for the run model and the causes
        self._block = b""  # the block and the end of the line being handled: what symptoms spanning lines read ahead in
        self._line_end = 0
        self.catalogue_lines = CatalogueLines()  # error/warning lines for the catalogue to name
        self._plans: dict[frozenset[str], _Plan] = {}
        self._texts: dict[bytes, str] = {}  # a short line's bytes -> its cleaned text
        self._source_start = 0
        self._reset_source(None)

    # -- per source state -------------------------------------------------------------------
    def _reset_source(self, source: Source | None, first_line: int = 1) -> None:
        self.source = source
        self._line_base = first_line - 1  # a selection of a document counts the document's lines
        self.line_no = self._line_base  # lines fully consumed so far in this source (plus the base)
        self.tracebacks.reset()
        self.open_blocks = self.tracebacks.open  # the stream -> open traceback map the loop consults
        self.budget.begin_source(one_rank=source is not None and source.rank is not None)
        self.store.begin(source)
        self.torchrun.begin(source.name if source is not None else "")
        self.store.summary_open = False
        self._ended_without_newline = False
        self._tail = b""
        self._margin = b""  # the indentation every line of a pasted block shares (read from the source's first block)
        self._margin_text = ""  # the same, decoded once (it is spaces, tabs and '>')
        self._wrap_width: int | None = None  # the width the source's lines were hard-wrapped at (read from its first block)

    def begin(self, source: Source, first_line: int = 1) -> None:
        self._reset_source(source, first_line)
        self._source_start = self.bytes_read
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
        self.store.end_source()  # (after the tracker: every traceback of the source is over)

    # -- the loop ---------------------------------------------------------------------------
    def feed(self, block: bytes) -> None:
        """Scan one block that ends at a line end (or is a piece of a monster line)."""
        first = self.line_no == self._line_base and self.bytes_read == self._source_start  # the source's first block
        self.bytes_read += len(block)
        if b"\x1b" in block:
            # colours and cursor codes off before the pre-filter: a coloured level word ("\x1b[31mWARN\x1b[0m") is still
            # its phrase (lines end where they ended: no escape spans a line feed)
            block = ANSI_BYTES.sub(b"", block)
        if first:
            self._margin = common_margin(block)
            self._margin_text = self._margin.decode("ascii")
            self._wrap_width = wrap_width(block)
        physical = block  # the file's lines, for the tail and the line count
        joined: list[int] = []
        if self._wrap_width is not None:
            block, joined = rejoin(block, self._wrap_width)
        self.matcher.input_bytes = self.bytes_read
        if self.observations.pending:
            self.observations.resume(block[:LOOKAHEAD_BYTES])
        size = len(block)
        budget = self.budget
        torchrun = self.torchrun
        starts, literal_ids = budget.scan(block)
        if len(self.ranks_seen) < MAX_RANKS_SEEN:
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
            if torchrun.summary is not None and not self.open_blocks:
                base += newlines_between(block, joined, counted, pos)
                counted = pos
                entry = torchrun.read_entry(block, pos, base + 1)
                if entry is not None:
                    after, fields = entry
                    for start, end, line_no in fields:
                        while i < n_starts and starts[i] < start:
                            i += 1
                        if i < n_starts and starts[i] < end:
                            self._match_field(block, start, end, literal_ids, starts, i, line_no)
                    base += 1 + len(fields)
                    counted = pos = after
                    continue
                limit = starts[i] if i < n_starts else size
                after, read = torchrun.read_fields(block, pos, limit, base + 1)
                if read:
                    base += read
                    counted = pos = after
                    continue
                end = torchrun.field_line(block, pos) if i < n_starts else None
                if end is not None:
                    self._match_field(block, pos, end, literal_ids, starts, i, base + 1)
                    pos = end + 1
                    continue
            if self.open_blocks or torchrun.summary is not None:
                end = block.find(b"\n", pos)
                end = size if end == -1 else end
                base += newlines_between(block, joined, counted, pos)
                counted = pos
                if i < n_starts and starts[i] < end:
                    self._present = budget.phrases(self._ids_between(literal_ids, starts, i, end))
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
            base += newlines_between(block, joined, counted, start)
            counted = start
            # phrases that went quiet within this block (the block's matches were filtered before)
            present_ids = budget.still_on(self._ids_between(literal_ids, starts, i, end))
            if not present_ids:
                pos = end + 1
                continue
            self._present = budget.phrases(present_ids)
            records_before = self.store.record_calls
            self._fast_line(block, start, end, base + 1, anchor)
            productive = self.store.record_calls != records_before or self.open_blocks or torchrun.summary is not None
            budget.note_landing(present_ids, productive, self.lines_read + base + 1 - self._line_base, self.source.name,
                                base + 1)
            budget.note_markers(present_ids, self.run)
            pos = end + 1
        self.line_no = base + newlines_between(block, joined, counted)
        self._ended_without_newline = not physical.endswith(b"\n")
        self._keep_tail(physical)

    def _match_field(self, block: bytes, start: int, end: int, literal_ids: Sequence[int], starts: Sequence[int], i: int,
                     line_no: int) -> None:
        """Match a torchrun field line that holds a trigger phrase (`exitcode  : -9 (pid: 10000)`,
        printable ASCII, just read into the current entry): it speaks for that entry's worker, and an
        indented line has no prefix to parse, so it is matched as it is."""
        self._present = self.budget.phrases(self._ids_between(literal_ids, starts, i, end))
        self._windowed = False
        rank = self.torchrun.rank
        if self._present != _FRAME_ONLY and rank is not None:
            text = block[start:end].decode("ascii")
            self._match(text, LineContext(message=text, offset=0), (self.source.name, rank), line_no)

    def _keep_tail(self, block: bytes) -> None:
        """The input's last bytes, for its last lines (NUL padding never reaches here: the reader
        drops it, so it never pushes the last real lines out)."""
        self._tail = (self._tail + block)[-TAIL_BYTES:] if len(block) < TAIL_BYTES else block[-TAIL_BYTES:]

    @staticmethod
    def _ids_between(literal_ids: Sequence[int], starts: Sequence[int], i: int, end: int) -> set[int]:
        if i + 1 == len(starts) or starts[i + 1] >= end:  # (most lines hold one occurrence)
            return {literal_ids[i]}
        return set(literal_ids[i:bisect_left(starts, end, i)])

    def _line_text(self, block: bytes, start: int, end: int, anchor: int) -> str:
        self._windowed = end - start > MAX_LINE_FOR_MATCHING
        if self._windowed:
            # columns of a match are then relative to this window, not to the whole line
            return clean_line(block[max(start, anchor - WINDOW) : min(end, anchor + WINDOW)])
        raw = block[start:end]
        if end - start > MEMO_LINE:
            return clean_line(raw)
        text = self._texts.get(raw)
        if text is None:  # (a function of the bytes alone: ranks and loops print the same lines)
            text = clean_line(raw)
            if len(self._texts) < MAX_TEXTS:
                self._texts[raw] = text
        return text

    def _context(self, text: str) -> LineContext:
        """The line's prefixes, past the margin of a pasted block (columns still count from the line's start)."""
        return parse_prefixes_behind(text, self._margin_text)

    def _stream(self, ctx: LineContext) -> StreamKey:
        rank = ctx.rank if ctx.rank is not None else self.source.rank
        return (self.source.name, rank)

    def _fast_line(self, block: bytes, start: int, end: int, line_no: int, anchor: int) -> None:
        self._block, self._line_end = block, end
        text = self._line_text(block, start, end, anchor)
        ctx = self._context(text)
        stream = self._stream(ctx)
        message = ctx.message
        if self.torchrun.open_if_section(message, line_no):
            self.store.summary_open = True
            return
        stripped = message.lstrip()
        header = opens_traceback(stripped)
        if header:
            self.tracebacks.start(stream, line_no, text)
        elif stripped.startswith(ORIGINAL_TRACEBACK):
            self.tracebacks.start(stream, line_no, text, continues=True)
            return
        self._match(text, ctx, stream, line_no, structural=header)

    def _close_summary(self) -> None:
        self.torchrun.close()
        self.store.summary_open = False

    def _summary_line(self, block: bytes, start: int, end: int, line_no: int, has_trigger: bool) -> None:
        text = self._line_text(block, start, end, start)
        ctx = self._context(text)
        read = self.torchrun.read_line(ctx.message, line_no)
        if read is SummaryLine.ENDED:
            self.store.summary_open = False
            if has_trigger:
                self._fast_line(block, start, end, line_no, start)
            return
        if read is SummaryLine.INSIDE and has_trigger and self.torchrun.rank is not None:
            # A worker's traceback quoted in the summary speaks for that worker's rank.
            self._match(text, ctx, (self.source.name, self.torchrun.rank), line_no)

    def _slow_line(self, block: bytes, start: int, end: int, line_no: int, has_trigger: bool) -> None:
        self._block, self._line_end = block, end
        if self.torchrun.summary is not None:
            self._summary_line(block, start, end, line_no, has_trigger)
            return
        raw = block[start:end]
        if self._margin and raw.startswith(self._margin):
            raw = raw[len(self._margin):]
        if not has_trigger and raw[:1] in (b" ", b"\t"):
            # An unprefixed frame or source line: it can only extend the source's own traceback.
            own = self.open_blocks.get((self.source.name, self.source.rank))
            if own is not None:
                line = clip(clean_line(raw[:6144]), 2048)
                self.tracebacks.extend(own, line_no, line, line)
            return
        text = self._line_text(block, start, end, start)
        ctx = self._context(text)
        stream = self._stream(ctx)
        message = ctx.message
        open_block = self.open_blocks.get(stream)
        if opens_traceback(message.lstrip()):
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
                        self.store.record(rule, None, text, ctx, stream, line_no, block=open_block)
                return
            if line_no - open_block.start > MAX_TRACEBACK_LINES:
                self.tracebacks.give_up(stream)
            return
        if has_trigger:
            self._match(text, ctx, stream, line_no)

    # -- what one line tells each reader ------------------------------------------------------
    def _match(self, text: str, ctx: LineContext, stream: StreamKey, line_no: int, requires_only: bool = False,
               structural: bool = False) -> None:
        """Hand a line the pre-filter landed on to the symptoms, the traceback tracker, the run facts,
        the catalogue's lines and the signatures; ``structural``: it opens or closes a traceback (its
        header or exception line), which triage needs even once the regex budget is spent."""
        message = ctx.message
        present = self._present
        plan = None
        if present:
            plan = self._plans.get(present)
            if plan is None:
                plan = _Plan.of(present)
                if len(self._plans) < MAX_PLANS:
                    self._plans[present] = plan
            if plan.wordings:
                self._observe(plan, text, ctx, stream, line_no)
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
            if present is None or (plan is not None and plan.markers):
                note_markers(self.run, text, self.source.name, line_no, present, stream[1])
            if plan is not None and plan.finish:
                self.budget.note_finish(new_rank=len(self.run.finished) != finished_before)
            if (FRAME_MARKER in message and self.torchrun.summary is None and stream not in self.open_blocks
                    and linear_regex.match(FRAME_LINE, lead[:MAX_FRAME_LINE])):
                self.tracebacks.start_headerless(stream, line_no, text, ctx.message)
                return
        if plan is not None and not requires_only and plan.catalogue and (
                stream not in self.open_blocks or plan.version):  # c10d's "..., NCCL version X"
            self.catalogue_lines.offer(self.source, stream, line_no, text, ctx, error=plan.error)
            self.budget.spend_catalogue(present)
        self.matcher.match(text, ctx, stream, line_no, present, self._windowed, requires_only, structural)

    def _observe(self, plan: _Plan, text: str, ctx: LineContext, stream: StreamKey, line_no: int) -> None:
        ahead = None
        if plan.spanning:  # only these read the lines below (a tensor, a matrix)
            block, end = self._block, self._line_end
            ahead = block[end + 1:end + 1 + LOOKAHEAD_BYTES]
        self.observations.line(plan.wordings, ctx.message, text, self.source.name, line_no, stream[1], ahead, ctx.host)
