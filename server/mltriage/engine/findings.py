"""From raw hits to findings: merge repeats, tie hits to their tracebacks, order by likely cause.

Ordering puts the most likely root cause first: a root-cause signature beats context and
collateral ones, and among root causes the earliest (by timestamp when both lines carry one of
the same kind, else by position in the same file) wins, then severity and confidence. The
ordering is only a ranking: triage decides which finding is the root cause and links the rest
to it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import replace
from functools import cmp_to_key
from collections.abc import Iterable

from mltriage.lazy_pattern import lazy
from mltriage.model import SEVERITY_ORDER, Finding, Fix, LaunchFlag
from mltriage.numbers import parse_int
from mltriage.engine.rank_groups import PAST_HIT_LIMIT, Member, RankGroup, folded_note, past_limit_note
from mltriage.engine.hit_store import HitStore
from mltriage.engine.hits import GroupKey, Hit, hit_key
from mltriage.engine.tracebacks import TracebackBlock
from mltriage.library import Rule
from mltriage.templates import fill_sentence, fill_slots, fill_title, unknown_facts

FALLBACK_REACH = 20  # lines after a traceback that may still explain it
EXCEPTION_LINE_RULE = "python-exception-line"  # the bare `SomeError: message` layer, for lines outside tracebacks
NEARBY_LINES = 2  # outside tracebacks, a specific finding this close explains the same error
_ROLE_ORDER = {"root-cause": 0, "context": 1, "collateral": 2}
TRIGGER_ONLY_CONFIDENCE = 0.7  # share of a rule's confidence when only its trigger phrase matched


def _requires_met(store: HitStore, hit: Hit) -> bool:
    rule = hit.rule
    if not rule.requires:
        return True
    evidence = store.require_evidence.get((rule.id, hit.stream))
    if not evidence:
        return False
    return any(abs(line - hit.line) <= rule.within for line in evidence)


def _any_between(sorted_lines: list[int] | None, low: int, high: int) -> bool:
    """Whether a sorted list of line numbers holds one in [low, high]."""
    if not sorted_lines:
        return False
    at = bisect_left(sorted_lines, low)
    return at < len(sorted_lines) and sorted_lines[at] <= high


def _block_evidence(block: TracebackBlock) -> list[str]:
    lines = [block.header_text]
    if block.end - block.start + 1 > len(block.tail) + 1:
        lines.append(f"  … ({block.end - block.start + 1 - len(block.tail) - 1} more lines)")
    lines.extend(block.tail)
    return lines


def build_findings(store: HitStore) -> list[Finding]:
    hits = [h for h in store.hits if _requires_met(store, h)]
    # A catch-all (fallback) signature stays silent where a specific one explains the same block:
    # a hit inside it, or right after it on the same stream (torchrun prints its ChildFailedError
    # summary just below the traceback).
    specific = [h for h in hits if not h.rule.fallback]
    # Indexed by stream (and block) so that each fallback hit is checked in log time, not against
    # every specific hit: 100,000 ranks' fallback lines were quadratic (13 s for one 10 MB log).
    blocks_hit = {id(h.block) for h in specific if h.block is not None}
    lines_by_stream: dict[tuple, list[int]] = {}
    worker_lines_by_stream: dict[tuple, list[int]] = {}
    for h in specific:
        lines_by_stream.setdefault(h.stream, []).append(h.line)
        if h.rule.reported_by != "launcher":
            worker_lines_by_stream.setdefault(h.stream, []).append(h.line)
    groups = store.rank_groups
    for group in groups.values():  # a folded rank's line explains like its hit would have
        rule = group.first.rule
        if not rule.fallback:
            for member in group.members:
                lines_by_stream.setdefault(member.stream, []).append(member.line)
                if rule.reported_by != "launcher":
                    worker_lines_by_stream.setdefault(member.stream, []).append(member.line)
    for lines in (*lines_by_stream.values(), *worker_lines_by_stream.values()):
        lines.sort()

    def explained(block: TracebackBlock) -> bool:
        return id(block) in blocks_hit or _any_between(lines_by_stream.get(block.stream), block.start,
                                                       block.end + FALLBACK_REACH)

    def explained_line(stream: tuple, line: int) -> bool:
        # a launcher's report about a worker explains nothing about the worker's own error line
        return (_any_between(lines_by_stream.get(stream), line, line)
                or _any_between(worker_lines_by_stream.get(stream), line - NEARBY_LINES, line + NEARBY_LINES))

    hits = [
        h for h in hits
        if not (h.rule.fallback and (explained(h.block) if h.block is not None else explained_line(h.stream, h.line)))
        and not (h.rule.id == EXCEPTION_LINE_RULE and h.block is not None)  # a traceback's last line: that layer speaks
    ]
    merged: dict[tuple, Finding] = {}
    order: list[tuple] = []
    group_of: dict[tuple, tuple] = {}
    for hit in hits:
        key = hit_key(hit.rule.id, hit.source.name, hit.stream[1], hit.facts)
        finding = merged.get(key)
        if finding is not None:
            finding.count += 1
            _add_facts(finding, hit)
            continue
        merged[key] = _finding_from_hit(hit)
        order.append(key)
        if hit.group is not None and hit.group in groups:
            group_of[key] = hit.group
    for key, extra in store.repeats.items():
        if key in merged:
            merged[key].count += extra
    def stands(rule: Rule, member: Member) -> bool:
        """Whether a catch-all's folded rank stands, as its full hit would (the filter above)."""
        block = member.cited.block if member.cited is not None else None
        if block is None:
            return not explained_line(member.stream, member.line)
        return rule.id != EXCEPTION_LINE_RULE and not explained(block)

    folded = _fold_rank_groups(merged, order, group_of, groups, stands)
    return [merged[k] for k in order if k not in folded]


