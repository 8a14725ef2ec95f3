"""The diagnosis as data: what the CLI prints, ``--json`` exports and the language server shows.

``Diagnosis.to_json()`` is the versioned contract ``mltriage.diagnosis/v1`` (docs/diagnosis-schema.md).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

from mltriage.lazy_pattern import lazy

SCHEMA = "mltriage.diagnosis/v1"


class Severity(StrEnum):
    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Role(StrEnum):
    """A finding's part in the failure, as triage (and the causes it weighs) decide it."""

    ROOT_CAUSE = "root-cause"
    COLLATERAL = "collateral"  # a consequence of another rank's failure
    CONTEXT = "context"  # explained by another finding, or background


class ContextReason(StrEnum):
    """Why a stage found that a finding is not what broke: evidence for triage, which alone sets roles."""

    AFTER_INTERRUPT = "after-interrupt"  # printed after the user interrupted the run (Ctrl-C / SIGINT)
    WARNING_LEVEL = "warning-level"  # logged at WARNING level while an error-level line ended the run
    CUT_TRACEBACK = "cut-traceback"  # a traceback the log cut before its exception line, where another finding names the error
    SURVIVED = "survived"  # the process carried on and made progress after it
    EXPLAINED = "explained"  # a cause that fired explains it, or outranks it on its own lines


class RankVerdict(StrEnum):
    INITIATOR = "initiator"
    COLLATERAL = "collateral"
    HEALTHY = "healthy"
    UNKNOWN = "unknown"


class Clock(StrEnum):
    """What a finding's timestamp is: a full date and time, or a time of day without a date."""

    WALL = "wall"
    TIME = "time"


class FindingKind(StrEnum):
    CRASH = "crash"
    HANG = "hang"
    SILENT_CORRUPTION = "silent-corruption"
    PERFORMANCE = "performance"
    CONFIGURATION = "configuration"


class ReportedBy(StrEnum):
    WORKER = "worker"  # the failing process's own words
    LAUNCHER = "launcher"  # a supervisor's line about a worker (torchrun's agent, deepspeed, mpirun)


class FailureKind(StrEnum):
    CRASH = "crash"  # a process died
    HANG = "hang"  # ranks waited until a timeout


class FailureDomain(StrEnum):
    COMPUTE = "compute"
    COMMUNICATION = "communication"


SEVERITY_ORDER: dict[str, int] = {Severity.CRITICAL: 3, Severity.ERROR: 2, Severity.WARNING: 1, Severity.INFO: 0}
ERROR_SEVERITIES = frozenset({Severity.CRITICAL, Severity.ERROR})  # what makes a run a failure

class _EnumFields:
    """A record whose fields named in ``_ENUMS`` hold enums: a string given at construction or assigned later is
    checked and converted there (a value the enum does not have is a ValueError: a bug, not a silent string)."""

    _ENUMS: ClassVar[dict[str, type[StrEnum]]] = {}

    def __setattr__(self, name: str, value: object) -> None:
        kind = self._ENUMS.get(name)
        if kind is not None and value is not None and not isinstance(value, kind):
            value = kind(value)
        object.__setattr__(self, name, value)


