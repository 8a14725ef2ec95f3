"""The hits of one diagnosis, in bounded memory: kept, folded or counted.

Every hit the matcher makes comes here. A rank's first hit of a signature is kept with its line,
facts and traceback (a ``Hit``) until limits are reached; what repeats is folded or counted:

- the same failure on many ranks (one signature, the same facts): past its first ``GROUP_DETAIL``
  ranks, each further rank is a number and a line in its ``RankGroup`` (engine/rank_groups.py);
- one signature on one stream again and again: past ``HITS_PER_KEY`` hits only counted (``repeats``);
- full hits beyond ``MAX_HITS`` are only counted, except a stream's first error, up to
  ``MAX_FIRST_ERROR_STREAMS`` streams; past that a rank's first error of a signature is kept as its
  number and line (the past-the-limit group), so no rank leaves the answer. So is each rank past
  ``MAX_RANKS_PER_SIGNATURE`` of one signature in one input whose details differ from rank to rank.

``findings.build_findings`` reads what is kept: ``hits``, ``rank_groups``, ``repeats`` and the
supporting lines of signatures that need one (``require_evidence``).
"""

from __future__ import annotations

from collections import deque

from mltriage.engine.hits import GroupKey, Hit, hit_key
from mltriage.engine.prefixes import LineContext
from mltriage.engine.rank_groups import GROUP_DETAIL, MAX_MEMBERS, PAST_HIT_LIMIT, RankGroup, foldable, shared_facts
from mltriage.engine.reader import Source
from mltriage.engine.tracebacks import StreamKey, TracebackBlock, TracebackTracker
from mltriage.library import Rule
from mltriage.masking import clip
from mltriage.model import ERROR_SEVERITIES

MAX_HITS = 20_000
MAX_FIRST_ERROR_STREAMS = 20_000
MAX_RANKS_PER_SIGNATURE = 4_096
HITS_PER_KEY = 8  # repeats of one signature on one stream: later ones only add to its count
MAX_REQUIRE_EVIDENCE = 4_096


class Matched:
    """A pattern's match as the store reads it, remembered by the matcher for the next line with the
    same message: its facts (stripped, the groups that matched) and what of them ranks must share to
    fold (engine/rank_groups.py)."""

    __slots__ = ("facts", "begin", "finish", "shared")

    def __init__(self, facts: dict[str, str], begin: int, finish: int, shared: tuple) -> None:
        self.facts, self.begin, self.finish, self.shared = facts, begin, finish, shared

    def groupdict(self) -> dict[str, str]:
        return self.facts

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.finish


def facts_of(m) -> dict[str, str]:
    """A hit's facts from its match: the stripped groups that matched (a remembered match keeps
    them made; no match, none)."""
    if m is None:
        return {}
    if type(m) is Matched:
        return dict(m.facts)
    return {k: v.strip() for k, v in m.groupdict().items() if v is not None}


