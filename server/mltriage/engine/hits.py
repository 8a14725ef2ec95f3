"""A hit: one signature firing on one line of one stream, with what its finding will cite.

The scan's output value: the matcher makes hits, the hit store (``hit_store``) keeps, folds or
counts them, and ``findings`` turns what was kept into findings. It imports none of those stages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from mltriage.engine.prefixes import LineContext
from mltriage.engine.reader import Source
from mltriage.engine.tracebacks import StreamKey, TracebackBlock

if TYPE_CHECKING:
    from mltriage.library import Rule

class GroupKey(NamedTuple):
    """What the ranks of one rank group (engine/rank_groups.py) share: one failure, in any file."""

    signature: str
    facts: tuple  # the facts that are not who or when (rank_groups.shared_facts), or PAST_HIT_LIMIT
    report: tuple | None = None  # for hits tied to a traceback: what a finding reads of it (TracebackBlock.report)


@dataclass(slots=True)
class Hit:
    rule: "Rule"
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


def hit_key(rule_id: str, source: str, rank: int | None, facts: dict[str, str]) -> tuple:
    """What makes two hits the same finding: one signature, one stream, and, for lines without a rank
    prefix, the worker they name (a pid, or a rank / local rank the line itself captured)."""
    if rank is not None:
        return (rule_id, source, rank, None)
    return (rule_id, source, None, (facts.get("pid"), facts.get("rank"), facts.get("local_rank")))
