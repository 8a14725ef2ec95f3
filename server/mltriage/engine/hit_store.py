"""The hits of one diagnosis, in bounded memory: kept, folded or counted, never a rank forgotten.

Every hit the matcher makes comes here. A rank's first hit of a signature is kept with its line,
facts and traceback (a ``Hit``) until limits are reached; what repeats is folded or counted, so
memory stays bounded without forgetting any rank's first hit of a signature:

- the same failure on many ranks (one signature, the same facts, in any file; for a hit tied to a
  traceback, the same report too): past its first ``GROUP_DETAIL`` ranks, each further rank is a
  ``Member`` of its ``RankGroup`` (engine/rank_groups.py): its number, line, file and host;
- one signature on one stream again and again: past ``HITS_PER_KEY`` hits only counted (``repeats``);
- past ``MAX_HITS`` full hits, or ``MAX_RANKS_PER_SIGNATURE`` ranks of one signature whose details
  differ from rank to rank, a rank's first error of a signature is still kept, as a member of the
  signature's past-the-limit group (its facts are not), except a stream's first error, kept whole
  up to ``MAX_FIRST_ERROR_STREAMS`` streams. Only further warnings and repeats are then counted.

A hit tied to a traceback waits, kept, until its traceback is over (``TracebackBlock.final``): the
exception at its end decides which ranks' reports are one failure.

``findings.build_findings`` reads what is kept: ``hits``, ``rank_groups``, ``repeats`` and the
supporting lines of signatures that need one (``require_evidence``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from enum import Enum

from mltriage.engine.hits import GroupKey, Hit, hit_key
from mltriage.engine.prefixes import LineContext
from mltriage.engine.rank_groups import GROUP_DETAIL, MAX_MEMBERS, PAST_HIT_LIMIT, Cited, Member, RankGroup, foldable, shared_facts
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
# Hits waiting for their traceback to end: every SETTLE_EVERY new ones the store places those whose
# traceback is over; past MAX_WAITING (as many tracebacks open at once) the oldest are placed as
# they stand. A source's end places them all.
SETTLE_EVERY = 1_024
MAX_WAITING = 65_536


class Place(Enum):
    """Where a rank's first hit of a signature goes."""

    KEEP = "keep"  # a full hit
    FOLD = "fold"  # a member of its rank group (its group has GROUP_DETAIL full hits)
    PAST_LIMIT = "past-limit"  # a member of its signature's past-the-limit group
    COUNT = "count"  # a warning past MAX_HITS: only counted


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
    """What fired, per diagnosis. The line loop says which source it reads (``begin``, ``end_source``)
    and whether it reads a torchrun summary (``summary_open``: a launcher's line then names its
    worker's rank)."""

    def __init__(self, tracebacks: TracebackTracker) -> None:
        self.tracebacks = tracebacks  # which block a hit's line belongs to
        self.source: Source | None = None
        self.summary_open = False
        self.hits: list[Hit | None] = []  # (None: a slot whose hit was folded, until the source ends)
        self.kept = 0  # full hits held
        self.record_calls = 0  # every hit, kept or only counted: what tells a productive landing
        self.dropped_hits = 0  # hits past MAX_HITS only counted: warnings and repeats
        self._streams_with_error: set[StreamKey] = set()  # streams (source, rank) that have an error hit kept
        self.hits_per_key: dict[tuple, int] = {}  # (rule, source, rank, pid) -> hits seen
        self.repeats: dict[tuple, int] = {}  # hits beyond HITS_PER_KEY, only counted
        # one failure on many ranks: past GROUP_DETAIL ranks of a group, a rank is a member
        self.rank_groups: dict[GroupKey, RankGroup] = {}
        self._group_sizes: dict[GroupKey, int] = {}  # group -> ranks kept as full hits
        self._folded_keys: dict[tuple, RankGroup] = {}  # hit key of a folded rank -> its group
        self.folded_members = 0
        self._ranks_per_signature: dict[str, int] = {}  # signature -> ranks kept as full hits
        self.past_limit_ranks = 0  # ranks whose first error of a signature came past a limit: kept without facts
        # hit key -> where its full hits are in ``hits`` (the first one tied to a traceback not yet over)
        self._waiting: dict[tuple, list[int]] = {}
        self._waited = 0  # hits that began waiting since the last look
        self.require_evidence: dict[tuple[str, StreamKey], deque[int]] = {}
        self.last_time: dict[StreamKey, tuple[float, str | None]] = {}  # stream -> (time, clock kind)

    def begin(self, source: Source | None) -> None:
        self.source = source
        self.last_time = {}

    def end_source(self) -> None:
        """The source is over, and with it every traceback: each waiting hit is placed."""
        self._settle(None)
        if self.kept != len(self.hits):
            self.hits = [h for h in self.hits if h is not None]

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
        if seen == 0 and foldable(rule, stream, self.summary_open):
            if block is not None or stream in self.tracebacks.open:
                # which ranks' reports are one failure is known once the traceback is over
                self._keep(self._hit(rule, m, text, ctx, stream, line_no, partial, facts_of(m), block, None), waits=True)
                self._waiting[key] = [len(self.hits) - 1]
                self._waited += 1
                if self._waited >= SETTLE_EVERY:
                    self._settle(line_no)
                return
            group = GroupKey(rule.id, m.shared if type(m) is Matched else shared_facts(facts := facts_of(m)))
            place = self._place(group, rule, stream)
            if place is Place.FOLD:
                self._fold(group, key, rule, m, text, ctx, stream, line_no, partial, facts)
            elif place is Place.PAST_LIMIT:
                self._fold(GroupKey(rule.id, PAST_HIT_LIMIT), key, rule, None, text, ctx, stream, line_no, None, {})
                self.past_limit_ranks += 1
            elif place is Place.COUNT:
                self.dropped_hits += 1
            else:
                self._keep(self._hit(rule, m, text, ctx, stream, line_no, partial, facts or facts_of(m), block, group))
            return
        if self.kept >= MAX_HITS and not self._first_error(rule, stream):
            # a repeat, or a hit that cannot be folded (no rank, or a rank that is only a guess)
            if seen == 0 and rule.severity in ERROR_SEVERITIES and self._past_limit(rule, block, stream):
                self._fold(GroupKey(rule.id, PAST_HIT_LIMIT), key, rule, None, text, ctx, stream, line_no, None, {})
                self.past_limit_ranks += 1
                return
            self.dropped_hits += 1
            if seen:  # (a repeat still adds to its finding's count)
                self.repeats[key] = self.repeats.get(key, 0) + 1
            return
        waiting = self._waiting.get(key)
        self._keep(self._hit(rule, m, text, ctx, stream, line_no, partial, facts or facts_of(m), block, None))
        if waiting is not None:  # a later hit of a rank whose first is waiting goes where that one goes
            waiting.append(len(self.hits) - 1)

    def _first_error(self, rule: Rule, stream: StreamKey) -> bool:
        """A stream's first error, kept whole past MAX_HITS (up to MAX_FIRST_ERROR_STREAMS streams)."""
        return (rule.severity in ERROR_SEVERITIES and stream not in self._streams_with_error
                and len(self._streams_with_error) < MAX_FIRST_ERROR_STREAMS)

    def _place(self, group: GroupKey, rule: Rule, stream: StreamKey) -> Place:
        """Where a rank's first hit of a signature goes; KEEP counts it in its group and signature."""
        room = self.folded_members < MAX_MEMBERS
        kept = self._group_sizes.get(group, 0)
        if kept >= GROUP_DETAIL and room:
            return Place.FOLD
        ranks = self._ranks_per_signature.get(rule.id, 0)
        if ranks >= MAX_RANKS_PER_SIGNATURE and room:
            return Place.PAST_LIMIT
        if self.kept >= MAX_HITS and not self._first_error(rule, stream):
            return Place.PAST_LIMIT if rule.severity in ERROR_SEVERITIES and room else Place.COUNT
        self._ranks_per_signature[rule.id] = ranks + 1
        self._group_sizes[group] = kept + 1
        return Place.KEEP

    def _past_limit(self, rule: Rule, block: TracebackBlock | None, stream: StreamKey) -> bool:
        """Whether a hit that cannot be folded can still be kept past MAX_HITS as its rank's number
        and line: a ranked one, not a catch-all's nor one inside a traceback (what explains those is
        decided hit by hit), and only while the folded ranks' bound holds."""
        return (stream[1] is not None and not rule.fallback and block is None and stream not in self.tracebacks.open
                and not rule.requires and self.folded_members < MAX_MEMBERS)

    def _only_counted(self, key: tuple, seen: int) -> bool:
        """Whether this key's further hits are only counted: its rank was folded into a group, or it
        has HITS_PER_KEY hits already."""
        return seen >= HITS_PER_KEY or (seen > 0 and key in self._folded_keys)

    def _keep(self, hit: Hit, waits: bool = False) -> None:
        """A full hit; one that ``waits`` for its traceback counts as its stream's error once placed."""
        if not waits:
            self._count_error(hit)
        self.hits.append(hit)
        self.kept += 1

    def _count_error(self, hit: Hit) -> None:
        if hit.rule.severity in ERROR_SEVERITIES and len(self._streams_with_error) < MAX_FIRST_ERROR_STREAMS:
            self._streams_with_error.add(hit.stream)

    # -- hits that waited for their traceback -----------------------------------------------------
    def _settle(self, line_no: int | None) -> None:
        """Place each waiting hit whose traceback is over (``line_no``: the line the loop is at; None:
        the source ended). Past MAX_WAITING, the oldest half are placed as their tracebacks stand."""
        self._waited = 0
        if not self._waiting:
            return
        over = [key for key, where in self._waiting.items()
                if line_no is None or self.hits[where[0]].block.final(line_no)]
        if not over and len(self._waiting) >= MAX_WAITING:
            over = list(self._waiting)[: MAX_WAITING // 2]
        for key in over:
            self._settle_one(key, self._waiting.pop(key))

    def _settle_one(self, key: tuple, where: list[int]) -> None:
        hit = self.hits[where[0]]
        rule = hit.rule
        group = GroupKey(rule.id, shared_facts(hit.facts), hit.block.report())
        self.kept -= 1  # (the cap is judged without it)
        place = self._place(group, rule, hit.stream)
        if place is Place.KEEP:
            self.kept += 1
            self._count_error(hit)
            hit.group = group
            return
        for i in where:  # the rank's later full hits of the signature go with it
            self.hits[i] = None
        self.kept -= len(where) - 1
        if place is Place.COUNT:
            self.dropped_hits += len(where)
            return
        if place is Place.PAST_LIMIT:
            group = GroupKey(rule.id, PAST_HIT_LIMIT)
            self.past_limit_ranks += 1
        folded = self.rank_groups.get(group)
        if folded is None:
            first = replace(hit, group=group) if place is Place.FOLD else replace(hit, group=group, facts={})
            folded = self.rank_groups[group] = RankGroup(first)
        cited = Cited(hit.column_start, hit.column_end, hit.text, hit.block) if rule.fallback else None
        folded.members.append(Member(hit.stream, hit.line, hit.context.host or hit.source.host, cited))
        folded.hits += len(where)
        self._folded_keys[key] = folded
        self.folded_members += 1

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
        cited = None
        if rule.fallback:  # this rank's hit may be explained away: it keeps what its finding would cite
            start, end = _span(m, partial, ctx)
            cited = Cited(ctx.offset + start, ctx.offset + end, clip(text, 2048), None)
        folded.members.append(Member(stream, line_no, ctx.host or self.source.host, cited))
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
