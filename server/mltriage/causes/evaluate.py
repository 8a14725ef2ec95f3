"""Fire the causes whose evidence holds on this run."""

from __future__ import annotations

from dataclasses import dataclass

from mltriage.library import Library, Rule
from mltriage.masking import clip
from mltriage.model import Finding
from mltriage.run_model.model import Interconnect, Phase, RunModel, StopKind
from mltriage.symptoms.observe import Observation, Observations
from mltriage.symptoms.vocabulary import Symptom

MAX_EVIDENCE = 6  # observation lines cited per cause
EARLY_SEQ = 4  # a process group's first collectives: DDP's parameter broadcast, start-up barriers


@dataclass(frozen=True)
class Judged:
    holds: bool
    why: list[str]  # the run-model facts that made it hold, in words with their lines
    lines: tuple[str, ...] = ()  # the log lines those facts come from (cited as evidence)


def raise_causes(findings: list[Finding], observations: Observations, run: RunModel, library: Library) -> list[Finding]:
    """The findings of every cause that holds (at most one per cause), strongest evidence first."""
    out: list[Finding] = []
    for rule in library.rules.values():
        if not rule.derived or not rule.cause:
            continue
        finding = _evaluate(rule, findings, observations, run)
        if finding is not None:
            out.append(finding)
    # a cause that names this one more precisely fired too (a rank-0 evaluation before a timeout names
    # what the generic timeout cause only lists): say it once, the precise way
    fired = {f.signature for f in out}
    return [f for f in out if fired.isdisjoint((library.rules[f.signature].cause or {}).get("explained_by") or [])]


def _evaluate(rule: Rule, findings: list[Finding], observations: Observations, run: RunModel) -> Finding | None:
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
    judged = [_condition(c, run, findings, observations) for c in spec.get("requires", [])]
    if not all(j.holds for j in judged):
        return None
    any_of = [_condition(c, run, findings, observations) for c in spec.get("requires_any", [])]
    if any_of and not any(j.holds for j in any_of):
        return None
    if any(_condition(c, run, findings, observations).holds for c in spec.get("rules_out", [])):
        return None
    if _named_already(spec.get("explained_by") or [], seen, findings):
        return None
    held = judged + [j for j in any_of if j.holds]
    why = [w for j in held for w in j.why]
    lines = [line for j in held for line in j.lines]
    return _finding(rule, seen, why, lines, run, findings, observations)


