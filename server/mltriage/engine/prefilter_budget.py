"""Which trigger phrases the pre-filter still lands on: the scan's budget on per-line work.

The pre-filter (``prefilter``) finds every trigger phrase in a block; each line it lands on costs
Python work. Phrases that say nothing new leave it, counted in lines, never in time, so what is
found stays a function of the input:

- a run-description phrase seen often enough (``RunFacts.saturated``: NCCL's channel lines),
- a catalogue phrase past its budget in one diagnosis (``CATALOGUE_BUDGETS``: 1,024 ranks print the
  same warnings),
- a flood: a phrase that landed on ``FLOOD_LANDINGS`` lines in a row that fired nothing while it
  was on at least one line in ``FLOOD_SHARE`` of all (a loop printing one harmless line),
- "finished" phrases once every rank of the source has said it finished, many times over.

A phrase that leaves is skipped in the rest of the block, its matches are dropped from the next
blocks', and it is compiled out of the pre-filter once dropping them has cost what a compile does.
"""

from __future__ import annotations

from collections.abc import Sequence

from mltriage.engine.catalogue_lines import CATALOGUE_BUDGETS, CATALOGUE_MARKERS
from mltriage.engine.launcher import SECTION_TRIGGERS
from mltriage.engine.prefilter import Prefilter, make_prefilter
from mltriage.engine.run_facts import MARKER_LITERALS, MARKERS, RunFacts, is_marker
from mltriage.engine.tracebacks import CHAIN_MARKERS, FRAME_MARKER, IGNORED_MARKER, LAST_ERROR_MARKER, TRACEBACK_HEADER
from mltriage.library import Library, cache_dir
from mltriage.symptoms.vocabulary import SYMPTOM_LITERALS

# Without the flood rule, 10 MB of `Error: x` cost 7 s of per-line Python for no finding; a phrase
# merely common in a long log (`connect to ` in 1,024 ranks' NCCL set-up) stays.
FLOOD_LANDINGS = 20_000
FLOOD_SHARE = 4
FINISH_LITERALS = frozenset(MARKERS["finished"])
FINISH_QUIET_LINES = 256  # finish lines in one input with no new rank among them
FINISH_QUIET_LINES_ONE_RANK = 8  # ... in one rank's own file, whose first finish line is all it says
# Phrases that left are dropped from the matches until this many of their occurrences have been:
# then the pre-filter is compiled without them (a compile costs what dropping ~10^5 matches does)
RECOMPILE_AFTER_HITS = 100_000


def prefilter_for(library: Library) -> Prefilter:
    """One compiled pre-filter per library (kept on it): every signature trigger plus the scanner's
    own structure markers (tracebacks, chains, torchrun's summary) and the run-description phrases."""
    prefilter = library.__dict__.get("_prefilter")
    if prefilter is None:
        builtin = [TRACEBACK_HEADER, IGNORED_MARKER, FRAME_MARKER, LAST_ERROR_MARKER, *CHAIN_MARKERS, *SECTION_TRIGGERS,
                   *MARKER_LITERALS, *CATALOGUE_MARKERS, *sorted(SYMPTOM_LITERALS)]
        prefilter = library.__dict__["_prefilter"] = make_prefilter([*library.trigger_index, *builtin], cache_dir())
    return prefilter


