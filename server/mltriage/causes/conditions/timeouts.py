"""Collective timeouts: what the timed-out collective was and what the ranks were doing before it."""

from __future__ import annotations

from mltriage.causes.conditions.registry import Judged, condition
from mltriage.masking import clip
from mltriage.model import Finding
from mltriage.run_model.model import Phase, RunModel, StopKind
from mltriage.symptoms.observe import Observation, Observations
from mltriage.symptoms.vocabulary import Symptom

EARLY_SEQ = 4  # a process group's first collectives: DDP's parameter broadcast, start-up barriers

@condition("finished-before-timeout", "a rank said it finished its loop before a collective timed out in the same input")
def _finished_before_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    # a rank said it finished its loop, then a collective timed out in the same input: the ranks left at different points
    done, timeout = run.reached.get(Phase.FINISH), observations.first(Symptom.COLLECTIVE_TIMEOUT)
    held = done is not None and timeout is not None and done.source == timeout.source and done.line < timeout.line
    return Judged(held, [f"the run said it finished (line {done.line}) before the collective timed out (line {timeout.line})"]
                  if held else [], (done.text,) if held else ())


@condition("early-collective", "the collective that timed out is among the process group's first (SeqNum <= 4)")
def _early_collective(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    seqs = [o.facts["seq"] for o in observations.of(Symptom.COLLECTIVE_TIMEOUT) if isinstance(o.facts.get("seq"), int)]
    held = bool(seqs) and min(seqs) <= EARLY_SEQ  # type: ignore[type-var]
    return Judged(held, [f"the collective that timed out is among the process group's first (SeqNum {min(seqs)})"] if held else [])


@condition("timeout-differential", "always holds: what the timed-out collective was, and which causes it makes likelier")
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


@condition("preparation-before-timeout", "the last thing shown before the timeout is data preparation (dataset map, tokenising)")
def _preparation_before_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    found = _last_activity(observations)
    if found is None or found[0].symptom is not Symptom.DATA_PREPARATION:
        return Judged(False, [])
    o, t = found
    return Judged(True, [f"{_activity_words(o)} is the last thing the log shows (line {o.line}) before the collective timed out "
                         f"(line {t.line})"], (o.text,))


@condition("long-step-before-timeout", "an unfinished progress bar had run about as long as the process-group timeout")
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


# the process-group timeouts a run gets when it sets none: NCCL's 30 min before torch 2.2 (and HF's ddp_timeout, 1800 s),
# 10 min since; a preparation bar that stopped at one of them, with the run failing right there, outlasted it
DEFAULT_TIMEOUTS_S = (1800, 600)
BAR_TO_FAILURE_LINES = 3


@condition("preparation-stopped-at-default-timeout",
           "the run failed right after a data-preparation bar that had run as long as a default process-group timeout")
def _preparation_stopped_at_default_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """No timeout line (a traceback cut, a rank's log missing), but the error came right where an unfinished
    data-preparation bar had run 30 (or 10) minutes: the waiting ranks' default timeout expired then."""
    if run.stop.kind is not StopKind.ERROR or run.stop.line is None:
        return Judged(False, [])
    preparing = {(o.source, o.line) for o in observations.of(Symptom.DATA_PREPARATION) if o.facts.get("kind") != "barrier"}
    for bar in observations.of(Symptom.PROGRESS_BAR):
        elapsed, percent = bar.facts.get("elapsed_s"), bar.facts.get("percent")
        if ((bar.source, bar.line) not in preparing or bar.source != run.stop.source or not isinstance(elapsed, int)
                or not isinstance(percent, int) or percent >= 100 or not 0 <= run.stop.line - bar.line <= BAR_TO_FAILURE_LINES):
            continue
        for timeout_s in DEFAULT_TIMEOUTS_S:
            if 0.98 <= elapsed / timeout_s <= 1.05:
                return Judged(True, [f"the run failed (line {run.stop.line}) right as its data preparation's bar had run {elapsed} s "
                                     f"at {percent}% (line {bar.line}): {timeout_s // 60} minutes is the process-group timeout a run "
                                     "gets by default, which the ranks waiting for this preparation hit"], (bar.text,))
    return Judged(False, [])


@condition("failed-in-preparation-barrier", "the run failed with ranks waiting in main_process_first's barrier")
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


@condition("work-before-timeout", "the last thing shown before the timeout is an evaluation or a checkpoint save")
def _work_before_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    found = _last_activity(observations)
    if found is None or found[0].symptom is Symptom.DATA_PREPARATION:
        return Judged(False, [])
    o, t = found
    return Judged(True, [f"{_activity_words(o)} began at line {o.line}, and the next thing the log shows is the collective timing "
                         f"out (line {t.line}): the other ranks were already waiting in their next collective"], (o.text,))


@condition("uneven-stop", "ranks hold different numbers of batches and the run timed out, hung or lost a rank")
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


@condition("timeout-or-hang", "a collective timed out, or the run stopped in a hang")
def _timeout_or_hang(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    return Judged(observations.has(Symptom.COLLECTIVE_TIMEOUT) or run.stop.kind.is_hang, [])


@condition("no-root-error", "no root-cause error of the ranks' own (timeouts and the launcher's reports are consequences)")
def _no_root_error(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    own = [f for f in findings if f.is_error and f.role == "root-cause" and f.reported_by != "launcher"]
    return Judged(not own, [])


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


@condition("every-rank-waited", "no rank the log shows went without a collective timeout (a rank that did not time out was the late one)")
def _every_rank_waited(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """A transport that never delivers leaves every rank waiting in the collective, so each one's watchdog fires;
    a late rank is the one whose own watchdog did not (it was elsewhere). Without ranks in the log: not known, holds."""
    timed_out = {o.rank for o in observations.of(Symptom.COLLECTIVE_TIMEOUT) if o.rank is not None}
    shown = set(run.ranks)
    if len(shown) < 2 or not timed_out:
        return Judged(True, [])
    late = sorted(shown - timed_out)
    return Judged(not late, [f"ranks {', '.join(map(str, sorted(timed_out)))} timed out"] if not late else [])
