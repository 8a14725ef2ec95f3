"""Reasoning about the whole run, not one line: stalls, and tracebacks the run survived.

Line signatures see a failure only where a line says so. Two common cases say nothing:
- a run that stalls prints no error at all: its log just stops, after NCCL set up its channels,
  after a benchmark's results header, or with a progress bar at zero. Where the log also shows
  GPUs talking over PCIe (P2P/SHM transports between GPUs, PCIe-only GPU models, vLLM turning
  custom all-reduce off), broken peer-to-peer is the prime suspect, with a confirming experiment;
- a traceback that was logged and handled, after which the same process went on making progress,
  is not what ended the run.
Derived findings come from ``derived = true`` signatures (their text lives in the encyclopedia);
their evidence is the lines that established each fact.
"""

from __future__ import annotations

import re

from mltriage.lazy_pattern import lazy
from mltriage.library import Library, Rule
from mltriage.masking import clip
from mltriage.model import ContextReason, Finding, Severity
from mltriage.templates import ranks_text
from mltriage.engine.catalogue_lines import CATALOGUE_SIGNATURE
from mltriage.engine.run_facts import FINISHED_LINE, RunFacts, TailLine
from mltriage.engine.findings import render_rule_text
from mltriage.run_model.build import meaningful
from mltriage.symptoms.observe import Observations
from mltriage.symptoms.vocabulary import Symptom
from mltriage.run_model.model import RunModel, Stop, StopKind

LEFT_EARLY = "torch-rank-left-early"
STALL_PLAIN = "run-stalled-without-error"

# (tail lines are at most 4 KiB; every pattern here is linear on them: no unbounded run is retried
# from inside another, so a 4,096-digit or 4,096-space line costs microseconds)
_PROGRESS = lazy(re.compile,
    r"(?<!\d)\d{1,3}%\s{0,4}\||(?<![\d.])\d{1,12}(?:\.\d{1,6})?\s{0,4}(?:it|s)/(?:s|it)\b|\b(?:epoch|step|iter(?:ation)?|global_step)\b\W{0,3}\d|\bloss\b\W{0,3}\d",
    re.IGNORECASE,
)
HANDLED_MIN_LINES_AFTER = 5  # lines the process printed after a traceback before we call it survived


def settle_findings(findings: list[Finding], run: RunFacts, observations: Observations) -> None:
    """What the whole log says about single findings, in place: tracebacks the run survived or that
    it cut off, what a Ctrl-C printed, warning-level lines."""
    _demote_interrupt_tracebacks(findings, observations)
    _demote_survived_tracebacks(findings, run)
    _demote_unterminated_tracebacks(findings)
    _demote_warning_level_lines(findings)


def derive_findings(findings: list[Finding], run: RunFacts, model: RunModel, library: Library) -> list[Finding]:
    """Findings no line names: a rank that left early, or a hang no cause explains."""
    if any(f.is_error for f in findings):
        left = _rank_that_left_early(findings, run, library)
        return [left] if left else []
    stop = model.stop
    if not stop.kind.is_hang or stop.kind is StopKind.WATCHDOG:
        return []
    if stop.silence is not None and stop.silence.could_be_a_cut:
        return []  # a log cut here is also what a healthy paste looks like: only a cause with its evidence may speak
    rule = library.get(STALL_PLAIN)
    return [_derived(rule, stop, model)] if rule else []


COMMAND_SLOT = "<command>"


