"""Read torchrun's failure summary (the block printed with ``ChildFailedError``).

torchrun lists every failed worker (rank, host, exit code, signal, error file) under
``Failures:`` and one of them under ``Root Cause (first observed failure):``. That pick is by the
smallest whole-second timestamp and stamps signal-killed workers with the time the agent noticed,
so it is often a victim; the entries themselves (who was SIGKILLed, who exited on its own, who was
SIGTERMed by the agent afterwards) are strong evidence, and triage weighs them itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mltriage.lazy_pattern import lazy
from mltriage.masking import clip
from mltriage.model import WorkerFailure  # the typed entry, kept in the diagnosis's model
from mltriage.numbers import parse_int

SECTION_TRIGGERS = ("Root Cause (first observed failure):", "Failures:")
# Every line of a summary goes through these (280,000 lines for 40,000 workers), so they are plain
# `re`: anchored, every repetition bounded, so no line can make them slow (as the prefix parser's).
_LINE = lazy(re.compile, r"[ \t]{0,64}(?:\[(\d{1,12})\]:[ \t]{0,64}$"
                   r"|(time|host|rank|exitcode|error_file|traceback)[ \t]{0,64}:[ \t]?(.{0,16384}))", re.S)
# An entry's field line read straight from the bytes (printable ASCII, a line break after it): what
# any other line holds, a control character, a non-ASCII byte, goes the scanner's way instead.
_FIELD_BYTES = lazy(re.compile, rb"[ \t]{1,64}(time|host|rank|exitcode|error_file|traceback)[ \t]{0,64}:[ \t]?([\x20-\x7e\t]{0,16384})\n"
                          rb"|[ \t]{0,64}\[(\d{1,12})\]:[ \t]{0,64}\n")  # (or the next entry's "[rank]:" line)
# A whole entry as torchrun prints it (torch/distributed/elastic/multiprocessing/errors/__init__.py,
# _FAILURE_FORMAT_TEMPLATE, 1.11 to today): its six fields in their order, one line each. Anything
# else (older releases' `msg:`, a traceback over several lines) is read line by line.
ENTRY_FIELDS = ("time", "host", "rank", "exitcode", "error_file", "traceback")
_ENTRY_BYTES = lazy(re.compile, rb"[ \t]{0,64}\[(\d{1,12})\]:[ \t]{0,64}\n"
                          + b"".join(rb"[ \t]{1,64}" + name.encode() + rb"[ \t]{0,64}:[ \t]?([\x20-\x7e\t]{0,2048})\n"
                                     for name in ENTRY_FIELDS))
_RANK = lazy(re.compile, r"(\d{1,20})(?: \(local_rank: (\d{1,20})\))?")
_EXIT = lazy(re.compile, r"(-?\d{1,20})(?: \(pid: (\d{1,20})\))?(?:[ \t]{1,64}\((SIG[A-Z0-9]{1,16})\))?")
_SIGNAL_IN_TRACEBACK = lazy(re.compile, r"Signal (\d{1,4}) \((SIG[A-Z0-9]{1,16})\) received by PID (\d{1,20})")


@dataclass
class TorchrunSummary:
    """Collects the entries of one section, line by line, until the section ends."""

    section: str
    start: int
    entries: list[WorkerFailure] = field(default_factory=list)
    idle: int = 0

    def feed(self, message: str, line_no: int) -> bool:
        """Returns False once the section is over."""
        if message.startswith("====") or (message.startswith("----") and self.entries):
            return False
        m = _LINE.match(message)
        if m is not None:
            if m.group(1) is not None:
                self.entries.append(WorkerFailure(section=self.section, line=line_no))
                self.idle = 0
                return True
            if self.entries and message[:1] in " \t":  # a field is indented under its entry
                self._set(self.entries[-1], m.group(2), m.group(3).strip())
                self.idle = 0
                return True
        self.idle += 1
        return self.idle < 40  # traceback bodies inside an entry are long; give up eventually

    def feed_fields(self, block: bytes, pos: int, limit: int, longest: int, first_line: int) -> tuple[int, int]:
        """Read entry and field lines (``first_line`` is the first's number) from ``block`` at ``pos`` while they lie before
        ``limit`` (where the next trigger phrase is: that line is the scanner's) and are at most
        ``longest`` bytes. Returns where reading stopped and how many lines were read: 240,000
        field lines of 40,000 workers cost a regex match each, not a decoded, parsed line."""
        match = _FIELD_BYTES.match
        read = 0
        while True:
            m = match(block, pos)
            if m is None or m.end() > limit or m.end() - pos > longest:
                break
            if m.group(3) is not None:  # an entry: "[3]:"
                self.entries.append(WorkerFailure(section=self.section, line=first_line + read))
            elif self.entries:
                self._set(self.entries[-1], m.group(1).decode("ascii"), m.group(2).decode("ascii").strip())
            else:
                break  # a field before any entry: the scanner's way, as a line that is no summary's
            read += 1
            pos = m.end()
        if read:
            self.idle = 0
        return pos, read

    def read_entry(self, block: bytes, pos: int, line_no: int):
        """Read a whole standard entry (seven lines) at ``pos``; its match (group 2 + k holds field k's
        value, a line break after it), or None."""
        m = _ENTRY_BYTES.match(block, pos)
        if m is None:
            return None
        entry = WorkerFailure(section=self.section, line=line_no)
        self.entries.append(entry)
        for k, name in enumerate(ENTRY_FIELDS):
            self._set(entry, name, m.group(2 + k).decode("ascii").strip())
        self.idle = 0
        return m

    def field_line(self, block: bytes, pos: int, longest: int) -> int | None:
        """Read the one field line at ``pos`` (one holding a trigger phrase: the caller matches it)
        into the current entry; where it ends (its line break), or None if it is no such line."""
        if not self.entries:
            return None
        m = _FIELD_BYTES.match(block, pos)
        if m is None or m.group(3) is not None or m.end() - pos > longest:
            return None
        self._set(self.entries[-1], m.group(1).decode("ascii"), m.group(2).decode("ascii").strip())
        self.idle = 0
        return m.end() - 1

    @staticmethod
    def _set(entry: WorkerFailure, key: str, value: str) -> None:
        if key == "rank":
            m = _RANK.match(value)
            if m:
                entry.rank = parse_int(m.group(1))
                entry.local_rank = parse_int(m.group(2))
        elif key == "exitcode":
            m = _EXIT.match(value)
            if m:
                entry.exitcode = parse_int(m.group(1))
                entry.pid = parse_int(m.group(2))
                entry.signal = m.group(3)
        elif key == "traceback":
            entry.traceback = clip(value, 300)
            sig = _SIGNAL_IN_TRACEBACK.search(value)
            if sig and not entry.signal:
                entry.signal = sig.group(2)
        elif key == "host":
            entry.host = value
        elif key == "time":
            entry.time = value
        elif key == "error_file":
            entry.error_file = None if value == "<N/A>" else value


def section_for(message: str) -> str | None:
    stripped = message.strip()
    if stripped == "Root Cause (first observed failure):":
        return "root"
    if stripped == "Failures:":
        return "failures"
    return None
