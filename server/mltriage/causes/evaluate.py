"""Fire the causes whose evidence holds on this run."""

from __future__ import annotations

from mltriage.library import Library, Rule
from mltriage.masking import clip
from mltriage.model import ContextReason, Finding
from mltriage.run_model.model import RunModel, StopKind
from mltriage.symptoms.observe import Observation, Observations
from mltriage.symptoms.vocabulary import Symptom

MAX_EVIDENCE = 6  # observation lines cited per cause


def raise_causes(findings: list[Finding], observations: Observations, run: RunModel, library: Library) -> list[Finding]:
    """The findings of every cause that holds (at most one per cause), strongest evidence first.

    A cause whose ``explained_by`` names another cause that holds here steps aside too (a numerics
    cause for the more precise fp16 overflow, or for P2P corruption): causes are weighed together,
    and only those kept turn the errors they explain into context."""
    held: list[tuple[Rule, Finding, list[Observation]]] = []
    for rule in library.rules.values():
        if not rule.derived or not rule.cause:
            continue
        result = _evaluate(rule, findings, observations, run)
        if result is not None:
            held.append((rule, *result))
    fired = {rule.id for rule, _, _ in held}
    out: list[Finding] = []
    for rule, finding, seen in held:
        if fired & set((rule.cause or {}).get("explained_by") or []):
            continue
        _explain(rule, seen, finding, findings)
        out.append(finding)
    return out


def _evaluate(rule: Rule, findings: list[Finding], observations: Observations,
              run: RunModel) -> tuple[Finding, list[Observation]] | None:
    spec = rule.cause or {}
    seen: list[Observation] = []
    needs_any = [Symptom(s) for s in spec.get("needs_any", [])]
    needs_all = [Symptom(s) for s in spec.get("needs_all", [])]
    if needs_any:
        found = [o for s in needs_any for o in observations.of(s)]
        if not found:
            return None
        seen += found
    for symptom in needs_all:
        found = observations.of(symptom)
        if not found:
            return None
        seen += found
    stops = spec.get("stop") or []
    if stops and run.stop.kind.value not in stops:
        return None
    phases = spec.get("stopped_in") or []
    if phases and run.stop.phase.label not in phases:
        return None
    silences = spec.get("silence") or []
    if silences and (run.stop.silence is None or run.stop.silence.value not in silences):
        return None
    silent_in = spec.get("silent_in")
    if silent_in is not None and run.stop.kind is StopKind.HANG_SILENT and run.stop.phase.label not in silent_in:
        return None
    from mltriage.causes.conditions import CONDITIONS  # (here: most runs show no cause's symptoms, and never judge one)

    judged = [CONDITIONS[c].judge(run, findings, observations) for c in spec.get("requires", [])]
    if not all(j.holds for j in judged):
        return None
    any_of = [CONDITIONS[c].judge(run, findings, observations) for c in spec.get("requires_any", [])]
    if any_of and not any(j.holds for j in any_of):
        return None
    if any(CONDITIONS[c].judge(run, findings, observations).holds for c in spec.get("rules_out", [])):
        return None
    if _named_already(spec.get("explained_by") or [], seen, findings):
        return None
    held = judged + [j for j in any_of if j.holds]
    why = [w for j in held for w in j.why]
    lines = [line for j in held for line in j.lines]
    return _finding(rule, seen, why, lines, run, findings, observations), seen