def name_the_command(findings: list[Finding], run: RunFacts) -> None:
    """Where a fix or verify step says "rerun <command>", put the command this log shows. A log that
    shows none leaves no verify that is only the slot: the verify says the check in words."""
    if run.command is None:
        for f in findings:
            _verify_without_command(f)
        return
    from mltriage.command_line import with_flags  # (here: a log with no launch command never parses one)

    command = run.command.text
    slot = COMMAND_SLOT
    misplaced = _assignments_after_program(command)
    for f in findings:
        relaunch = with_flags(command, f.fix.flags) if f.fix.flags else None
        if relaunch is not None:  # the fix's flags on the command this log ran: what to run next
            f.fix.relaunch = relaunch
            f.facts.setdefault("command", command)
        if slot in f.verify or any(slot in x for x in (*f.fix.steps, *f.fix.commands)):
            f.verify = f.verify.replace(slot, command)
            f.fix.steps = [x.replace(slot, command) for x in f.fix.steps]
            f.fix.commands = [x.replace(slot, command) for x in f.fix.commands]
            f.facts.setdefault("command", command)
            f.notes.append(f"the run was launched with `{command}` (line {run.command.line})")
            if misplaced:
                f.notes.append(f"`{' '.join(misplaced)}` comes after the program name, so it is passed as an argument, "
                               f"not set in the environment: put it before the command or `export` it")


def _verify_without_command(f: Finding) -> None:
    """``<command>  # rerun: the IndexError at x.py:16 must be gone`` names no command a user can run:
    the verify says it in words, with its condition. A verify that only prefixes the command
    (``NCCL_P2P_DISABLE=1 <command>``) is a recipe and stays."""
    command, _, comment = f.verify.partition("#")
    if command.strip() != COMMAND_SLOT:
        return
    condition = re.sub(r"^rerun\b[^:]*:\s*", "", comment.strip())
    # said in words: there is no command to show, and the check still belongs under Verify
    f.verify = "rerun the command that launched the run (this log does not show it)" + (f": {condition}" if condition else "")