def _fields_json(record: Any) -> dict[str, Any]:
    """A plain record's JSON: every field, in order, as it is (the generated schema reads the same fields)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


ENV_NAME = lazy(re.compile, r"[A-Za-z_][A-Za-z0-9_]*")


def shell_value(value: str) -> str:
    """A value as the shell should see it: literal (single-quoted, so ``$(``, backticks and quotes
    in it do nothing), except a value a signature itself computes with a command substitution
    (``$(ip -o -4 route ...)``), which runs. Which values those are is decided by where the value
    came from, the signature library, never by its shape: a fact from a log may hold ``$(``."""
    if "$(" in value and value in _computed_values():
        return f'"{value}"'
    return shlex.quote(value)


def _computed_values() -> frozenset[str]:
    from mltriage.library import load_library  # lazily: the library imports this module

    try:
        return load_library().computed_values
    except (OSError, ValueError):  # no library: every value is literal
        return frozenset()


def export_line(name: str, value: str) -> str:
    """The one form of an export line everywhere (reports, SARIF, explain, launch scripts); a name
    the shell would not take as a variable's is refused (ValueError), never pasted."""
    if not ENV_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not an environment variable name")
    return f"export {name}={shell_value(value)}"


@dataclass
class CatalogueRef:
    """Where upstream source raises or logs this message, in the releases this log can come from."""

    id: str  # the catalogue entry (``mltriage catalogue show ID``)
    project: str
    kind: str  # exception type or log level
    format: str  # the message as the source writes it, ``{name}`` for each value
    function: str | None
    site: str  # ``path:line`` in the newest of ``releases``
    releases: str  # ``vLLM 0.5.4–0.10.1``
    link: str | None  # that line at a pinned upstream commit

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "project": self.project, "kind": self.kind, "format": self.format,
                "function": self.function, "site": self.site, "releases": self.releases, "link": self.link}


@dataclass(frozen=True)
class LaunchFlag:
    """A flag the fix adds to the launch command (``vllm serve``, ``torchrun``)."""

    command: str  # the program (and subcommand) that takes it, as typed
    flag: str  # the long option
    value: str | None  # None for a switch
    why: str

    @property
    def argument(self) -> str:
        """The flag as it goes on the command line (one form everywhere, like export lines)."""
        return self.flag if self.value is None else f"{self.flag} {shell_value(self.value)}"

    @property
    def instruction(self) -> str:
        """The step in words (Markdown code spans), as reports, hovers and the entry say it."""
        return f"Add `{self.argument}` to the `{self.command}` command"

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "flag": self.flag, "value": self.value, "why": self.why, "argument": self.argument}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "LaunchFlag":
        value = data.get("value")
        return cls(str(data["command"]), str(data["flag"]), None if value is None else str(value), str(data.get("why", "")))


@dataclass
class Fix:
    summary: str = ""
    env: dict[str, str] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    flags: list[LaunchFlag] = field(default_factory=list)
    relaunch: str | None = None  # the log's own launch command with ``flags`` added, when the log shows it

    def exports(self) -> list[str]:
        return [export_line(name, value) for name, value in self.env.items()]

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary, "env": dict(self.env), "flags": [f.to_json() for f in self.flags],
                "relaunch": self.relaunch, "steps": list(self.steps), "commands": list(self.commands)}