class PrefilterBudget:
    """The pre-filter of one diagnosis and the phrases that have left it. Literals are named by
    their index in the current pre-filter (``text``); ``flooded`` says where each flood was cut."""

    def __init__(self, library: Library) -> None:
        self._index = library.trigger_index
        # run-description phrases seen often enough to say nothing new: dropped from the pre-filter
        self._saturated: set[str] = set()
        # warning and version phrases for the catalogue: past their budget in one diagnosis (all its
        # files), no longer landed on
        self._catalogue_counts: dict[str, int] = {}
        # phrase -> (lines in a row it landed on that fired nothing, the input line where that began)
        self._barren_run: dict[str, tuple[int, int]] = {}
        self.flooded: dict[str, tuple[str, int]] = {}  # phrase -> (source, line) where it left the pre-filter
        self._use(prefilter_for(library))
        self.begin_source(one_rank=False)

    def _use(self, prefilter: Prefilter) -> None:
        self._prefilter = prefilter
        self.text = [lit.decode("utf-8") for lit in prefilter.literals]  # literal index -> phrase
        self._finish_ids = {n for n, lit in enumerate(self.text) if lit in FINISH_LITERALS}
        self._id_of = {lit: n for n, lit in enumerate(self.text)}
        self._phrases: dict[frozenset[int], frozenset[str]] = {}  # literal ids -> phrases (ids change with the pre-filter)
        # run-description markers that are no signature's trigger: they have their own saturation
        self.marker_only = {n for n, lit in enumerate(self.text) if is_marker(lit) and lit not in self._index}
        self._dropped = set(self._saturated)
        # phrases dropped (flooded, or past their catalogue budget) since this pre-filter was compiled:
        # they leave it at the next block, and are skipped in what is left of this one
        self._gone_quiet_ids: set[int] = set()
        self._skipped = 0  # occurrences of phrases that left, dropped from this pre-filter's matches

    def begin_source(self, one_rank: bool) -> None:
        """A new source: its finish lines are counted afresh (one rank's own file says it once)."""
        self._finish_lines = 0  # "finished" phrases seen in this source
        self._finish_new_at = 0  # ... when the last one came from a rank not yet finished
        self._quiet_after = FINISH_QUIET_LINES_ONE_RANK if one_rank else FINISH_QUIET_LINES

    def scan(self, block: bytes) -> tuple[Sequence[int], Sequence[int]]:
        """Every occurrence of a phrase still in the budget: (start offsets, literal indices), by offset."""
        if self._saturated - self._dropped and self._skipped >= RECOMPILE_AFTER_HITS:
            # compiling a pre-filter costs a tenth of a second here; reporting a channel line per peer
            # and channel of every NCCL communicator in a long log costs far more
            self._use(make_prefilter([lit for lit in self.text if lit not in self._saturated], None))
        found = self._prefilter.matches(block)
        left = self._saturated - self._dropped
        if left:  # phrases that left since this pre-filter was compiled: their occurrences are dropped
            gone = {self._id_of[lit] for lit in left}
            kept = [hit for hit in found if hit[1] not in gone]
            self._skipped += len(found) - len(kept)
            found = kept
        if self._finished_quiet():
            # this input's ranks have all said they finished, many times over: nothing new in those lines
            found = [hit for hit in found if hit[1] not in self._finish_ids]
        if not found:
            return [], []
        starts, ids = zip(*found)
        return starts, ids

    def _finished_quiet(self) -> bool:
        return self._finish_lines - self._finish_new_at >= self._quiet_after

    def still_on(self, ids: set[int]) -> set[int]:
        """The literals of one line that have not left since the block's scan (``ids`` is consumed)."""
        if self._gone_quiet_ids:
            ids -= self._gone_quiet_ids
        if self._finished_quiet():
            ids -= self._finish_ids
        return ids

    def phrases(self, ids) -> frozenset[str]:
        key = frozenset(ids)
        found = self._phrases.get(key)
        if found is None:
            found = frozenset(self.text[n] for n in key)
            if len(self._phrases) < 65_536:
                self._phrases[key] = found
        return found

    def note_finish(self, new_rank: bool) -> None:
        """A line holding a "finished" phrase; ``new_rank``: it told of a rank not finished before."""
        self._finish_lines += 1
        if new_rank:
            self._finish_new_at = self._finish_lines

    def note_markers(self, ids: set[int], run: RunFacts) -> None:
        """Run-description markers on a line: those the run facts have heard enough of leave."""
        if ids.isdisjoint(self.marker_only):
            return
        for n in ids & self.marker_only:
            if run.saturated(self.text[n]):
                self._saturated.add(self.text[n])

    def spend_catalogue(self, present: frozenset[str]) -> None:
        """A line offered to the catalogue: each of its catalogue phrases spends one of its budget."""
        for lit in present & CATALOGUE_BUDGETS.keys():
            seen = self._catalogue_counts[lit] = self._catalogue_counts.get(lit, 0) + 1
            if seen == CATALOGUE_BUDGETS[lit]:
                self._go_quiet(self._id_of[lit])

    def note_landing(self, ids: set[int], productive: bool, here: int, source: str, line_no: int) -> None:
        """Count the landings of each phrase of a line that fired nothing (``productive``: it fired,
        or it was read as part of a traceback or summary); a flood's phrase leaves. ``here``: the
        line's number in the whole input, ``line_no`` in its source."""
        if productive and not self._barren_run:
            return  # (the common case on a failing log: nothing to reset)
        for n in ids - self.marker_only:  # run-description markers have their own saturation
            phrase = self.text[n]
            if productive:
                self._barren_run.pop(phrase, None)
                continue
            run, began = self._barren_run.get(phrase, (0, here))
            self._barren_run[phrase] = (run + 1, began)
            if run + 1 >= FLOOD_LANDINGS and (run + 1) * FLOOD_SHARE >= here - began:
                self._go_quiet(n)
                self.flooded[phrase] = (source, line_no)

    def _go_quiet(self, n: int) -> None:
        self._saturated.add(self.text[n])
        self._gone_quiet_ids.add(n)
