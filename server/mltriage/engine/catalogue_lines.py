"""Error and warning lines kept for the error catalogue: the scanner offers each line that carries a
level marker; the catalogue stage later names those that no signature explained."""

from __future__ import annotations

from dataclasses import dataclass, field

from mltriage.engine.prefixes import LineContext
from mltriage.engine.reader import Source

# Phrases that mark a line as an error or warning in the stack's log formats (NCCL's WARN, Python
# logging and vLLM's levels, c10's "[W file.cpp:N]", Python warnings). Their lines are only kept here:
# none of them is a finding on its own.
# Lines that state a release outright narrow it best of all.
VERSION_MARKERS = ("NCCL version", "vLLM version", "LLM engine (v", "DeepSpeed info: version=")
ERROR_MARKERS = ("NCCL WARN", "ERROR", "CRITICAL", "[E ")
CATALOGUE_MARKERS = (*ERROR_MARKERS, "WARNING", "[W ", "Warning: ", *VERSION_MARKERS)
# Phrases that are landed on only so often per input: a log prints its release on every rank's start-up
# and may print the same warnings millions of times, while one of each is all the catalogue needs.
# Error phrases have no budget: the failure is often the last of them.
WARNING_BUDGET = 2_000
CATALOGUE_BUDGETS = {"WARNING": WARNING_BUDGET, "Warning: ": WARNING_BUDGET, **{m: 64 for m in VERSION_MARKERS}}
CATALOGUE_SIGNATURE = "catalogue"  # the signature id of findings the catalogue gives (no curated entry)
MAX_LINES = 2_000  # distinct messages kept of each kind (error lines, other lines); repeats only count


@dataclass(slots=True)
class CatalogueLine:
    source: Source
    stream: tuple
    line: int
    text: str
    context: LineContext
    count: int = 1


@dataclass(slots=True)
class CatalogueLines:
    """Error lines and other lines (warnings, version banners) kept apart, so that no flood of
    warnings can crowd out the error that ended the run."""

    errors: list[CatalogueLine] = field(default_factory=list)
    others: list[CatalogueLine] = field(default_factory=list)
    _by_message: dict[tuple, CatalogueLine] = field(default_factory=dict)

    @property
    def lines(self) -> list[CatalogueLine]:
        return self.errors + self.others

    def offer(self, source: Source, stream: tuple, line: int, text: str, ctx: LineContext, error: bool) -> None:
        key = (source.name, stream[1], ctx.message[:512])
        seen = self._by_message.get(key)
        if seen is not None:
            seen.count += 1
            return
        kept = self.errors if error else self.others
        if len(kept) < MAX_LINES:
            self._by_message[key] = line_kept = CatalogueLine(source, stream, line, text[:2048], ctx)
            kept.append(line_kept)