@dataclass
class Finding(_EnumFields):
    _ENUMS = {"severity": Severity, "proposed_role": Role, "verdict": Role, "clock": Clock, "kind": FindingKind,
              "reported_by": ReportedBy, "context_reason": ContextReason}

    signature: str
    title: str
    category: str
    severity: Severity
    proposed_role: Role  # what its signature (or the stage that made it) says it is; triage gives the role
    rank: int | None
    host: str | None
    source: str
    lines: tuple[int, int]
    line: int
    column_start: int
    column_end: int
    evidence: list[str]
    facts: dict[str, str | int]  # what the log said, typed at capture: numbers a pattern captures as digits are ints
    root_cause: str
    fix: Fix
    verify: str
    confidence: float
    count: int = 1
    p2p_related: bool = False
    timestamp: float | None = None
    clock: Clock | None = None  # the timestamp's kind: a full date, or a time of day with no date
    ranks: list[int] = field(default_factory=list)  # every rank that reported it (merged findings)
    notes: list[str] = field(default_factory=list)  # explanations added by triage or the P2P probe
    caused_by: int | None = None  # index of the root-cause finding this one is a consequence of
    kind: FindingKind = FindingKind.CRASH  # the signature's kind
    reported_by: ReportedBy = ReportedBy.WORKER
    area: str = ""  # the signature's area (nccl, cuda, torch-distributed, vllm ...); "" for catalogue findings
    generic: bool = False  # a catch-all layer (any exception, any CUDA error): a specific finding outranks it
    catalogue: CatalogueRef | None = None  # the upstream source site of this message, from the error catalogue
    context_reason: ContextReason | None = None  # a stage's evidence that this is not what broke (triage weighs it)
    verdict: Role | None = field(default=None, repr=False, compare=False)  # triage's alone (engine/triage.py)
    block: int | None = field(default=None, repr=False, compare=False)  # internal: traceback block identity
    # internal: for a finding many ranks share (engine/rank_groups.py), each rank's own line, and where
    # some of them reported it in another file or on another host, each rank's (source, host)
    rank_lines: dict[int, int] | None = field(default=None, repr=False, compare=False)
    rank_places: dict[int, tuple[str, str | None]] | None = field(default=None, repr=False, compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity in ERROR_SEVERITIES

    @property
    def role(self) -> Role:
        """Triage's verdict; before triage, what the evidence so far says (context once a stage found a reason)."""
        if self.verdict is not None:
            return self.verdict
        return Role.CONTEXT if self.context_reason is not None else self.proposed_role

    def set_aside(self, reason: ContextReason, note: str) -> None:
        """A stage's finding that this is not what broke, with the words that say why."""
        self.context_reason = reason
        self.notes.append(note)

    @property
    def reporting_ranks(self) -> list[int]:
        """Every rank this finding speaks for: one, or all those of a failure many ranks shared."""
        if self.ranks:
            return self.ranks
        return [self.rank] if self.rank is not None else []

    def line_of(self, rank: int) -> int:
        """Where ``rank`` reported it (a shared finding cites its first rank's line)."""
        return self.rank_lines.get(rank, self.line) if self.rank_lines else self.line

    def source_of(self, rank: int) -> str:
        """The file in which ``rank`` reported it."""
        return self.rank_places[rank][0] if self.rank_places and rank in self.rank_places else self.source

    def host_of(self, rank: int) -> str | None:
        return self.rank_places[rank][1] if self.rank_places and rank in self.rank_places else self.host

    @property
    def rank_label(self) -> str | None:
        """"rank 3", or for a failure many ranks shared "40,000 ranks (0–39999)"."""
        ranks = self.reporting_ranks
        if len(ranks) > 1:
            from mltriage.templates import ranks_text

            return f"{len(ranks):,} ranks ({ranks_text(ranks, width=60)})"
        return f"rank {ranks[0]}" if ranks else None

    def to_json(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "title": self.title,
            "category": self.category,
            "area": self.area,
            "severity": self.severity,
            "role": self.role,
            "rank": self.rank,
            "ranks": list(self.ranks),
            "host": self.host,
            "source": self.source,
            "lines": [self.lines[0], self.lines[1]],
            "line": self.line,
            "columns": [self.column_start, self.column_end],
            "evidence": list(self.evidence),
            "facts": dict(self.facts),
            "root_cause": self.root_cause,
            "fix": self.fix.to_json(),
            "verify": self.verify,
            "confidence": round(self.confidence, 3),
            "count": self.count,
            "p2p_related": self.p2p_related,
            "timestamp": self.timestamp,
            "clock": self.clock,
            "notes": list(self.notes),
            "caused_by": self.caused_by,
            "kind": self.kind,
            "generic": self.generic,
            "reported_by": self.reported_by,
            "context_reason": self.context_reason,
            "catalogue": self.catalogue.to_json() if self.catalogue else None,
        }


@dataclass
class WorkerFailure:
    """One failed worker of torchrun's failure summary (engine/launcher.py reads them)."""

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

    def to_json(self) -> dict[str, Any]:
        return _fields_json(self)


@dataclass
class TimelineEntry(_EnumFields):
    """One error-level finding on the timeline (triage puts them in time order)."""

    rank: int | None
    line: int
    source: str
    timestamp: float | None
    signature: str
    role: Role

    _ENUMS = {"role": Role}

    def to_json(self) -> dict[str, Any]:
        return _fields_json(self)


@dataclass
class FlightRecorderSummary:
    """What one rank's PyTorch Flight Recorder dump says: the collectives it scheduled, started and completed."""

    rank: int
    source: str
    last_scheduled: int | None
    last_started: int | None
    last_completed: int | None
    stuck_op: str | None

    def to_json(self) -> dict[str, Any]:
        return _fields_json(self)


@dataclass
class RankRole(_EnumFields):
    rank: int
    role: RankVerdict
    host: str | None = None
    first_error: str | None = None  # signature id of its earliest error-level finding
    first_line: int | None = None
    source: str | None = None
    why: str = ""

    _ENUMS = {"role": RankVerdict}

    def to_json(self) -> dict[str, Any]:
        return _fields_json(self)


@dataclass
class Diagnosis(_EnumFields):
    findings: list[Finding]
    sources: list[str]
    skipped: list[dict[str, str]] = field(default_factory=list)  # inputs that are no logs (binaries, FIFOs)
    unread: list[dict[str, str]] = field(default_factory=list)  # inputs that could not be read: incomplete
    initiating_rank: int | None = None
    initiating_host: str | None = None
    explanation: str = ""
    ranks: list[RankRole] = field(default_factory=list)
    failure_kind: FailureKind | None = None
    failure_domain: FailureDomain | None = None
    timeline: list[TimelineEntry] = field(default_factory=list)
    lines_read: int = 0
    bytes_read: int = 0
    warnings: list[str] = field(default_factory=list)
    probe: dict[str, Any] | None = None
    launcher: list[WorkerFailure] = field(default_factory=list)  # torchrun's per-worker failure entries
    flight_recorder: list[FlightRecorderSummary] = field(default_factory=list)  # per-rank summaries of the dumps
    topology: dict[str, Any] | None = None  # facts from pasted nvidia-smi topo -m / p2pBandwidthLatencyTest
    root_cause_index: int | None = None  # decided by triage alone: the index in findings of the root cause
    releases: dict[str, str] = field(default_factory=dict)  # project -> releases this log can come from (catalogue)
    run: dict[str, Any] | None = None  # the run model (mltriage.run_model.RunModel.to_json): phases, stop, GPUs, env

    _ENUMS = {"failure_kind": FailureKind, "failure_domain": FailureDomain}

    @property
    def status(self) -> str:
        failed = any(f.is_error for f in self.findings)
        # Flight Recorder dumps alone can prove a hang: a rank that never issued the collective
        stuck = bool(self.flight_recorder) and self.initiating_rank is not None
        if failed or stuck:
            return "failure"
        # what could not be read may hold the failure: never call such a result healthy
        return "healthy" if self.complete else "incomplete"

    @property
    def complete(self) -> bool:
        """Every input was read (none is listed in ``unread``)."""
        return not self.unread

    @property
    def root_cause(self) -> Finding | None:
        """The finding triage named as the root cause (``root_cause_index``); every reader uses this."""
        i = self.root_cause_index
        return self.findings[i] if i is not None and 0 <= i < len(self.findings) else None

    def to_json(self) -> dict[str, Any]:
        from mltriage.masking import ensure_masked  # lazily: masking loads its rules on first use

        ensure_masked(self)  # no export of a diagnosis that was not masked
        return {
            "schema": SCHEMA,
            "status": self.status,
            "complete": self.complete,
            "initiating_rank": self.initiating_rank,
            "initiating_host": self.initiating_host,
            "explanation": self.explanation,
            "failure_kind": self.failure_kind,
            "failure_domain": self.failure_domain,
            "findings": [f.to_json() for f in self.findings],
            "root_cause_index": self.root_cause_index,
            "releases": dict(self.releases),
            "ranks": [r.to_json() for r in self.ranks],
            "timeline": [t.to_json() for t in self.timeline],
            "inputs": {
                "sources": list(self.sources),
                "skipped": list(self.skipped),
                "unread": list(self.unread),
                "lines": self.lines_read,
                "bytes": self.bytes_read,
            },
            "launcher": [w.to_json() for w in self.launcher],
            "flight_recorder": [t.to_json() for t in self.flight_recorder],
            "warnings": list(self.warnings),
            "probe": self.probe,
            "topology": self.topology,
            "run": self.run,
        }
