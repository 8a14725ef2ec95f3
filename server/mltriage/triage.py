"""Multi-rank triage: which rank broke first, and which only fell over after it.

Evidence, strongest first: a rank's own root-cause failure (OOM, device assert, Python
exception, Xid); collective sequence numbers (the rank that never entered the collective the
others timed out in); launcher exit codes and signals; timestamps last. Each rank gets a role
(initiator / collateral / healthy / unknown) and the diagnosis an explanation in words.
"""

from __future__ import annotations

from mltriage.model import Diagnosis, Finding, RankRole

_COMPUTE_CATEGORIES = {"memory", "kernel", "hardware", "program", "numerics", "data", "driver", "correctness"}
_HANG_WORDS = ("timeout", "timed-out", "hang", "watchdog", "stuck")


def _fact_int(finding: Finding, *names: str) -> int | None:
    for name in names:
        value = finding.facts.get(name)
        if value is not None and value.strip().lstrip("-").isdigit():
            return int(value)
    return None


def _ranks_text(ranks: list[int]) -> str:
    """[0,1,2,4,5] -> '0–2, 4–5'"""
    ranks = sorted(set(ranks))
    parts: list[str] = []
    start = prev = None
    for r in ranks:
        if start is None:
            start = prev = r
        elif r == prev + 1:
            prev = r
        else:
            parts.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = prev = r
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}–{prev}")
    return ", ".join(parts)


def _is_error(f: Finding) -> bool:
    return f.severity in ("critical", "error")


def _seq(f: Finding) -> int | None:
    return _fact_int(f, "seq", "seqnum", "seq_num", "sequence")


def _looks_hang(f: Finding) -> bool:
    text = f"{f.signature} {f.title}".lower()
    return any(word in text for word in _HANG_WORDS)


def triage(d: Diagnosis) -> None:
    errors = [f for f in d.findings if _is_error(f)]
    all_ranks = sorted({f.rank for f in d.findings if f.rank is not None} | _ranks_from_facts(d.findings))
    root = d.root_cause
    chain: list[str] = []
    initiator: int | None = None
    host: str | None = None

    if root is not None and root.role == "root-cause":
        initiator, host = root.rank, root.host
        where = f" at line {root.line}" if root.line else ""
        chain.append(f"rank {initiator} {root.title}{where}" if initiator is not None else f"{root.title}{where}")
    else:
        initiator, reason = _initiator_from_sequence_numbers(errors, all_ranks)
        if initiator is not None:
            chain.append(reason)
    # Launcher summaries name the failed rank even when its own output is missing.
    if initiator is None:
        launcher = next((f for f in errors if _fact_int(f, "failed_rank", "global_rank") is not None), None)
        if launcher is not None:
            initiator = _fact_int(launcher, "failed_rank", "global_rank")
            chain.append(f"the launcher reports rank {initiator} failed first ({launcher.title}, line {launcher.line})")

    collateral_ranks = sorted({f.rank for f in errors if f.rank is not None and f.rank != initiator})
    if collateral_ranks:
        kinds = sorted({f.title for f in errors if f.rank in collateral_ranks})
        seqs = sorted({s for f in errors if f.rank in collateral_ranks and (s := _seq(f)) is not None})
        seq_text = f" (collective SeqNum {', '.join(map(str, seqs))})" if seqs else ""
        label = "ranks" if len(collateral_ranks) > 1 else "rank"
        chain.append(f"{label} {_ranks_text(collateral_ranks)} then reported {'; '.join(kinds[:3])}{seq_text}")

    d.initiating_rank = initiator
    d.initiating_host = host
    d.explanation = "; ".join(chain)
    d.ranks = _rank_roles(d.findings, all_ranks, initiator)
    if errors:
        d.failure_kind = "hang" if (root is None or root.role != "root-cause") and any(_looks_hang(f) for f in errors) else (
            "hang" if root is not None and _looks_hang(root) else "crash"
        )
        primary = root or errors[0]
        d.failure_domain = "compute" if primary.category in _COMPUTE_CATEGORIES and primary.role == "root-cause" else "communication"
    d.timeline = [
        {
            "rank": f.rank,
            "line": f.line,
            "source": f.source,
            "timestamp": f.timestamp,
            "signature": f.signature,
            "role": f.role,
        }
        for f in sorted(
            (f for f in d.findings if _is_error(f)),
            key=lambda f: (f.timestamp if f.timestamp is not None else float("inf"), f.source, f.line),
        )
    ][:200]


def _ranks_from_facts(findings: list[Finding]) -> set[int]:
    out: set[int] = set()
    for f in findings:
        world = _fact_int(f, "world_size")
        if world is not None and 0 < world <= 100_000:
            out.update(range(world))
    return out


def _initiator_from_sequence_numbers(errors: list[Finding], all_ranks: list[int]) -> tuple[int | None, str]:
    """With only collateral timeouts, the rank that did not time out in the stuck collective is the
    likeliest culprit: it never entered it (stuck in compute, dead, or in another collective)."""
    timed_out = {f.rank for f in errors if f.rank is not None and _seq(f) is not None}
    if not timed_out:
        return None, ""
    silent = [r for r in all_ranks if r not in timed_out]
    if len(silent) == 1:
        seqs = sorted({_seq(f) for f in errors if _seq(f) is not None})
        return silent[0], (
            f"rank {silent[0]} never reported the collective that ranks {_ranks_text(sorted(timed_out))} "
            f"timed out in (SeqNum {', '.join(map(str, seqs))}): it most likely never entered it"
        )
    # Otherwise: the lowest last-completed sequence number lags behind everyone else.
    completed = {f.rank: v for f in errors if f.rank is not None and (v := _fact_int(f, "last_completed")) is not None}
    if len(completed) >= 2:
        low = min(completed.values())
        laggards = [r for r, v in completed.items() if v == low]
        if len(laggards) == 1 and low < max(completed.values()):
            return laggards[0], f"rank {laggards[0]} completed only up to collective {low}, behind all others"
    return None, ""


def _rank_roles(findings: list[Finding], all_ranks: list[int], initiator: int | None) -> list[RankRole]:
    roles: list[RankRole] = []
    for rank in all_ranks:
        own = [f for f in findings if f.rank == rank]
        own_errors = [f for f in own if _is_error(f)]
        first = min(own_errors, key=lambda f: (f.timestamp or float("inf"), f.line), default=None)
        if rank == initiator:
            role, why = "initiator", f"its own failure: {first.title}" if first else "named by collective evidence"
        elif own_errors:
            role, why = "collateral", f"reported {first.title} after the initiator failed" if initiator is not None else first.title
        elif own:
            role, why = "healthy", "no error-level finding"
        else:
            role, why = "unknown", "no lines from this rank"
        roles.append(
            RankRole(
                rank=rank,
                role=role,
                host=first.host if first else None,
                first_error=first.signature if first else None,
                first_line=first.line if first else None,
                source=first.source if first else None,
                why=why,
            )
        )
    return roles