def _condition(name: str, run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    gpus = run.gpus
    if name == "multi-gpu":
        return Judged(run.multi_gpu, [f"{gpus.count} GPUs or ranks take part"] if run.multi_gpu else [])
    if name == "nvlink":
        return Judged(gpus.interconnect is Interconnect.NVLINK, [])
    if name == "pcie":
        facts = run.pcie_evidence
        return Judged(bool(facts), [f.cited() for f in facts], tuple(f.text for f in facts if f.line))
    if name == "custom-allreduce":
        if run.custom_allreduce is False:
            return Judged(False, [])  # the run said it turned custom all-reduce off
        obs = observations.first(Symptom.CUSTOM_ALLREDUCE)
        if obs is not None:
            return Judged(True, [f"a custom all-reduce is on the failing path ({clip(str(obs.facts.get('where', '')), 60)}, line {obs.line})"])
        return Judged(run.custom_allreduce is True, ["the run enabled custom all-reduce"] if run.custom_allreduce else [])
    if name in ("tensorrt-llm", "vllm", "sglang"):
        held = any(f.value == name for f in run.frameworks)
        return Judged(held, [f"the run is {name}"] if held else [])
    if name == "p2p-disabled":
        return Judged(run.env.get("NCCL_P2P_DISABLE") == "1", [])
    if name == "nccl-versions-differ":
        # one job, two NCCL releases (major.minor): the ranks do not speak the same protocol
        releases = {".".join(v.split(".")[:2]): fact for v, fact in run.nccl_versions.items()}
        facts = list(releases.values())
        return Judged(len(releases) > 1, [f"the log shows {len(releases)} NCCL releases: " + ", ".join(f.cited() for f in facts)]
                      if len(releases) > 1 else [], tuple(f.text for f in facts))
    if name == "finished-before-timeout":
        # a rank said it finished its loop, then a collective timed out in the same input: the ranks left at different points
        done, timeout = run.reached.get(Phase.FINISH), observations.first(Symptom.COLLECTIVE_TIMEOUT)
        held = done is not None and timeout is not None and done.source == timeout.source and done.line < timeout.line
        return Judged(held, [f"the run said it finished (line {done.line}) before the collective timed out (line {timeout.line})"]
                      if held else [], (done.text,) if held else ())
    if name == "early-collective":
        seqs = [o.facts["seq"] for o in observations.of(Symptom.COLLECTIVE_TIMEOUT) if isinstance(o.facts.get("seq"), int)]
        held = bool(seqs) and min(seqs) <= EARLY_SEQ  # type: ignore[type-var]
        return Judged(held, [f"the collective that timed out is among the process group's first (SeqNum {min(seqs)})"] if held else [])
    if name == "socket-ifname-set":
        value = run.env.get("NCCL_SOCKET_IFNAME")
        return Judged(value is not None, [f"the run set NCCL_SOCKET_IFNAME={value}"] if value is not None else [])
    if name == "no-error":
        return Judged(not any(f.is_error for f in findings), [])
    if name in _TIMEOUT_CONDITIONS:
        return _TIMEOUT_CONDITIONS[name](run, findings, observations)
    raise ValueError(f"unknown cause condition {name!r}")


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
    if (rule.cause or {}).get("warns_alone") and not _timeout_or_hang(run, findings, observations).holds:
        finding.severity = "warning"  # the precursor alone: no collective timed out, the run did not hang
        finding.notes.insert(0, "no collective timed out and the log shows no hang: this is what makes such a run hang, "
                                "not yet a failure")
    explained = set((rule.cause or {}).get("explains") or [])
    if explained:
        sources = {o.source for o in seen}
        _to_context(findings, lambda f: f.signature in explained and f.source in sources, f"a consequence of {rule.id}: {rule.title}")
    if (rule.cause or {}).get("outranks"):
        lines = {(o.source, o.line) for o in seen}
        _to_context(findings, lambda f: _covers(f, lines), f"explained by {rule.id}: {rule.title}")
    return finding


# -- collective timeouts: what the ranks were doing before one timed out -----------------------------

STEPS_NEAR_TIMEOUT_LINES = 1000  # the ranks' last steps count when printed this close before the timeout
NEAR_TIMEOUT_LINES = 100  # an activity this many lines before the timeout is what its rank was doing when the others waited
ACTIVITIES = (Symptom.DATA_PREPARATION, Symptom.EVALUATION_STARTED, Symptom.CHECKPOINT_SAVING)
PEER_GONE = frozenset({"torch-gloo-connection-closed", "torch-rank-left-early", "torch-nccl-watchdog-timeout", "torch-gloo-timeout"})


def _first_timeouts(observations: Observations) -> dict[str, Observation]:
    out: dict[str, Observation] = {}
    for o in observations.of(Symptom.COLLECTIVE_TIMEOUT):
        if o.source not in out or o.line < out[o.source].line:
            out[o.source] = o
    return out


def _last_activity(observations: Observations) -> tuple[Observation, Observation] | None:
    """(the activity, the timeout): the last preparation, evaluation or save shown shortly before a
    collective timed out in the same input."""
    timeouts = _first_timeouts(observations)
    best: tuple[Observation, Observation] | None = None
    for symptom in ACTIVITIES:
        for o in observations.of(symptom):
            t = timeouts.get(o.source)
            if o.facts.get("kind") == "barrier" or t is None or not 0 < t.line - o.line <= NEAR_TIMEOUT_LINES:
                continue  # (a frame of main_process_first is where ranks waited, not what one rank did)
            if best is None or o.line > best[0].line:
                best = (o, t)
    return best


def _activity_words(o: Observation) -> str:
    what = o.facts.get("what") or o.facts.get("path") or ""
    if o.symptom is Symptom.DATA_PREPARATION:
        return f"data preparation ({what})"
    if o.symptom is Symptom.EVALUATION_STARTED:
        return f"an evaluation ({what})"
    return f"a checkpoint save ({clip(str(what), 80)})" if what else "a checkpoint save"


def _preparation_before_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    found = _last_activity(observations)
    if found is None or found[0].symptom is not Symptom.DATA_PREPARATION:
        return Judged(False, [])
    o, t = found
    return Judged(True, [f"{_activity_words(o)} is the last thing the log shows (line {o.line}) before the collective timed out "
                         f"(line {t.line})"], (o.text,))


def _work_before_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    found = _last_activity(observations)
    if found is None or found[0].symptom is Symptom.DATA_PREPARATION:
        return Judged(False, [])
    o, t = found
    return Judged(True, [f"{_activity_words(o)} began at line {o.line}, and the next thing the log shows is the collective timing "
                         f"out (line {t.line}): the other ranks were already waiting in their next collective"], (o.text,))


def _long_step_before_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """An unfinished progress bar had run about as long as the process-group timeout when the
    collective timed out: its rank started that work when the others started waiting."""
    bars = observations.of(Symptom.PROGRESS_BAR)
    for source, t in _first_timeouts(observations).items():
        timeout_ms = t.facts.get("timeout_ms")
        before = [b for b in bars if b.source == source and b.line < t.line]
        if not isinstance(timeout_ms, int) or not before:
            continue
        bar = max(before, key=lambda b: b.line)
        elapsed, percent = bar.facts.get("elapsed_s"), bar.facts.get("percent")
        if isinstance(elapsed, int) and isinstance(percent, int) and percent < 100 and 0.9 <= elapsed * 1000 / timeout_ms <= 1.2:
            desc = f" ({bar.facts['desc'].strip()})" if str(bar.facts.get("desc", "")).strip() else ""
            return Judged(True, [f"a progress bar{desc} had run for {elapsed} s, about the process-group timeout "
                                 f"({timeout_ms // 1000} s), and stood at {percent}% (line {bar.line}) when the collective timed "
                                 f"out (line {t.line}): its rank was still at that work while the others waited"], (bar.text,))
    return Judged(False, [])


def _failed_in_preparation_barrier(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    # a traceback through main_process_first is an exception raised while the replicas waited in its barrier;
    # an error of the ranks' own (the main process's tokeniser raising) is that error, not a timeout
    # (a generic "unhandled exception" whose traceback shows no exception line is only these frames)
    frames = [o for o in observations.of(Symptom.DATA_PREPARATION) if o.facts.get("kind") == "barrier"]
    own = [f for f in findings if f.is_error and f.role == "root-cause" and f.reported_by != "launcher"
           and not (f.generic and "exception_type" not in f.facts)]
    if not frames or own:
        return Judged(False, [])
    o = frames[0]
    return Judged(True, [f"the ranks that failed were waiting in {o.facts.get('what')}'s barrier (line {o.line}) while the main "
                         "process prepared the data"], (o.text,))


def _uneven_stop(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    uneven = observations.of(Symptom.UNEVEN_INPUTS)
    if not uneven:
        return Judged(False, [])
    stopped = _timeout_or_hang(run, findings, observations).holds or any(f.signature in PEER_GONE for f in findings)
    noted = next((o for o in uneven if o.facts.get("kind") == "note"), None)
    if not stopped and noted is None:
        return Judged(False, [])
    o = uneven[0]
    words = {"iterable-dataset-length": "the DataLoader fetched more samples than the IterableDataset's length said",
             "join": "torch's Join reported a rank that ran out of inputs",
             "note": "the log's own note says the ranks had different numbers of batches"}.get(str(o.facts.get("kind")), "uneven inputs")
    return Judged(True, [f"{words} (line {o.line})"], (o.text,))


def _timeout_or_hang(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    return Judged(observations.has(Symptom.COLLECTIVE_TIMEOUT) or run.stop.kind.is_hang, [])


def _no_root_error(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    own = [f for f in findings if f.is_error and f.role == "root-cause" and f.reported_by != "launcher"]
    return Judged(not own, [])


def _timeout_differential(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """Always holds: what the timed-out collective was, and which of the usual causes that makes likelier."""
    t = min(_first_timeouts(observations).values(), key=lambda o: (o.source, o.line), default=None)
    if t is None:
        return Judged(True, [])
    op, numel, seq = t.facts.get("op_type"), t.facts.get("numel_in"), t.facts.get("seq")
    what = " ".join(x for x in (str(op) if op else "", f"SeqNum {seq}" if seq is not None else "",
                                f"NumelIn {numel}" if numel is not None else "") if x)
    missing = t.facts.get("missing_ranks")
    named = [f"monitored_barrier names rank(s) {missing} as the one(s) that never arrived (line {t.line}): read what they were doing"] \
        if missing else []
    if isinstance(seq, int) and seq <= EARLY_SEQ:
        hint = "one of the group's first collectives, so a rank still starting up or preparing data is likeliest"
    elif op in ("BARRIER", "BROADCAST") or numel == 1:
        hint = ("a barrier, a broadcast or a one-element all-reduce (a flag or a metric) comes from code around the training step: "
                "work only rank 0 does (evaluation, saving, logging) or a rank-dependent branch is likelier than uneven batches")
    elif isinstance(numel, int) and numel > 1:
        hint = ("a tensor-sized collective inside the steps (gradients, parameters): ranks with different numbers of batches or a "
                "data-dependent forward are likelier than rank-0 work")
    else:
        return Judged(True, named + ([f"the collective that timed out was {what}"] if what else []) + _where_the_ranks_were(t, observations))
    return Judged(True, named + [f"the collective that timed out was {what or 'at line ' + str(t.line)}: {hint}"] + _where_the_ranks_were(t, observations))


def _where_the_ranks_were(t: Observation, observations: Observations) -> list[str]:
    """What the log shows of the ranks' progress at the timeout: the last step each rank printed, and
    a training bar at the last step of its epoch."""
    notes: list[str] = []
    steps = {rank: o for (source, rank), o in observations.last_steps.items() if source == t.source and o.line < t.line}
    # only steps printed shortly before the timeout: past the scan's per-symptom cap a rank's later steps are not matched
    if len(steps) >= 2 and all(t.line - o.line <= STEPS_NEAR_TIMEOUT_LINES for o in steps.values()):
        at = {rank: (o.facts.get("epoch", 0), o.facts.get("step", 0)) for rank, o in steps.items()}
        if len(set(at.values())) > 1:
            behind = sorted(r for r, s in at.items() if s == min(at.values()))
            listed = ", ".join(f"rank {r} step {s[1]}" + (f" of epoch {s[0]}" if "epoch" in steps[r].facts else "") for r, s in sorted(at.items()))
            notes.append(f"the last step each rank printed before the timeout differs ({listed}): rank(s) "
                         f"{', '.join(map(str, behind))} ran fewer batches (uneven inputs) or are stuck or busy in the next step")
    bars = [b for b in observations.of(Symptom.PROGRESS_BAR) if b.source == t.source and b.line < t.line]
    if bars:
        bar = max(bars, key=lambda b: b.line)
        done, total = bar.facts.get("done"), bar.facts.get("total")
        if isinstance(done, int) and isinstance(total, int) and total > 1 and total - 1 <= done <= total:
            notes.append(f"the progress bar stood at {done}/{total} (line {bar.line}): the timeout came at the last step of the "
                         "epoch, where ranks with different numbers of batches part ways")
    return notes


_TIMEOUT_CONDITIONS = {
    "timeout-differential": _timeout_differential,
    "preparation-before-timeout": _preparation_before_timeout,
    "long-step-before-timeout": _long_step_before_timeout,
    "failed-in-preparation-barrier": _failed_in_preparation_barrier,
    "work-before-timeout": _work_before_timeout,
    "uneven-stop": _uneven_stop,
    "timeout-or-hang": _timeout_or_hang,
    "no-root-error": _no_root_error,
}


def _to_context(findings: list[Finding], which, note: str) -> None:
    """The root-cause errors ``which`` picks are what the cause explains: context, with the note why."""
    for f in findings:
        if f.is_error and f.role == "root-cause" and which(f):
            f.role = "context"
            f.notes.append(note)


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
