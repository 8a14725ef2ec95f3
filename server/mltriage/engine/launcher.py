"""Read torchrun's failure summary (the block printed with ``ChildFailedError``).

torchrun lists every failed worker (rank, host, exit code, signal, error file) under
``Failures:`` and one of them under ``Root Cause (first observed failure):``. That pick is by the
smallest whole-second timestamp and stamps signal-killed workers with the time the agent noticed,
so it is often a victim; the entries themselves (who was SIGKILLed, who exited on its own, who was
SIGTERMed by the agent afterwards) are strong evidence, and triage weighs them itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mltriage.engine import timed_regex
from mltriage.masking import clip
from mltriage.numbers import parse_int

SECTION_TRIGGERS = ("Root Cause (first observed failure):", "Failures:")
_ENTRY = timed_regex.compile(r"^\s*\[(\d+)\]:\s*$")
_FIELD = timed_regex.compile(r"^\s+(time|host|rank|exitcode|error_file|traceback)\s*:\s?(.*)$")
_RANK = timed_regex.compile(r"(\d+)(?: \(local_rank: (\d+)\))?")
_EXIT = timed_regex.compile(r"(-?\d+)(?: \(pid: (\d+)\))?(?:\s+\((SIG\w+)\))?")
_SIGNAL_IN_TRACEBACK = timed_regex.compile(r"Signal (\d+) \((SIG\w+)\) received by PID (\d+)")


@dataclass
class WorkerFailure:
    section: str  # "failures" | "root"
    line: int
    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    time: str | None = None
    exitcode: int | None = None
    pid: int | None = None
    signal: str | None = None
    error_file: str | None = None
    traceback: str | None = None

    @property
    def killed_by_agent(self) -> bool:
        return self.signal == "SIGTERM" or self.exitcode == -15

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


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
        if timed_regex.match(_ENTRY, message):
            self.entries.append(WorkerFailure(section=self.section, line=line_no))
            self.idle = 0
            return True
        m = timed_regex.match(_FIELD, message)
        if m and self.entries:
            self._set(self.entries[-1], m.group(1), m.group(2).strip())
            self.idle = 0
            return True
        self.idle += 1
        return self.idle < 40  # traceback bodies inside an entry are long; give up eventually

    @staticmethod
    def _set(entry: WorkerFailure, key: str, value: str) -> None:
        if key == "rank":
            m = timed_regex.match(_RANK, value)
            if m:
                entry.rank = parse_int(m.group(1))
                entry.local_rank = parse_int(m.group(2))
        elif key == "exitcode":
            m = timed_regex.match(_EXIT, value)
            if m:
                entry.exitcode = parse_int(m.group(1))
                entry.pid = parse_int(m.group(2))
                entry.signal = m.group(3)
        elif key == "traceback":
            entry.traceback = clip(value, 300)
            sig = timed_regex.search(_SIGNAL_IN_TRACEBACK, value)
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