def _fold_rank_groups(merged: dict[tuple, Finding], order: list[tuple], group_of: dict[tuple, GroupKey],
                      groups: dict[GroupKey, RankGroup], stands) -> set[tuple]:
    """Each group of ranks that failed alike becomes one finding: its first rank's, listing them all
    (with each rank's own line, file and host). Returns the keys of the findings folded into another."""
    individual: dict[GroupKey, list[tuple]] = {}
    for key in order:
        if key in group_of:
            individual.setdefault(group_of[key], []).append(key)
    folded: set[tuple] = set()
    for gkey, group in groups.items():
        first = group.first
        members = group.members
        if first.rule.fallback:  # rank by rank, a specific hit nearby may explain it
            members = [m for m in members if stands(first.rule, m)]
            hits = len(members)  # (a member's repeats are not told apart: one hit each)
        else:
            hits = group.hits
        if not members:
            continue
        keys = individual.get(gkey, [])
        if keys:
            finding, others = merged[keys[0]], [merged[k] for k in keys[1:]]
            finding.count += hits
        else:  # every full hit of the group was explained away: its first standing rank speaks for it
            cited = members[0].cited
            if cited is not None:
                stream = members[0].stream
                first = replace(first, stream=stream, line=members[0].line, column_start=cited.column_start,
                                column_end=cited.column_end, text=cited.text, block=cited.block,
                                source=first.source if stream[0] == first.source.name else
                                replace(first.source, name=stream[0], rank=stream[1]),
                                context=replace(first.context, host=members[0].host))
            finding, others = _finding_from_hit(first), []
            finding.count = hits
            merged[("rank-group", gkey)] = finding
            order.append(("rank-group", gkey))
        lines = {finding.rank: finding.line} if finding.rank is not None else {}
        places = {finding.rank: (finding.source, finding.host)} if finding.rank is not None else {}
        for other in others:
            finding.count += other.count
            if other.rank is not None and other.rank not in lines:
                lines[other.rank] = other.line
                places[other.rank] = (other.source, other.host)
        for member in members:
            rank = member.stream[1]
            if rank not in lines:
                lines[rank] = member.line
                places[rank] = (member.stream[0], member.host)
        folded.update(keys[1:])
        finding.ranks = sorted(lines)
        finding.rank_lines = lines
        if any(place != (finding.source, finding.host) for place in places.values()):
            finding.rank_places = places
        if gkey.facts is PAST_HIT_LIMIT:
            finding.notes.append(past_limit_note(finding.ranks))
        elif len(finding.ranks) > 1:
            finding.notes.append(folded_note(finding.ranks, finding.rank))
    return folded


