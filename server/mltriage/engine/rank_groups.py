"""One failure on many ranks, kept once: the same signature with the same facts on rank after rank.

A thousand ranks that all report "Watchdog caught collective operation timeout" for one SeqNum, or
torchrun's failure list for 40,000 SIGKILLed workers, or 8,192 rank files that each end in the same
traceback, are one failure seen by many ranks. The hit store keeps a full hit for the first
``GROUP_DETAIL`` ranks of such a group and, past them, only each further rank's number, line and
file (a ``Member``): no hit, no finding, no text per rank. ``build_findings`` then folds the whole
group into one finding whose ``ranks`` lists every member, and triage counts each of those ranks as
a reporter.

What may differ between members is only who and when (``IDENTITY_FACTS``, and the rank prefixes of
a traceback's lines). A rank whose facts differ (another SeqNum, another exception) is in no group
with the others, so the odd one out still stands alone. Rules that need a supporting line, and
lines whose rank is only a guess (a launcher's line names its worker by pid) are never folded. A
hit tied to a traceback joins its group once the traceback is over (``TracebackBlock.final``): the
exception that ends it is part of what the ranks must share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from mltriage.engine.hits import Hit
from mltriage.engine.tracebacks import StreamKey, TracebackBlock

if TYPE_CHECKING:
    from mltriage.library import Rule

GROUP_DETAIL = 16  # ranks of one group kept as full hits; each further rank is a number and a line
MAX_MEMBERS = 200_000  # folded ranks over all groups of one diagnosis (ints, not hits)
# Facts that say which worker or when, not what failed: they differ between the ranks of one failure.
IDENTITY_FACTS = frozenset({"pid", "rank", "local_rank", "host", "node", "node_id", "node_ip", "device",
                            "cuda_device", "gpu", "elapsed_ms", "thread"})

# The facts part of the group key of ranks whose first error of a signature came past a limit
# (MAX_HITS full hits, or MAX_RANKS_PER_SIGNATURE ranks of that signature whose details differ):
# each such rank is still kept, as its number and line, but its facts are not.
PAST_HIT_LIMIT = (("", "past the hit limit"),)


class Cited(NamedTuple):
    """What a catch-all's finding would cite for one folded rank, should that rank's hit be the one
    left standing: its columns, its line's text and the traceback it is tied to."""

    column_start: int
    column_end: int
    text: str
    block: TracebackBlock | None


class Member(NamedTuple):
    """One folded rank: where it reported the group's failure."""

    stream: StreamKey  # (its file, its rank)
    line: int
    host: str | None
    cited: Cited | None = None  # a catch-all (fallback) signature's member only


@dataclass
class RankGroup:
    """The ranks of one group past its first ``GROUP_DETAIL``, and hit counts.

    A catch-all (fallback) signature's hit may be explained away by a specific one nearby, rank by
    rank; so its members also keep what their own hit would cite, for the finding to cite the first
    rank whose hit stands when the full ones did not."""

    first: Hit  # the first folded rank's hit: what the group's finding is made from if no full hit survives
    members: list[Member] = field(default_factory=list)
    hits: int = 0  # hits of all members, repeats included


def foldable(rule: "Rule", stream: StreamKey, rank_is_known: bool) -> bool:
    """Whether a hit may join other ranks' in a group; never where it must stay on its own."""
    if stream[1] is None or rule.requires or rule.require_sources:
        return False
    # a launcher's line names its worker by pid, and triage maps it to a rank from torchrun's list
    return rule.reported_by != "launcher" or rank_is_known


def shared_facts(facts: dict[str, str]) -> tuple:
    """The facts that must be equal for hits of different ranks to be one failure."""
    return tuple(sorted((k, v) for k, v in facts.items() if k not in IDENTITY_FACTS))


def past_limit_note(ranks: list[int]) -> str:
    from mltriage.templates import ranks_text

    return (f"{len(ranks):,} more ranks (ranks {ranks_text(ranks, width=120)}) reported this past the engine's limits on kept details: "
            "each rank is counted here with its line, but their details (which differed between ranks) were not kept")


def folded_note(ranks: list[int], representative: int | None) -> str:
    from mltriage.templates import ranks_text

    at = f" at rank {representative}'s line" if representative is not None else ""
    return (f"{len(ranks):,} ranks reported this with the same details (ranks {ranks_text(ranks)}): "
            f"one finding stands for all of them, shown{at}")