class HitStore:
    """What fired, per diagnosis. The line loop says which source it reads (``begin``) and whether it
    reads a torchrun summary (``summary_open``: a launcher's line then names its worker's rank)."""

    def __init__(self, tracebacks: TracebackTracker) -> None:
        self.tracebacks = tracebacks  # which block a hit's line belongs to
        self.source: Source | None = None
        self.summary_open = False
        self.hits: list[Hit] = []
        self.record_calls = 0  # every hit, kept or only counted: what tells a productive landing
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
        self.past_limit_ranks = 0  # ranks whose first error of a signature came past a limit: kept without facts
        self.require_evidence: dict[tuple[str, StreamKey], deque[int]] = {}
        self.last_time: dict[StreamKey, tuple[float, str | None]] = {}  # stream -> (time, clock kind)

    def begin(self, source: Source | None) -> None:
        self.source = source
        self.last_time = {}

    # -- what the matcher asks before it runs a signature's patterns ---------------------------
    def counts_only(self, rule: Rule, rank: int) -> tuple | None:
        """The key of a ranked stream's hits of ``rule`` when further ones are only counted (its
        patterns then need not run: ``count`` it), else None."""
        key = (rule.id, self.source.name, rank, None)  # (hit_key of a ranked stream)
        return key if self._only_counted(key, self.hits_per_key.get(key, 0)) else None

    def count(self, key: tuple) -> None:
        """One more hit of a key that is only counted (``_only_counted``)."""
        self.record_calls += 1
        self.hits_per_key[key] += 1
        folded = self._folded_keys.get(key)
        if folded is not None:
            folded.hits += 1
        else:
            self.repeats[key] = self.repeats.get(key, 0) + 1

    def add_require_evidence(self, rule: Rule, stream: StreamKey, line_no: int) -> None:
        """A supporting line of a signature that needs one near its firing line."""
        evidence = self.require_evidence.setdefault((rule.id, stream), deque(maxlen=MAX_REQUIRE_EVIDENCE))
        evidence.append(line_no)

    # -- keep, fold or count ---------------------------------------------------------------------
    def record(self, rule: Rule, m, text: str, ctx: LineContext, stream: StreamKey, line_no: int,
               partial: str | None = None, block: TracebackBlock | None = None) -> None:
        """Keep a hit (``m``: the pattern's match; ``partial``: the trigger phrase that alone fired)."""
        remembered = type(m) is Matched
        facts = None  # made only for a hit that is kept: a folded rank needs none
        if stream[1] is not None:
            key = (rule.id, self.source.name, stream[1], None)  # (hit_key of a ranked stream)
        else:
            facts = facts_of(m)
            key = hit_key(rule.id, self.source.name, None, facts)
        seen = self.hits_per_key.get(key, 0)
        if self._only_counted(key, seen):
            self.count(key)
            return
        self.record_calls += 1
        self.hits_per_key[key] = seen + 1
        group = None
        open_blocks = self.tracebacks.open
        if seen == 0:
            in_traceback = block is not None or stream in open_blocks
            if foldable(rule, stream, in_traceback, self.summary_open):
                if remembered:
                    shared = m.shared
                else:
                    facts = facts_of(m)
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
            facts = facts_of(m)
        self.hits.append(self._hit(rule, m, text, ctx, stream, line_no, partial, facts, block, group))

    def _past_limit(self, rule: Rule, block: TracebackBlock | None, stream: StreamKey) -> bool:
        """Whether a rank's hit past a limit can be kept as its number and line: not a catch-all's,
        nor one inside a traceback (whether another finding explains those is decided hit by hit,
        from what a folded rank no longer has), and only while the folded ranks' bound holds."""
        return (stream[1] is not None and not rule.fallback and block is None and stream not in self.tracebacks.open
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

    def _fold(self, group: GroupKey, key: tuple, rule: Rule, m, text: str, ctx: LineContext, stream: StreamKey,
              line_no: int, partial: str | None, facts: dict[str, str] | None) -> None:
        """One more rank of a failure many ranks share: its number and line, no hit of its own."""
        folded = self.rank_groups.get(group)
        if folded is None:
            if facts is None:
                facts = facts_of(m)
            hit = self._hit(rule, m, text, ctx, stream, line_no, partial, facts, None, group)
            folded = self.rank_groups[group] = RankGroup(hit)
        elif ctx.timestamp is not None:
            self._timestamp(stream, ctx)  # the stream's clock stays current for its later lines
        if rule.fallback:  # this rank's hit may be explained away: it keeps what its finding would cite
            start, end = _span(m, partial, ctx)
            folded.members.append((stream, line_no, ctx.offset + start, ctx.offset + end, clip(text, 2048)))
        else:
            folded.members.append((stream, line_no))
        folded.hits += 1
        self._folded_keys[key] = folded
        self.folded_members += 1

    def _timestamp(self, stream: StreamKey, ctx: LineContext) -> tuple[float | None, str | None]:
        """This line's time and clock kind, else the stream's last one (a traceback line has none)."""
        if ctx.timestamp is not None and ctx.clock != "uptime":
            self.last_time[stream] = (ctx.timestamp, ctx.clock)
            return ctx.timestamp, ctx.clock
        return self.last_time.get(stream, (None, None))

    def _hit(self, rule: Rule, m, text: str, ctx: LineContext, stream: StreamKey, line_no: int, partial: str | None,
             facts: dict[str, str], block: TracebackBlock | None, group: GroupKey | None) -> Hit:
        start, end = _span(m, partial, ctx)
        when, clock = self._timestamp(stream, ctx)
        tracebacks = self.tracebacks
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
            block=block or tracebacks.open.get(stream) or tracebacks.continued(stream, ctx.message, line_no),
            timestamp=when,
            clock=clock,
            partial=partial is not None,
            group=group,
        )


def _span(m, partial: str | None, ctx: LineContext) -> tuple[int, int]:
    """Where in the message the hit is: the pattern's match, else its trigger phrase."""
    if m is not None:
        return m.start(), m.end()
    if partial is not None:  # trigger only: the trigger's own span
        start = ctx.message.find(partial)
        return start, start + len(partial)
    return 0, len(ctx.message)  # raised by the scanner's own structure (a headerless traceback)
