"""Multi-rank triage: which rank broke first, and which only fell over after it.

The loudest, last or most numerous errors are usually victims, so the initiator is chosen from
evidence, strongest first:

1. a rank's own root-cause failure (OOM, device assert, Xid, a Python exception) that only it,
   or a minority of ranks, reported;
2. the odd one out: where many ranks report the same collective failure, the one whose
   collective (op, shape, sequence number, call site) differs from everyone else's;
3. the silent rank: in a hang, the one rank that never reported the collective the others timed
   out in (it never entered it), or whose last completed collective lags behind;
4. launcher evidence: the worker torchrun saw die on its own (a signal such as SIGKILL, or its own
   exit code) rather than one it stopped with SIGTERM afterwards;
5. timestamps, last: the earliest error across ranks (clocks of different hosts may be skewed).

Each rank gets a role (initiator / collateral / healthy / unknown); the diagnosis gets the chain
of evidence in words, a crash-or-hang and a compute-or-communication classification.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from mltriage.engine.findings import comparable_times
from mltriage.engine.launcher import WorkerFailure
from mltriage.numbers import parse_int
from mltriage.model import Diagnosis, Finding, FlightRecorderSummary, RankRole, Role, TimelineEntry
from mltriage.templates import ranks_text

if TYPE_CHECKING:
    from mltriage.engine.flight_recorder import RankTrace, Verdict

_COMMUNICATION_AREAS = {"nccl", "torch-distributed", "torchrun"}
_COMPUTE_CATEGORIES = {"memory", "kernel", "hardware", "program", "numerics", "data", "driver", "correctness"}
# Failures each rank hits on its own, identically (arguments, config, install): not one rank's doing.
_SAME_ON_EVERY_RANK = {"configuration", "driver", "launcher"}
_SELF_INFLICTED_SIGNALS = {"SIGKILL", "SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE"}
# Facts that identify which collective a rank was in; a rank that differs is the odd one out.
_COLLECTIVE_FACTS = ("collective", "op_type", "shape", "numel_in", "seq")


@dataclass
class Evidence:
    """What the rules weigh: error-level findings, every rank seen, torchrun's failure list and
    the Flight Recorder verdict."""

    errors: list[Finding]
    all_ranks: list[int]
    workers: list[WorkerFailure]
    fr_verdict: Verdict | None


def _fact_int(finding: Finding, *names: str) -> int | None:
    for name in names:
        number = parse_int(finding.facts.get(name))
        if number is not None:
            return number
    return None


def _clock(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%H:%M:%S")


def _is_error(f: Finding) -> bool:
    return f.is_error


def _seq(f: Finding) -> int | None:
    return _fact_int(f, "seq", "seqnum", "seq_num", "sequence")


def _looks_hang(f: Finding) -> bool:
    """Something waited until a timeout (the signature's kind says so, not its words)."""
    return f.kind == "hang"


def _where(f: Finding) -> str:
    where = f"{Path(f.source).name}:{f.line}"
    if f.timestamp is not None:
        where += f", {_clock(f.timestamp)}"
    return where


@dataclass
class Decision:
    """What the evidence rules concluded: the initiator (or None), why, the finding to put first,
    the failure domain the deciding evidence implies, and which rule decided."""

    initiator: int | None = None
    reason: str = ""
    finding: Finding | None = None
    domain: str | None = None
    rule: object = None


def triage(
    d: Diagnosis,
    worker_failures: list[WorkerFailure] | None = None,
    ranks_seen: set[int] | None = None,
    flight_recorder: list[RankTrace] | None = None,
) -> None:
    """Decide the initiating rank, each rank's role, the root cause and what is a consequence of it."""
    workers = worker_failures or []
    traces = flight_recorder or []
    ev = _gather(d, workers, ranks_seen or set(), traces)
    decision = _decide(ev)
    if decision.finding is not None:
        _promote(d, decision.finding)
    d.root_cause_index = _root_cause_index(d.findings)
    d.explanation = _explain(d, ev, decision)
    if decision.initiator is not None and decision.rule is not _first_observed_by_launcher:
        _relabel_followers(d, decision.initiator)  # (ranks that all failed alike are not each other's victims)
    d.initiating_rank = decision.initiator
    d.root_cause_index = _root_cause_index(d.findings)
    if d.root_cause_index is None and d.findings and d.status == "failure":
        d.root_cause_index = 0  # Flight Recorder alone proved the failure: its leading finding stands for it
    _link_consequences(d)
    for f in d.findings:  # the verdict: every finding's role is now triage's, whatever stage raised it
        f.verdict = f.role
    d.initiating_host = _host_of(decision.initiator, d.findings, workers)
    d.ranks = _rank_roles(d.findings, ev.all_ranks, decision.initiator, workers, traces)
    _classify(d, ev, decision)
    d.timeline = [TimelineEntry(f.rank, f.line, f.source, f.timestamp, f.signature, f.role) for f in in_time_order(ev.errors)][:200]


def in_time_order(findings: list[Finding]) -> list[Finding]:
    """Findings by when they happened. A log is written in time order, so a line without a timestamp
    of its own (a traceback, a rank's prefixed output) happened after the stamped line before it in
    the same source and before the stamped line after it: it takes the time of the one before (or,
    at the head of the source, of the one after) and keeps its place among its source's lines."""
    by_source: dict[str, list[Finding]] = {}
    for f in findings:
        by_source.setdefault(f.source, []).append(f)
    keyed: list[tuple[float, str, int, Finding]] = []
    for source, group in by_source.items():
        group.sort(key=lambda f: f.line)
        before, after = None, next((f.timestamp for f in group if f.timestamp is not None), None)
        for f in group:
            if f.timestamp is not None:
                before = f.timestamp
            when = f.timestamp if f.timestamp is not None else before if before is not None else after
            keyed.append((float("inf") if when is None else when, source, f.line, f))  # no time at all: last
    keyed.sort(key=lambda k: k[:3])  # one instant in one source: line order, so the inferred stay in place
    return [k[3] for k in keyed]


def _gather(d: Diagnosis, workers: list[WorkerFailure], ranks_seen: set[int], traces: list[RankTrace]) -> Evidence:
    """Put every fact the rules weigh in one place (and give rank-less lines the rank they name)."""
    if traces:
        d.flight_recorder = [FlightRecorderSummary(t.rank, t.source, t.last_scheduled, t.last_started, t.last_completed, t.stuck_op)
                             for t in sorted(traces, key=lambda t: t.rank)]
    d.launcher = list(workers)
    _attribute_ranks_by_pid(d.findings, workers)
    _attribute_ranks_from_facts(d.findings, ranks_seen, workers)
    errors = [f for f in d.findings if _is_error(f)]
    all_ranks = sorted(
        _ranks_of(d.findings)
        | ranks_seen
        | {w.rank for w in workers if w.rank is not None}
        | _ranks_from_facts(d.findings)
        | {t.rank for t in traces}
    )
    if not traces:
        return Evidence(errors, all_ranks, workers, None)
    from mltriage.engine.flight_recorder import analyse  # (here: only Flight Recorder dumps need it)

    return Evidence(errors, all_ranks, workers, analyse(traces))


def _decide(ev: Evidence) -> Decision:
    """Strongest evidence first: the first rule that names a rank (or explains why none) decides."""
    for rule in _RULES:
        initiator, reason, finding = rule(ev)
        if initiator is not None or reason:
            return Decision(initiator, reason, finding, _rule_domain(rule, ev), rule)
    return Decision()


def _explain(d: Diagnosis, ev: Evidence, decision: Decision) -> str:
    """The chain of evidence in words: who started it, who only fell over, what the launcher did."""
    initiator = decision.initiator
    chain = [decision.reason] if decision.reason else []
    root = d.root_cause
    if not chain and root is not None:
        # no rank stands out: say what failed, and that the evidence does not single out a rank
        ranks = sorted(_ranks_of(f for f in d.findings if f.signature == root.signature))
        where = f" on ranks {ranks_text(ranks)}" if len(ranks) > 1 else ""
        chain.append(f"{root.title}{where} ({_where(root)}); the evidence does not single out one initiating rank")
    followers = [
        f for f in ev.errors
        if f.rank is not None and f.rank != initiator
        and (initiator is not None or (f.role == "collateral" and (root is None or f.signature != root.signature)))
    ]
    collateral = sorted(_ranks_of(followers) - {initiator})
    if collateral:
        kinds = list(dict.fromkeys(f.title for f in followers))
        seqs = sorted({s for f in followers if (s := _seq(f)) is not None})
        seq_text = f" (collective SeqNum {', '.join(map(str, seqs))})" if seqs else ""
        label = "ranks" if len(collateral) > 1 else "rank"
        if decision.rule is _first_observed_by_launcher:
            chain.append(f"{label} {ranks_text(collateral)} failed the same way: {'; '.join(kinds[:3])}")
        else:
            after = " after it" if initiator is not None else ""
            chain.append(f"{label} {ranks_text(collateral)} only fell over{after}: {'; '.join(kinds[:3])}{seq_text}")
    signallers = sorted({v for f in d.findings if (v := _fact_int(f, "source_rank")) is not None and v >= 0})
    if signallers:
        # "Received a dump signal ... from rank N": N's watchdog fired first, i.e. N waited longest.
        chain.append(
            f"rank {ranks_text(signallers)} timed out first and asked the others to dump their Flight Recorder "
            f"(a waiting rank, so evidence of a hang, not of the culprit)"
        )
    stopped = sorted({w.rank for w in ev.workers if w.killed_by_agent and w.rank is not None and w.rank != initiator})
    if stopped:
        chain.append(f"torchrun then stopped rank{'s' if len(stopped) > 1 else ''} {ranks_text(stopped)} with SIGTERM")
    return "; ".join(chain)


def _classify(d: Diagnosis, ev: Evidence, decision: Decision) -> None:
    """Crash or hang, compute or communication."""
    if not ev.errors:
        return
    root = d.root_cause
    # A hang: ranks waited until a timeout, and the culprit is one that never got there
    # (silent / behind in the Flight Recorder) or itself hung, rather than one that crashed.
    waited = any(_looks_hang(f) for f in ev.errors)
    never_arrived = decision.rule in (_silent_rank, _flight_recorder) and not (ev.fr_verdict and ev.fr_verdict.mismatch)
    hang = waited and (never_arrived or root is None or root.role != "root-cause" or _looks_hang(root))
    d.failure_kind = "hang" if hang else "crash"
    primary = decision.finding or root or ev.errors[0]
    domain = decision.domain
    if domain is None:
        if primary.role != "root-cause" or primary.category == "communication" or primary.area in _COMMUNICATION_AREAS:
            domain = "communication"  # a collateral error is a peer's broken collective
        elif primary.category in _COMPUTE_CATEGORIES:
            domain = "compute"
        # else (a configuration or launcher mistake outside distributed code: a checkpoint's
        # map_location, a missing package) the failure has no compute/communication side to name
    d.failure_domain = domain


# -- evidence rules: each returns (rank or None, reason, the finding to put first or None) -----------


def _own_root_cause(ev: Evidence):
    errors, all_ranks = ev.errors, ev.all_ranks
    roots = [f for f in errors if f.role == "root-cause" and not _is_launcher(f)]
    if not roots:
        return None, "", None
    first = roots[0]  # findings arrive ordered: earliest root cause first
    same = _ranks_of(f for f in roots if f.signature == first.signature)
    if first.rank is None:
        if not any(f.rank is not None for f in roots):
            if len(all_ranks) <= 1:
                return None, f"{first.title} ({_where(first)})", first
            return None, "", None  # a multi-rank job: let rank-level evidence decide
        first = next(f for f in roots if f.rank is not None)
        same = _ranks_of(f for f in roots if f.signature == first.signature)
    if len(same) > 1 and len(same) * 2 >= max(len(all_ranks), 2):
        return None, "", None  # a failure most ranks share says nothing about who started it
    host = f" on {first.host}" if first.host else ""
    return first.rank, f"rank {first.rank}{host} failed first with its own error: {first.title} ({_where(first)})", first


def _odd_one_out(ev: Evidence):
    errors = ev.errors
    by_signature: dict[str, list[Finding]] = {}
    for f in errors:
        if f.rank is not None and not _is_launcher(f):
            by_signature.setdefault(f.signature, []).append(f)
    for signature, group in by_signature.items():
        for fact in _COLLECTIVE_FACTS:
            per_rank: dict[int, Finding] = {}
            for f in group:
                if f.facts.get(fact):
                    for r in f.reporting_ranks:  # (the ranks of a shared finding share its facts)
                        per_rank.setdefault(r, f)
            if len(per_rank) < 3:
                continue
            values = {r: f.facts[fact] for r, f in per_rank.items()}
            (common, n_common), *_ = Counter(values.values()).most_common()
            odd = [r for r, v in values.items() if v != common]
            if len(odd) == 1 and n_common >= 2:
                rank = odd[0]
                f = per_rank[rank]
                others = sorted(r for r, v in values.items() if v == common)
                label = fact.replace("_", " ")
                return rank, (
                    f"rank {rank} was the odd one out: its {label} was {values[rank]} while ranks {ranks_text(others)} "
                    f"had {common} ({f.title}, {_where(f)})"
                ), f
    return None, "", None


def _silent_rank(ev: Evidence):
    errors, all_ranks = ev.errors, ev.all_ranks
    own = [f for f in errors if f.rank is not None and not _is_launcher(f)]
    hang_reporters = _ranks_of(f for f in own if _looks_hang(f) or _seq(f) is not None)
    if not hang_reporters:
        return None, "", None
    reporters = _ranks_of(own)
    silent = [r for r in all_ranks if r not in reporters]
    if len(silent) == 1 and len(all_ranks) >= 2:
        seqs = sorted({s for f in errors if (s := _seq(f)) is not None})
        seq_text = f" (SeqNum {', '.join(map(str, seqs))})" if seqs else ""
        return silent[0], (
            f"rank {silent[0]} never reported the collective that ranks {ranks_text(sorted(reporters))} timed out or failed in"
            f"{seq_text}: it most likely never entered it (stuck in compute, dead, or in another code path)"
        ), None
    completed = {r: v for f in errors if (v := _fact_int(f, "last_completed")) is not None for r in f.reporting_ranks}
    if len(completed) >= 2:
        low = min(completed.values())
        laggards = [r for r, v in completed.items() if v == low]
        if len(laggards) == 1 and low < max(completed.values()):
            rank = laggards[0]
            return rank, f"rank {rank} completed collectives only up to SeqNum {low}, behind every other rank", None
    return None, "", None


def _launcher_evidence(ev: Evidence):
    errors, workers = ev.errors, ev.workers
    own = [w for w in workers if w.rank is not None and not w.killed_by_agent]
    if not own:
        return None, "", None
    # a worker that exited because its peer vanished says so (a collateral error): not the culprit
    victims = _ranks_of(f for f in errors if f.role == "collateral" and not _is_launcher(f))
    own = [w for w in own if w.rank not in victims] or own
    signalled = [w for w in own if w.signal in _SELF_INFLICTED_SIGNALS]
    pick = signalled or own
    ranks = sorted({w.rank for w in pick})
    if len(ranks) != 1:
        return None, "", None
    w = next(w for w in pick if w.rank == ranks[0])
    how = f"was killed by {w.signal}" if w.signal else f"exited with code {w.exitcode}"
    who = "SIGKILL usually means the kernel OOM killer or a scheduler" if w.signal == "SIGKILL" else "on its own"
    stopped = sorted({x.rank for x in workers if x.killed_by_agent and x.rank is not None})
    tail = f", while torchrun stopped ranks {ranks_text(stopped)} with SIGTERM afterwards" if stopped else ""
    return w.rank, f"torchrun's failure list shows rank {w.rank} {how} ({who}; line {w.line}){tail}", None


def _earliest_error(ev: Evidence):
    errors = ev.errors
    # A collateral error says "another rank failed": its time never makes its rank the initiator.
    stamped = [f for f in errors if f.rank is not None and f.timestamp is not None and f.role != "collateral"]
    if len({f.rank for f in stamped}) < 2 or not all(comparable_times(stamped[0], f) for f in stamped):
        return None, "", None  # mixed clock kinds (dates vs times of day) cannot be ordered
    earliest: dict[int, float] = {}
    for f in stamped:
        earliest[f.rank] = min(earliest.get(f.rank, f.timestamp), f.timestamp)
    (r1, t1), (_, t2) = sorted(earliest.items(), key=lambda kv: kv[1])[:2]
    if t2 - t1 < 1.0:  # log clocks tick in whole seconds at best, and hosts drift: no call
        return None, "", None
    first = min((f for f in stamped if f.rank == r1), key=lambda f: f.timestamp)
    return first.rank, f"rank {first.rank} logged the earliest error ({first.title}, {_where(first)}); timestamps only, weak evidence", first


def _first_observed_by_launcher(ev: Evidence):
    """Every rank failed with the same error of its own (a bad argument, a config assertion): no rank
    caused the others, and the launcher's first report (torchrun's "first observed failure") names one."""
    roots = [f for f in ev.errors if f.role == "root-cause" and not _is_launcher(f)]
    if not roots or len({f.signature for f in roots}) != 1 or roots[0].category not in _SAME_ON_EVERY_RANK:
        return None, "", None
    reports = [f for f in ev.errors if _is_launcher(f) and f.rank is not None]
    if not reports:
        return None, "", None
    first = min(reports, key=lambda f: (f.source, f.line))
    return first.rank, (
        f"every rank failed with the same error of its own ({roots[0].title}); the launcher saw rank {first.rank} "
        f"fail first ({_where(first)}), so it stands for all of them"
    ), roots[0]


def _named_by_peers(ev: Evidence):
    """A surviving rank's library names the rank that failed (gloo's monitored_barrier: "Please check rank M
    logs for faulty rank"): where every such report names the same rank, that rank is where it started."""
    named = {r for f in ev.errors if (r := _fact_int(f, "faulty_rank")) is not None}
    if len(named) != 1:
        return None, "", None
    rank = next(iter(named))
    report = next(f for f in ev.errors if _fact_int(f, "faulty_rank") == rank)
    return rank, f"rank {rank} is the rank its peers' library names as the one that failed: {report.title} ({_where(report)})", None


# Each rule with the failure domain its evidence implies (None: from the finding's category).
def _flight_recorder(ev: Evidence):
    verdict = ev.fr_verdict
    if verdict is None:
        return None, "", None
    return verdict.initiator, verdict.reason, None


# Strongest evidence first; the first rule that names a rank (or explains why none) decides.
_RULES = (_own_root_cause, _flight_recorder, _odd_one_out, _silent_rank, _launcher_evidence, _named_by_peers, _earliest_error,
          _first_observed_by_launcher)
# The failure domain each kind of evidence implies (absent: from the deciding finding's category).
_DOMAINS = {
    _odd_one_out: "communication",  # ranks disagreed about which collective to run
    _silent_rank: "compute",  # the culprit was somewhere other than the collective
    _launcher_evidence: "compute",  # a worker died on its own
}


def _rule_domain(rule, ev: Evidence) -> str | None:
    if rule is _flight_recorder:
        return "communication" if ev.fr_verdict.mismatch else "compute"
    return _DOMAINS.get(rule)


def _is_launcher(f: Finding) -> bool:
    """Lines the launcher prints about a worker are not that worker's own words."""
    return f.reported_by == "launcher"


# -- helpers ----------------------------------------------------------------------------------------


def _attribute_ranks_from_facts(findings: list[Finding], ranks_seen: set[int], workers: list[WorkerFailure]) -> None:
    """A line without a rank prefix may still say whose it is: a captured ``rank``; on one host, a
    launcher's ``local_rank``; in a log with no rank information at all, NCCL's device index (one GPU
    per rank: the local rank, unless CUDA_VISIBLE_DEVICES reorders them)."""
    hosts = {f.host for f in findings if f.host} | {w.host for w in workers if w.host}
    one_host = len(hosts) <= 1
    no_ranks = not ranks_seen and not any(f.rank is not None for f in findings) and not any(w.rank is not None for w in workers)
    for f in findings:
        if f.rank is not None:
            continue
        rank, how = _fact_int(f, "rank"), None
        if rank is None and one_host:
            rank, how = _fact_int(f, "local_rank"), "local rank on a single host"
        if rank is None and one_host and no_ranks:
            rank, how = _fact_int(f, "cuda_device"), "NCCL's device index (one GPU per rank)"
        if rank is None or not 0 <= rank <= 1_000_000:
            continue
        f.rank, f.ranks = rank, [rank]
        f.facts.setdefault("rank", rank)
        if how:
            f.notes.append(f"rank {rank} read from the {how}")


def _attribute_ranks_by_pid(findings: list[Finding], workers: list[WorkerFailure]) -> None:
    """Launcher lines name a worker by pid; torchrun's failure list maps that pid to its rank.

    The pid decides even where the line already has a rank: torchrun's agent prints these lines
    unprefixed, so that rank is only the stream's (a file named ``...rank2...``, an ``srun -l`` task
    number), never the worker the line is about."""
    pid_rank = {w.pid: w.rank for w in workers if w.pid is not None and w.rank is not None}
    for f in findings:
        pid = _fact_int(f, "pid")
        if pid is None or pid not in pid_rank or f.rank == pid_rank[pid]:
            continue
        stream_rank, f.rank = f.rank, pid_rank[pid]
        f.ranks = [f.rank]
        if f.facts.get("rank") in (None, stream_rank):  # not a rank the signature captured itself
            f.facts["rank"] = f.rank


def _ranks_of(findings) -> set[int]:
    """Every rank these findings speak for (a finding many ranks shared counts each of them)."""
    return {r for f in findings for r in f.reporting_ranks}


def _relabel_followers(d: Diagnosis, initiator: int) -> None:
    """In this job, another rank's "root cause" came after the initiator's failure: a consequence."""
    for f in d.findings:
        if f.role == "root-cause" and _is_error(f) and f.rank is not None and initiator not in f.reporting_ranks:
            f.verdict = Role.COLLATERAL
            f.notes.append(f"usually a root cause, but here rank {initiator} failed first: a consequence in this job")


def _promote(d: Diagnosis, finding: Finding) -> None:
    """Put the initiator's own finding first."""
    if finding in d.findings:
        d.findings.remove(finding)
        d.findings.insert(0, finding)


def _root_cause_index(findings: list[Finding]) -> int | None:
    """The one rule for which finding is the root cause: the first error-level root cause in the
    triaged order, else the first error-level finding of any role."""
    first_error = None
    for i, f in enumerate(findings):
        if _is_error(f):
            if f.role == "root-cause":
                return i
            first_error = i if first_error is None else first_error
    return first_error


def _link_consequences(d: Diagnosis) -> None:
    """Every other error-level finding is a consequence of the root cause."""
    root = d.root_cause_index
    for i, f in enumerate(d.findings):
        f.caused_by = root if root is not None and i != root and _is_error(f) else None


def _host_of(rank, findings, workers) -> str | None:
    if rank is None:
        return None
    for f in findings:
        if f.rank == rank and f.host:
            return f.host
    for w in workers:
        if w.rank == rank and w.host:
            return w.host
    return None


def _ranks_from_facts(findings: list[Finding]) -> set[int]:
    out: set[int] = set()
    for f in findings:
        world = _fact_int(f, "world_size")
        if world is not None and 0 < world <= 100_000:
            out.update(range(world))
    return out


def _rank_roles(findings, all_ranks, initiator, workers, traces=()) -> list[RankRole]:
    stopped = {w.rank for w in workers if w.killed_by_agent}
    waiting = {t.rank: t.stuck_op for t in traces if t.stuck_op}
    by_rank: dict[int, list[Finding]] = {}
    for f in findings:
        for r in f.reporting_ranks:
            by_rank.setdefault(r, []).append(f)
    roles: list[RankRole] = []
    # 40,000 ranks that share one finding share its verdict: decided once per combination of findings
    decided: dict[tuple, tuple] = {}
    for rank in all_ranks:
        own = by_rank.get(rank, [])
        shared = len(own) == 1 and len(own[0].reporting_ranks) > 1 and rank != initiator
        key = (id(own[0]), rank in stopped, waiting.get(rank)) if shared else None
        verdict = decided.get(key) if key is not None else None
        if verdict is None:
            verdict = _rank_verdict(rank, own, initiator, stopped, waiting)
            if key is not None:
                decided[key] = verdict
        role, why, first = verdict
        roles.append(
            RankRole(
                rank=rank,
                role=role,
                host=first.host_of(rank) if first else None,
                first_error=first.signature if first else None,
                first_line=first.line_of(rank) if first else None,
                source=first.source_of(rank) if first else None,
                why=why,
            )
        )
    return roles


def _rank_verdict(rank, own, initiator, stopped, waiting):
    """One rank's role, why, and the finding that is its first error (or None)."""
    own_errors = [f for f in own if _is_error(f)]
    # the rank's own words first (in log order); launcher lines about it only when it said nothing
    spoken = [f for f in own_errors if not _is_launcher(f)] or own_errors
    first = min(spoken, key=lambda f: (f.source_of(rank), f.line_of(rank)), default=None)
    if rank == initiator:
        role = "initiator"
        why = f"its own failure: {first.title}" if first else "named by the evidence above"
    elif own_errors:
        role = "collateral"
        why = f"reported {first.title}" + (" after the initiator failed" if initiator is not None else "")
    elif rank in stopped:
        role, why = "collateral", "stopped by torchrun with SIGTERM after another worker failed"
    elif rank in waiting and initiator is not None:
        role, why = "collateral", f"Flight Recorder: waiting in {waiting[rank]} for rank {initiator}"
    elif initiator is not None:
        role, why = "healthy", "no error of its own"
    else:
        role, why = "unknown", "no error of its own, and no initiator identified"
    return role, why, first
