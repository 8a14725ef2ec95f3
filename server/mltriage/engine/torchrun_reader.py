"""torchrun's failure summary as the line loop meets it: where a section begins and ends, its
entries read straight from the bytes where they have torchrun's own layout, and the worker each
field line speaks for.

``launcher.TorchrunSummary`` parses one section; this reader keeps the open one, hands the loop the
field lines that hold a trigger phrase (matched for that entry's rank), and collects every section's
entries (``worker_failures``) for triage. It matches nothing itself.
"""

from __future__ import annotations

from enum import Enum

from mltriage.engine.launcher import ENTRY_FIELDS, TorchrunSummary, WorkerFailure, section_for

MAX_WORKER_FAILURES = 100_000


class SummaryLine(Enum):
    """What one decoded line was to the open summary."""

    NEW_SECTION = "new-section"  # it opened another section (the open one is closed)
    ENDED = "ended"  # it is no summary's: the section closed before it
    INSIDE = "inside"  # an entry, a field or a line of an entry's traceback


class TorchrunReader:
    def __init__(self, longest: int) -> None:
        self.longest = longest  # a field line longer than this is read as a line, not from the bytes
        self.summary: TorchrunSummary | None = None
        self.worker_failures: list[tuple[str, WorkerFailure]] = []  # (source, entry) of every section
        self._source = ""

    def begin(self, source: str) -> None:
        self._source = source
        self.summary = None

    @property
    def rank(self) -> int | None:
        """The rank of the entry being read, if it named one."""
        entries = self.summary.entries if self.summary is not None else None
        return entries[-1].rank if entries else None

    def open_if_section(self, message: str, line_no: int) -> bool:
        """Whether this line opens a section (``Failures:``, ``Root Cause ...:``): then it is open."""
        section = section_for(message)
        if section is None:
            return False
        self.close()
        self.summary = TorchrunSummary(section=section, start=line_no)
        return True

    def close(self) -> None:
        if self.summary is not None:
            self.worker_failures.extend((self._source, e) for e in self.summary.entries)
            del self.worker_failures[MAX_WORKER_FAILURES:]
            self.summary = None

    # -- straight from the bytes ---------------------------------------------------------------
    def read_entry(self, block: bytes, pos: int, line_no: int) -> tuple[int, list[tuple[int, int, int]]] | None:
        """A whole standard entry at ``pos`` (its first line is ``line_no``): where it ends, and its
        field lines as (start, end, line number); None if there is none."""
        entry = self.summary.read_entry(block, pos, line_no)
        if entry is None:
            return None
        fields = []
        for k in range(len(ENTRY_FIELDS)):
            value_start, end = entry.span(2 + k)
            fields.append((block.rfind(b"\n", 0, value_start) + 1, end, line_no + 1 + k))
        return entry.end(), fields

    def read_fields(self, block: bytes, pos: int, limit: int, line_no: int) -> tuple[int, int]:
        """Entry and field lines before ``limit`` (the next trigger phrase: that line is the loop's):
        where reading stopped and how many lines were read."""
        return self.summary.feed_fields(block, pos, limit, self.longest, line_no)

    def field_line(self, block: bytes, pos: int) -> int | None:
        """The field line at ``pos`` (it holds a trigger phrase), read into the current entry: where
        it ends, or None if it is no such line."""
        return self.summary.field_line(block, pos, self.longest)

    # -- a decoded line --------------------------------------------------------------------------
    def read_line(self, message: str, line_no: int) -> SummaryLine:
        if self.open_if_section(message, line_no):
            return SummaryLine.NEW_SECTION
        if not self.summary.feed(message, line_no):  # past a launcher's or container's prefix
            self.close()
            return SummaryLine.ENDED
        return SummaryLine.INSIDE
