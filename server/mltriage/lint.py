"""`mltriage signatures lint`: everything a signature must satisfy beyond its schema.

Checks: schema and file naming, duplicate ids, unknown related ids, weak matchers (a pattern
that fires on a bare "error"/"timeout"), super-linear shapes found from the pattern's structure
(side-by-side or nested repetitions over the same characters: ``regex_shape``), catastrophic
backtracking (a time-bounded run against adversarial input), every positive sample fires the
signature, ranks it first and yields the declared facts, no negative sample fires it, and no signature fires at error level on the
healthy-log corpus.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import regex

from mltriage.library import Library, Rule, signature_files, validate_file
from mltriage.regex_shape import super_linear_shapes
from mltriage.schema import Signature

WEAK_PROBES = (
    "error", "Error", "ERROR", "error:", "timeout", "Timeout", "timed out", "failed", "Failed", "FAILED",
    "Exception", "exception", "warning", "WARNING", "ERROR: failed", "Error: timeout", "nan", "NaN", "Killed",
    "RuntimeError", "RuntimeError: error", "abort", "fatal", "E", "",
)  # fmt: skip
# A pattern must stay linear on long lines: a search that costs more than the budget below on a
# 32 KiB adversarial line (three tries) is super-linear or scans far at every position, and a few
# hundred such lines make a 10 MB log take many seconds. (The scanner matches at most 16 KiB of a
# line around its trigger.)
ADVERSARIAL_LINE = 32 * 1024
BACKTRACK_BUDGET_S = 0.02  # CPU seconds of one search of an adversarial line
# ... and that many times the CPU time of a baseline search of the same line in the same run, so
# that neither a loaded machine (both slow down) nor a slow one makes a linear pattern fail. On
# this library: the patterns that backtracked (tests/test_hardening_engine.py) cost 34-500 ms and
# 3,500-46,000 baselines; the costliest pattern that ships, 13 ms and ~700 baselines.
BACKTRACK_BASELINES = 1_500
SEARCH_WALL_LIMIT_S = 0.5  # wall-clock bound of one search (a catastrophic one stops here)
_BASELINE = regex.compile(r"[^\n]{1,64}\x00", regex.VERSION0)
# One character of every class a pattern's quantifiers range over: word, digit, space, tab,
# brackets, quotes, path and key=value punctuation, backslash.
_ADVERSARIAL_CHARS = "a0 :.=/-_(,)[]<>{}\t'\"`\\|;"


@dataclass
class LintReport:
    errors: list[str] = field(default_factory=list)
    checked: int = 0
    samples: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.errors


def _flood(piece: str, size: int) -> str:
    return piece * max(1, size // max(1, len(piece)))


def adversarial_lines(rule: Rule, sample_texts: list[str], size: int = ADVERSARIAL_LINE) -> list[str]:
    """Lines of about ``size`` characters built to make a regex backtrack: floods of one character
    before and after the rule's triggers (``\\w+: connect to`` after 64 K word characters), the
    trigger repeated, and a positive sample's line cut open: what precedes its trigger repeated
    (a path pattern tried at every position), what follows it repeated without its last character
    (a lazy field that never finds its end), the whole line repeated less its last character."""
    triggers = " ".join(rule.triggers)
    lines = []
    for ch in _ADVERSARIAL_CHARS:
        lines.append(_flood(ch, size) + triggers)
        lines.append(triggers + _flood(ch, size))
    for trigger in rule.triggers:
        lines.append(_flood(trigger + " ", size))
        lines.append(_flood(trigger[:1], size) + trigger)
    for text in sample_texts[:2]:
        line = next((ln for ln in text.splitlines() if any(t in ln for t in rule.triggers)), None)
        if line is None:
            continue
        trigger = next(t for t in rule.triggers if t in line)
        before, _, after = line.partition(trigger)
        lines.append(_flood(line[:-1] + " ", size))
        if before:
            lines.append(_flood(before, size) + trigger + after)
        if after[:-1]:
            lines.append(before + trigger + _flood(after[:-1], size))
    return lines


def _check_backtracking(rule: Rule, sample_texts: list[str]) -> list[str]:
    problems = []
    inputs = adversarial_lines(rule, sample_texts)
    for source, compiled in zip(
        rule.pattern_sources + rule.require_sources + rule.exclude_sources,
        rule.patterns + rule.requires + rule.excludes,
    ):
        for text in inputs:
            if _slower_than(compiled, text, BACKTRACK_BUDGET_S, tries=3):
                problems.append(
                    f"{rule.path}: field 'match': regex {source!r} backtracks catastrophically "
                    f"(over {BACKTRACK_BUDGET_S * 1000:.0f} ms on a {len(text)}-character adversarial line "
                    f"starting {text[:40]!r}: make every repetition bounded and anchored on a literal)"
                )
                break
    return problems


def _check_shapes(rule: Rule) -> list[str]:
    """Structural, so the same tree lints the same on any machine: a quadratic or exponential shape
    is reported whatever a timed run of it happens to cost today."""
    problems = []
    for source in rule.pattern_sources + rule.require_sources + rule.exclude_sources:
        for shape in super_linear_shapes(source, rule.ignore_case):
            problems.append(f"{rule.path}: field 'match': regex {source!r}: {shape.describe()}")
    return problems


def _cpu_seconds(compiled, text: str) -> float:
    start = time.thread_time()
    try:
        compiled.search(text, timeout=SEARCH_WALL_LIMIT_S)
    except TimeoutError:
        pass
    return time.thread_time() - start


def _slower_than(compiled, text: str, budget_s: float, tries: int) -> bool:
    """Whether every one of ``tries`` searches of ``text`` costs more than ``budget_s`` of this
    thread's CPU time and more than BACKTRACK_BASELINES baseline searches of the same line. CPU
    time, not wall time, and a ratio to a baseline measured beside it: what a search computes does
    not grow when other processes load the machine, so the same tree lints the same on a busy
    machine as on an idle one. The wall-clock timeout only bounds a catastrophic search."""
    for _ in range(tries):
        spent = _cpu_seconds(compiled, text)
        if spent <= budget_s:
            return False
        baseline = min(_cpu_seconds(_BASELINE, text) for _ in range(3))
        if spent <= BACKTRACK_BASELINES * baseline:
            return False
    return True


def _check_weak(rule: Rule) -> list[str]:
    problems = []
    for source, compiled in zip(rule.pattern_sources, rule.patterns):
        fired = [probe for probe in WEAK_PROBES if compiled.search(probe, timeout=1)]
        if fired:
            problems.append(
                f"{rule.path}: field 'match.patterns': {source!r} is a weak matcher (fires on the bare line {fired[0]!r})"
            )
    return problems


def _check_samples(rule: Rule, sig: Signature, library: Library) -> list[str]:
    from mltriage.engine import diagnose_text

    problems = []
    for i, sample in enumerate(sig.samples.positive):
        d = diagnose_text(sample.text, source=f"{sig.id}.positive[{i}]", library=library)
        mine = [f for f in d.findings if f.signature == sig.id]
        if not mine:
            problems.append(f"{rule.path}: samples.positive[{i}]: does not fire the signature")
            continue
        first = d.findings[0]
        same_role_first = next((f for f in d.findings if f.role == sig.role), None)
        if first.signature != sig.id and not (sig.role != "root-cause" and same_role_first is mine[0]) \
                and not _explained_by_cause(first.signature, sig.id, library):
            problems.append(f"{rule.path}: samples.positive[{i}]: fires, but ranks after {first.signature!r}")
        for name, expected in sample.facts.items():
            got = mine[0].facts.get(name)
            if got is None or str(got) != str(expected):  # (a sample writes a number as text; the finding holds an int)
                problems.append(f"{rule.path}: samples.positive[{i}].facts.{name}: expected {expected!r}, captured {got!r}")
    for i, sample in enumerate(sig.samples.negative):
        d = diagnose_text(sample.text, source=f"{sig.id}.negative[{i}]", library=library)
        if any(f.signature == sig.id for f in d.findings):
            problems.append(f"{rule.path}: samples.negative[{i}]: fires the signature but must not")
    return problems


def _explained_by_cause(first: str, signature: str, library: Library) -> bool:
    """The finding ranked first is a cause that names this signature's finding as what it explains: the line
    finding is then its evidence (an NCCL result code whose cause the run model ranks), not a finding outranked."""
    rule = library.rules.get(first)
    return bool(rule and rule.derived and rule.cause and signature in (rule.cause.get("explains") or []))


def _check_trigger_alone(rule: Rule, library: Library) -> list[str]:
    """A trigger allowed to fire on its own must reach a finding when a line holds only it (so a
    release's unknown wording is never silently lost): requires and excludes must not block it."""
    from mltriage.engine import diagnose_text

    if rule.require_sources:
        return []  # a rule with AND conditions never fires on one line alone
    problems = []
    for trigger in rule.triggers:
        if not rule.fires_alone(trigger):
            continue
        d = diagnose_text(f"{trigger}\n", source=f"{rule.id}.trigger", library=library)
        if not any(f.signature == rule.id for f in d.findings):
            problems.append(
                f"{rule.path}: field 'match.triggers': {trigger!r} alone does not fire the signature; "
                f"list it in match.needs_pattern if it is too common to name the failure"
            )
    return problems


def check_healthy_corpus(library: Library, corpus: Path) -> list[str]:
    """Every file under ``corpus`` is a real healthy log: no error-level finding may appear."""
    from mltriage.engine import diagnose_path

    problems = []
    if not corpus.is_dir():
        return problems
    for path in sorted(p for p in corpus.rglob("*") if p.is_file() and not p.name.startswith(".")):
        if path.suffix in (".json", ".md", ".cmd", ".sh", ".py"):
            continue
        d = diagnose_path(path, library=library)
        for f in d.findings:
            if f.is_error:
                problems.append(
                    f"{path}:{f.line}: healthy log fires {f.signature!r} at {f.severity} level: {(f.evidence[-1] if f.evidence else f.title)[:160]!r}"
                )
    return problems


def lint(root: Path, healthy_corpus: Path | None = None) -> LintReport:
    started = time.perf_counter()
    report = LintReport()
    valid: list[tuple[Path, Signature]] = []
    seen: dict[str, Path] = {}
    files = signature_files(root)
    stray = sorted(p for p in root.rglob("*.toml") if p not in set(files))
    for path in stray:
        report.errors.append(f"{path}: signature files live exactly one folder deep: signatures/<area>/<id>.toml")
    for path in files:
        try:
            sig = validate_file(path)
        except ValueError as exc:
            report.errors.append(str(exc))
            continue
        if sig.id in seen:
            report.errors.append(f"{path}: field 'id': duplicate id {sig.id!r} (also in {seen[sig.id]})")
            continue
        seen[sig.id] = path
        valid.append((path, sig))
    rules = {sig.id: Rule.from_signature(sig, path) for path, sig in valid}
    library = Library(rules=rules, root=root)
    for path, sig in valid:
        rule = rules[sig.id]
        report.checked += 1
        report.samples += len(sig.samples.positive) + len(sig.samples.negative)
        for related in sig.related:
            if related not in rules and related not in seen:
                report.errors.append(f"{path}: field 'related': unknown signature id {related!r}")
        report.errors += _check_weak(rule)
        report.errors += _check_shapes(rule)
        report.errors += _check_backtracking(rule, [s.text for s in sig.samples.positive])
        report.errors += _check_samples(rule, sig, library)
        report.errors += _check_trigger_alone(rule, library)
    if healthy_corpus is not None:
        report.errors += check_healthy_corpus(library, healthy_corpus)
    report.seconds = time.perf_counter() - started
    return report


__all__ = ["LintReport", "lint", "check_healthy_corpus"]