_PY_WARNING = lazy(re.compile, r"^(?:WARNING:[\w.]+:|\S+:\d+: \w*Warning: |\w*Warning: )")


def message_level(message: str) -> str | None:
    """Python's own warning forms: logging's default "WARNING:name:" and warnings.warn's "file:N: XWarning:"."""
    return "warning" if _PY_WARNING.match(message.lstrip()) else None


def _add_facts(finding: Finding, hit: Hit) -> None:
    """A later line of the same failure may name what the first did not (the second line of a
    state_dict report, a continuation); its facts join, and the summary is filled again with them."""
    new = {k: v for k, v in hit.facts.items() if k not in finding.facts}
    if not new or len(finding.facts) >= 64:
        return
    finding.facts.update(new)
    rule = hit.rule
    finding.root_cause = fill_sentence(rule.summary, finding.facts, finding.root_cause)
    finding.title = fill_title(rule.title, finding.facts)


def render_rule_text(rule: Rule, facts: dict[str, str]) -> tuple[str, str, Fix, str]:
    """A signature's title, summary, fix and verify with this finding's facts filled in (mltriage.masking.mask_diagnosis masks
    a secret in them wherever it shows: the engine hands out no diagnosis unmasked)."""
    steps = [fill_slots(s, facts) for s in rule.fix_steps]
    env = {}
    for name, value in rule.fix_env.items():
        missing = unknown_facts(value, facts)
        if missing:  # this log lacks the fact: an export must never paste half-filled
            steps.insert(0, f"Set `{name}={fill_slots(value, facts)}`, filling in {', '.join(missing)} from your logs")
        else:
            env[name] = fill_slots(value, facts)
    flags = []
    for spec in rule.fix_flags:
        value = spec["value"]
        missing = unknown_facts(value, facts) if value is not None else []
        if missing:  # like an export: a flag never goes onto a command line half-filled
            steps.insert(0, f"Add `{spec['flag']} {fill_slots(value, facts)}` to `{spec['command']}`, filling in {', '.join(missing)}")
        else:
            flags.append(LaunchFlag(spec["command"], spec["flag"], None if value is None else fill_slots(value, facts), spec["why"]))
    title = fill_title(rule.title, facts)
    fix = Fix(summary=fill_slots(rule.fix_summary, facts), env=env, steps=steps, flags=flags,
              commands=[fill_slots(c, facts) for c in rule.fix_commands])
    return title, fill_sentence(rule.summary, facts, rule.mechanism_gist or title), fix, fill_slots(rule.verify, facts)


def typed_facts(captured: dict[str, str], numbers: frozenset[str]) -> dict[str, str | int]:
    """The captured facts, those the rule's patterns capture as numbers as ints (typed once, here)."""
    out: dict[str, str | int] = dict(captured)
    for name in numbers & captured.keys():
        value = parse_int(captured[name])
        if value is not None:
            out[name] = value
    return out