def _assignments_after_program(command: str) -> list[str]:
    words = command.split()
    first = next((i for i, w in enumerate(words) if not re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", w)), None)
    if first is None:
        return []
    return [w for w in words[first + 1:] if re.fullmatch(r"(?:NCCL|CUDA|TORCH|PYTORCH|OMP|MASTER|GLOO|VLLM)_?[A-Z0-9_]*=\S+", w)]


def derived_finding(rule: Rule, facts: dict[str, str], source: str, line: int, text: str, evidence: list[str],
                    notes: list[str], rank: int | None) -> Finding:
    """A finding of a derived signature, raised at ``line`` of ``source`` with these facts."""
    title, root_cause, fix, verify = render_rule_text(rule, facts)
    return Finding(
        signature=rule.id, title=title, category=rule.category, area=rule.area, severity=rule.severity,
        proposed_role=rule.role, rank=rank, host=None, source=source, lines=(line, line), line=line,
        column_start=0, column_end=len(text), evidence=list(evidence), facts=dict(facts),
        root_cause=root_cause, fix=fix, verify=verify, confidence=rule.confidence, p2p_related=rule.p2p_related,
        notes=list(notes), kind=rule.kind, ranks=[rank] if rank is not None else [],
    )


# -- stalls -------------------------------------------------------------------------------------------


def last_lines_notes(model: RunModel) -> list[str]:
    notes = [f"{f'rank {x.rank}' if x.rank is not None else x.source} last printed line {x.line}: {x.text}" for x in model.last_lines]
    for dump in reversed(model.dumps):
        notes.insert(0, f"the stack dump at line {dump.line} shows {f'rank {dump.rank}' if dump.rank is not None else 'the process'} "
                        f"waiting in {dump.waiting_in} ({dump.at})")
    return notes


def _derived(rule: Rule, stop: Stop, model: RunModel) -> Finding:
    facts = {"stopped": stop.where, "last_line": clip(stop.text, 200)}
    notes = [f"the log stops {stop.where} and holds no error"] + last_lines_notes(model)
    finding = derived_finding(rule, facts, stop.source or "<run>", stop.line or 1, stop.text, [stop.text] if stop.text else [],
                              notes, None)
    if stop.kind in (StopKind.HANG_NOTED, StopKind.HANG_DUMP):
        # not a log that merely ends: the user said it hangs, interrupted it, or dumped its stacks
        finding.severity = "error"
        finding.notes[0] = f"the run stopped {stop.where}"
    return finding


# -- a rank that finished while its peers were still in a collective --------------------------------


def _rank_that_left_early(findings: list[Finding], run: RunFacts, library: Library) -> Finding | None:
    """Every error is a consequence (a peer closed the connection, a collective timed out) and one
    rank said it finished, without an error of its own, before them: that rank left early."""
    errors = [f for f in findings if f.is_error]
    if not errors or any(f.role == "root-cause" and f.reported_by != "launcher" for f in errors):
        return None
    erring = {r for f in errors if f.reported_by != "launcher" for r in f.reporting_ranks}
    done = {key: mark for key, mark in run.finished.items() if key[1] is not None and key[1] not in erring}
    if not erring or not done:
        return None
    (source, rank), mark = min(done.items(), key=lambda kv: (kv[1].source, kv[1].line))
    peers = [f for f in errors if f.rank in erring and f.reported_by != "launcher"]
    after = [f for f in peers if f.source != source or f.line > mark.line]
    if not after:
        return None  # the peers failed before it finished: not the cause
    rule = library.get(LEFT_EARLY)
    if rule is None:
        return None
    first_peer = min(after, key=lambda f: (f.source != source, f.line))
    facts = {"rank": str(rank), "peer_ranks": ranks_text(erring), "peer_error": first_peer.title}
    notes = [f"rank {rank} printed that it finished at line {mark.line}: {clip(mark.text, 160)}",
             f"ranks {facts['peer_ranks']} then failed waiting for it: {first_peer.title} ({first_peer.source}:{first_peer.line})"]
    evidence = [mark.text, first_peer.evidence[-1] if first_peer.evidence else ""]
    return derived_finding(rule, facts, source, mark.line, mark.text, evidence, notes, rank)


# -- wrong numbers on a P2P topology ------------------------------------------------------------------


def corroborate_p2p(findings: list[Finding], model: RunModel) -> None:
    """NaN/inf or garbage where the GPUs exchange data peer-to-peer over PCIe: a P2P finding gets
    this log's topology evidence; a NaN loss gets the experiment that rules P2P corruption in or out."""
    if not model.pcie_evidence:
        return
    facts = "; ".join(f.cited() for f in model.pcie_evidence)
    for f in findings:
        if not f.is_error:
            continue
        if f.p2p_related and f.category == "correctness":
            f.notes.append(f"this log's topology supports it: {facts}")
            f.confidence = min(0.95, f.confidence + 0.05)
        elif f.category == "numerics":
            f.notes.append(f"the GPUs exchange data over PCIe here ({facts}): broken peer-to-peer can also produce NaN")
            f.fix.steps.append("Rule out silent P2P corruption: rerun the same steps with `NCCL_P2P_DISABLE=1`; "
                               "if the NaN disappears, peer-to-peer on this host is corrupting data (run `mltriage probe`)")


# -- what a Ctrl-C printed ------------------------------------------------------------------------------


def _demote_interrupt_tracebacks(findings: list[Finding], observations: Observations) -> None:
    """The traceback a Ctrl-C (or torchrun's SIGINT shutdown) prints says where the user stopped the
    run, not what broke: from the first interrupt on, generic and launcher findings are context."""
    first: dict[str, int] = {}
    for obs in observations.of(Symptom.USER_INTERRUPT):
        first[obs.source] = min(first.get(obs.source, obs.line), obs.line)
    if not first:
        return
    for f in findings:
        at = first.get(f.source)
        if at is None or not f.is_error or f.lines[1] < at:
            continue
        if f.generic or f.category == "launcher" or f.facts.get("exception_type") == "KeyboardInterrupt":
            f.severity = Severity.WARNING
            f.set_aside(ContextReason.AFTER_INTERRUPT,
                        f"printed after the user interrupted the run (Ctrl-C / SIGINT at line {at}): where it was stopped, not what broke")


# -- lines the program logged as warnings ---------------------------------------------------------------


# A warning line whose own words say the program took another path and went on
# ("... falling back to NCCL", "custom all-reduce kernels are disabled", "skipping", "continuing without")
_WENT_ON = lazy(re.compile, r"\bfall(?:ing|s)?[ -]?back\b|\bfallback to\b|\b(?:is|are|been|will be|was|were) (?:now )?disabled\b|\bdisabling\b|"
                      r"\bcontinuing without\b|\bskipping\b|\bwill (?:be )?(?:ignored|skipped)\b", re.IGNORECASE)


def _demote_warning_level_lines(findings: list[Finding]) -> None:
    """A failure phrase inside a WARNING-level log line is something the program survived. Where an
    error-level line names what did end the run (vLLM's "WARNING mm-dd ... Failed to import ...", a Python
    UserWarning), the warning is context; where the line itself says the program fell back or went on
    (TensorRT-LLM's "[WARN] CUDA IPC is not usable on this system: cudaErrorInvalidDevice ... falling back
    to NCCL"), it is a warning whether or not another line ended the run."""
    ended = any(f.is_error and f.facts.get("log_level") != "warning" for f in findings)
    for f in findings:
        if not f.is_error or f.facts.get("log_level") != "warning":
            continue
        if ended:
            f.severity = Severity.WARNING
            f.set_aside(ContextReason.WARNING_LEVEL, "the program logged this at WARNING level and went on; the error it stopped on is named first")
        elif f.block is None and any(_WENT_ON.search(line) for line in f.evidence[-1:]):
            f.severity = Severity.WARNING
            f.notes.append("the program logged this at WARNING level and said it falls back or goes on: a condition it survived")


# -- tracebacks the log cut off -----------------------------------------------------------------------


def _demote_unterminated_tracebacks(findings: list[Finding]) -> None:
    """A generic traceback finding whose exception line never came (the paste or the log stops inside
    the frames) knows no error at all: where another finding names one, it is only context."""
    named = [f for f in findings if f.is_error and not (f.generic and "exception_type" not in f.facts)]
    if not named:
        return
    for f in findings:
        if f.generic and f.block is not None and "exception_type" not in f.facts and f.is_error:
            f.severity = Severity.WARNING
            f.set_aside(ContextReason.CUT_TRACEBACK, "the log stops inside this traceback before its exception line; the error is named elsewhere")


# -- tracebacks the run survived ----------------------------------------------------------------------


def _demote_survived_tracebacks(findings: list[Finding], run: RunFacts) -> None:
    tails: dict[str, list[TailLine]] = {}  # per source, computed once (not once per finding)
    for f in findings:
        if (f.block is None and f.signature != CATALOGUE_SIGNATURE) or not f.is_error:
            continue  # a traceback, or an error line logged by the program (the catalogue's findings)
        if f.source not in tails:
            tails[f.source] = meaningful(run.tails.get(f.source, []))
        tail = tails[f.source]
        own = [t for t in tail if t.rank == f.rank]
        if not own:
            continue
        last = own[-1]
        if last.line - f.lines[1] < HANDLED_MIN_LINES_AFTER or not (_PROGRESS.search(last.message) or FINISHED_LINE.search(last.message)):
            continue
        later = [g for g in findings if g is not f and g.source == f.source and g.rank == f.rank
                 and g.is_error and g.line > f.lines[1]]
        if later:
            continue
        f.severity = Severity.WARNING
        if f.generic and f.facts.get("exception_type"):
            f.title = f"Python exception logged and handled: {f.facts['exception_type']} (the run carried on)"
        f.set_aside(ContextReason.SURVIVED, f"the process carried on after this traceback and was still making progress at line {last.line} "
                                            f"({clip(last.message, 120)}): it was logged and handled, not what ended the run")