def _finding(rule: Rule, seen: list[Observation], why: list[str], condition_lines: list[str], run: RunModel,
             findings: list[Finding], observations: Observations) -> Finding:
    from mltriage.engine.run_reasoning import derived_finding, last_lines_notes

    cited = _distinct_lines(seen)[:MAX_EVIDENCE]
    stop = run.stop
    if cited:
        anchor = cited[0]
        source, line, text, rank = anchor.source, anchor.line, anchor.text, anchor.rank
        if rule.kind == "hang":
            rank = None  # a hang's lines come from the ranks that waited: which rank held them up is triage's to say
    elif stop.source is not None and stop.line is not None:
        source, line, text, rank = stop.source, stop.line, stop.text, None
    else:
        source, line, text, rank = "<run>", 1, "", None
    facts: dict[str, str] = {"stopped": stop.where or stop.kind.value, "stop_phase": stop.phase.label,
                             "gpus": str(run.gpus.count) if run.gpus.count else "unknown"}
    if stop.text:
        facts["last_line"] = clip(stop.text, 200)
    for obs in cited:
        for key, value in obs.facts.items():
            facts.setdefault(key, str(value.value if hasattr(value, "value") else value))
    evidence = list(dict.fromkeys([o.text for o in cited] + condition_lines))
    if stop.kind.is_hang and stop.text and stop.text not in evidence:
        evidence.append(stop.text)
    notes = [f"{o.symptom.value} at line {o.line}: {clip(o.text, 160)}" for o in cited]
    if stop.kind.is_hang:
        notes.append(f"the log stops {stop.where} and holds no error" if stop.kind is StopKind.HANG_SILENT
                     else f"the run stopped {stop.where} (phase: {stop.phase.label})")
    notes += why
    if stop.kind.is_hang:
        notes += last_lines_notes(run)
    finding = derived_finding(rule, facts, source, line, text, evidence, notes, rank)
    if stop.kind is StopKind.HANG_SILENT and stop.silence is not None and stop.silence.could_be_a_cut and not seen:
        # only the log's end says "hang", and an excerpt cut here reads the same: a suspicion, not a verdict
        finding.severity = "warning"
        finding.notes.insert(0, f"the log ends {stop.where} with no error: if the run was still going when this was "
                                "copied, this is not a failure; if it hung here, this is the first thing to check")
    from mltriage.causes.conditions import CONDITIONS

    if (rule.cause or {}).get("warns_alone") and not CONDITIONS["timeout-or-hang"].judge(run, findings, observations).holds:
        finding.severity = "warning"  # the precursor alone: no collective timed out, the run did not hang
        finding.notes.insert(0, "no collective timed out and the log shows no hang: this is what makes such a run hang, "
                                "not yet a failure")
    return finding


def _explain(rule: Rule, seen: list[Observation], cause: Finding, findings: list[Finding]) -> None:
    """The line findings a kept cause explains (``explains``) or outranks become its context (a cause that stands on
    the run's stop alone, with no symptom of its own, on the stop's line)."""
    explained = set((rule.cause or {}).get("explains") or [])
    if explained:
        sources = {o.source for o in seen} or {cause.source}
        _to_context(findings, lambda f: f.signature in explained and f.source in sources, f"a consequence of {rule.id}: {rule.title}")
    if (rule.cause or {}).get("outranks"):
        lines = {(o.source, o.line) for o in seen} or {(cause.source, cause.line)}
        _to_context(findings, lambda f: _covers(f, lines), f"explained by {rule.id}: {rule.title}")


def _to_context(findings: list[Finding], which, note: str) -> None:
    """The root-cause errors ``which`` picks are what the cause explains: context, with the note why."""
    for f in findings:
        if f.is_error and f.role == "root-cause" and which(f):
            f.set_aside(ContextReason.EXPLAINED, note)


def _covers(finding: Finding, lines: set[tuple[str, int]]) -> bool:
    """The finding was raised on one of these lines, or its report (a traceback) spans one."""
    first, last = finding.lines
    return any(source == finding.source and (line == finding.line or first <= line <= last) for source, line in lines)


def _named_already(signatures: list[str], seen: list[Observation], findings: list[Finding]) -> bool:
    """A signature that names this cause (or a more specific form of it) fired: it would be said
    twice, and less precisely."""
    if not signatures:
        return False
    # in any input: a Flight Recorder dump or another rank's log may be where the more specific finding was made
    return any(f.is_error and f.signature in signatures for f in findings)


def _distinct_lines(seen: list[Observation]) -> list[Observation]:
    out: list[Observation] = []
    keys: set[tuple[str, int]] = set()
    for obs in sorted(seen, key=lambda o: (o.source, o.line)):
        if (obs.source, obs.line) not in keys:
            keys.add((obs.source, obs.line))
            out.append(obs)
    return out


__all__ = ["raise_causes"]