def _finding_from_hit(hit: Hit) -> Finding:
    rule = hit.rule
    facts: dict[str, str | int] = typed_facts(hit.facts, rule.int_facts)
    block = hit.block
    if block is not None:
        if block.exception_type:
            facts.setdefault("exception_type", block.exception_type)
        if block.exception_message is not None:
            facts.setdefault("exception_message", block.exception_message)
        if block.collective:
            facts.setdefault("collective", block.collective)
        if block.user_frame is not None:
            path, line, function = block.user_frame
            facts.setdefault("user_frame", f"{path}:{line}")
            facts.setdefault("user_function", function)
        if block.innermost is not None and block.innermost != block.user_frame:
            facts.setdefault("raised_in", f"{block.innermost[0]}:{block.innermost[1]}")
        if block.library:
            facts.setdefault("library", block.library)
        lines = (block.start, max(block.end, hit.line))
        evidence = _block_evidence(block)
        if hit.text not in evidence:
            evidence.append(hit.text)
    else:
        lines = (hit.line, hit.line)
        evidence = [hit.text]
    rank = hit.stream[1]
    host = hit.context.host or hit.source.host
    level = hit.context.level or message_level(hit.context.message)
    if level == "warning":
        facts.setdefault("log_level", "warning")  # the program said it went on
    if hit.context.device is not None:
        facts.setdefault("cuda_device", hit.context.device)  # NCCL's "host:pid:tid [dev]" prefix
    if rank is not None:
        facts.setdefault("rank", rank)
    title, root_cause, fix, verify = render_rule_text(rule, facts)
    notes = []
    severity, role = rule.severity, rule.role
    if block is not None and block.ignored:
        # Python printed it ("Exception ignored in ...") and carried on: never the failure itself
        severity, role = "warning", "context"
        notes.append("Python reported this exception as ignored (raised in __del__ or a callback) and carried on: "
                     "it is a side effect, look for the error before it")
    if hit.partial:
        notes.append("matched on the failure's own phrase in a wording this entry's patterns do not know, so no details were captured")
    return Finding(
        signature=rule.id,
        title=title,
        category=rule.category,
        area=rule.area,
        severity=severity,
        proposed_role=role,
        rank=rank,
        host=host,
        source=hit.source.name,
        lines=lines,
        line=hit.line,
        column_start=hit.column_start,
        column_end=hit.column_end,
        evidence=evidence,
        facts=facts,
        root_cause=root_cause,
        fix=fix,
        verify=verify,
        confidence=rule.confidence * (TRIGGER_ONLY_CONFIDENCE if hit.partial else 1.0),
        notes=notes,
        kind=rule.kind,
        reported_by=rule.reported_by,
        generic=rule.fallback,
        p2p_related=rule.p2p_related,
        block=id(block) if block is not None else None,
        timestamp=hit.timestamp,
        clock=hit.clock,
        ranks=[rank] if rank is not None else [],
    )


def comparable_times(a: Finding, b: Finding) -> bool:
    """Both carry a time of the same clock: full dates with full dates, times of day (glog, vLLM:
    no date) with times of day. The clock kind is the prefix parser's fact, carried on the finding."""
    return a.timestamp is not None and b.timestamp is not None and a.clock == b.clock


def _earlier(a: Finding, b: Finding, source_order: dict[str, int]) -> int:
    """-1 if ``a`` happened before ``b``. Inside one file, position decides; across files,
    timestamps decide where both lines carry one; otherwise input order."""
    if a.source == b.source:
        return (a.line > b.line) - (a.line < b.line)
    if comparable_times(a, b) and a.timestamp != b.timestamp:
        return -1 if a.timestamp < b.timestamp else 1
    oa, ob = source_order.get(a.source, 0), source_order.get(b.source, 0)
    return (oa > ob) - (oa < ob)


def _tier(f: Finding) -> float:
    """Error-level before warnings; within each, root causes, context, collateral; a generic layer
    (a catch-all that only knows "an exception" or "a CUDA error") after every specific root cause."""
    role = _ROLE_ORDER.get(f.role, 3) + (0.5 if f.generic and f.role == "root-cause" else 0.0)
    return role if f.is_error else 3 + role


def order_findings(findings: Iterable[Finding], sources: list[str]) -> list[Finding]:
    source_order = {name: i for i, name in enumerate(sources)}

    def compare(a: Finding, b: Finding) -> int:
        if _tier(a) != _tier(b):
            return -1 if _tier(a) < _tier(b) else 1
        if a.block is not None and a.block == b.block and a.confidence != b.confidence:
            # two explanations of one error report (a chain): the more specific one first
            return -1 if a.confidence > b.confidence else 1
        when = _earlier(a, b, source_order)
        if when:
            return when
        key_a = (-SEVERITY_ORDER.get(a.severity, 0), -a.confidence)
        key_b = (-SEVERITY_ORDER.get(b.severity, 0), -b.confidence)
        return (key_a > key_b) - (key_a < key_b)

    return sorted(findings, key=cmp_to_key(compare))
