"""Error and warning lines kept for the error catalogue: the scanner offers each line that carries a
level marker; the catalogue stage later names those that no signature explained."""

from __future__ import annotations

from dataclasses import dataclass, field

from mltriage.catalogue.nccl import CHAIN_MARKERS, ChainStep, chain_step, thread_of
from mltriage.engine.prefixes import LineContext
from mltriage.engine.reader import Source

# Phrases that mark a line as an error or warning in the stack's log formats (NCCL's WARN, Python
# logging and vLLM's levels, c10's "[W file.cpp:N]", Python warnings). Their lines are only kept here:
# none of them is a finding on its own.
# Lines that state a release outright narrow it best of all.
VERSION_MARKERS = ("NCCL version", "vLLM version", "LLM engine (v", "DeepSpeed info: version=")
ERROR_MARKERS = ("NCCL WARN", "ERROR", "CRITICAL", "[E ")
LEVEL_MARKERS = (*ERROR_MARKERS, "WARNING", "[W ", "Warning: ", *VERSION_MARKERS)
# NCCL's "NCCL INFO init.cc:1357 -> 2" lines (the error chain after a WARN) carry no level marker: their
# file's suffix is what lands on them. Other lines holding only these (glog's "file.cc:N]") are not kept.
CATALOGUE_MARKERS = (*LEVEL_MARKERS, *CHAIN_MARKERS)
# Phrases that are landed on only so often per input: a log prints its release on every rank's start-up
# and may print the same warnings millions of times, while one of each is all the catalogue needs.
# Error phrases have no budget: the failure is often the last of them.
WARNING_BUDGET = 2_000
# A chain is a few lines per failing thread; C++ programs that log file:line on every line (glog) land here too.
CHAIN_BUDGET = 20_000
CATALOGUE_BUDGETS = {"WARNING": WARNING_BUDGET, "Warning: ": WARNING_BUDGET, **{m: 64 for m in VERSION_MARKERS},
                     **{m: CHAIN_BUDGET for m in CHAIN_MARKERS}}
CATALOGUE_SIGNATURE = "catalogue"  # the signature id of findings the catalogue gives (no curated entry)
MAX_LINES = 2_000  # distinct messages kept of each kind (error lines, other lines); repeats only count
MAX_CHAIN_STEPS = 8_192  # NCCL error-chain lines kept (a chain is a handful of lines per failing thread)


@dataclass(slots=True)
class CatalogueLine:
    source: Source
    stream: tuple
    line: int
    text: str
    context: LineContext
    count: int = 1

    @property
    def thread(self) -> tuple[str, int, int] | None:
        """NCCL's host:pid:tid of the line, where its prefix has one."""
        return thread_of(self.text[:self.context.offset])


@dataclass(frozen=True, slots=True)
class ChainLine:
    """One line of an NCCL error chain, where it was logged."""

    source: str
    stream: tuple
    line: int
    thread: tuple[str, int, int] | None
    step: ChainStep
    text: str


@dataclass(slots=True)
class CatalogueLines:
    """Error lines and other lines (warnings, version banners) kept apart, so that no flood of
    warnings can crowd out the error that ended the run."""

    errors: list[CatalogueLine] = field(default_factory=list)
    others: list[CatalogueLine] = field(default_factory=list)
    chains: list[ChainLine] = field(default_factory=list)  # NCCL "file:line -> N" lines, in input order
    _by_message: dict[tuple, CatalogueLine] = field(default_factory=dict)

    @property
    def lines(self) -> list[CatalogueLine]:
        return self.errors + self.others

    def offer(self, source: Source, stream: tuple, line: int, text: str, ctx: LineContext, error: bool) -> None:
        if not error and not any(m in text for m in LEVEL_MARKERS):  # landed on by a chain marker only
            step = chain_step(ctx.message)
            if step is not None and len(self.chains) < MAX_CHAIN_STEPS:
                self.chains.append(ChainLine(source.name, stream, line, thread_of(text[:ctx.offset]), step,
                                             text[:512]))
            return
        key = (source.name, stream[1], ctx.message[:512])
        seen = self._by_message.get(key)
        if seen is not None:
            seen.count += 1
            return
        kept = self.errors if error else self.others
        if len(kept) < MAX_LINES:
            self._by_message[key] = line_kept = CatalogueLine(source, stream, line, text[:2048], ctx)
            kept.append(line_kept)
