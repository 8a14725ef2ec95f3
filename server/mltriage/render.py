"""Render a diagnosis for people (terminal) and for CI systems (SARIF 2.1.0)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import Any

from mltriage import __version__
from mltriage.engine.catalogue_lines import CATALOGUE_SIGNATURE
from mltriage.lazy_pattern import lazy
from mltriage.masking import ensure_masked
from mltriage.model import Diagnosis, Finding, TimelineEntry
from mltriage.templates import ranks_text as _ranks_text

_STYLES = {"bold": "1", "dim": "2", "red": "31", "yellow": "33", "green": "32", "cyan": "36", "magenta": "35"}


class _Paint:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *styles: str) -> str:
        if not self.color or not styles:
            return text
        codes = ";".join(_STYLES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


def _initiator_first(d: Diagnosis, events: list[TimelineEntry]) -> tuple[list[TimelineEntry], TimelineEntry | None]:
    """The events with the initiator's error first: what the others are a consequence of happened
    before them, even where its line was written later (torchrun's failure summary reports a
    SIGKILLed worker after the SIGTERMs it sent because of it)."""
    root = d.root_cause
    if root is None:
        return events, None
    first = next((t for t in events if (t.source, t.line, t.signature) == (root.source, root.line, root.signature)), None)
    return ([first, *(t for t in events if t is not first)], first) if first is not None else (events, None)


def _timeline(events: list[TimelineEntry], t0: float, p, first: TimelineEntry | None = None) -> list[str]:
    """The timeline in the engine's time order (engine/triage.in_time_order), the initiator's error
    (``first``) at the top. A line without a timestamp shows where its source's order puts it:
    after the stamped line above it (``≥``) or, before any, no later than the stamped line below it (``≤``)."""
    out = [p("Timeline:", "bold")]
    for t in events:
        same = [e for e in events if e.source == t.source and e.timestamp is not None]
        if t is first and t.timestamp is None:
            when = "  initiator"  # its line comes late; triage puts it first
        elif t.timestamp is not None:
            when = f" +{t.timestamp - t0:8.3f}s"
        else:
            above = [e for e in same if e.line < t.line]
            below = [e for e in same if e.line > t.line]
            bound = ("≥", above[-1]) if above else ("≤", below[0]) if below else None
            when = f"{bound[0]}+{bound[1].timestamp - t0:8.3f}s" if bound else "   (no time)"
        who = f"rank {t.rank}" if t.rank is not None else "launcher"
        out.append(f"  {when}  {who:<10} {t.signature} ({t.role}) {Path(t.source).name}:{t.line}")
    out.append("")
    return out


def _rank_rows(roles: list) -> list[tuple[int, int, object]]:
    """Consecutive ranks that failed alike (same role, first error and file) share one row: a job
    of 40,000 ranks that all timed out is one line, not 40,000."""
    rows: list[tuple[int, int, object]] = []
    for r in sorted(roles, key=lambda r: r.rank):
        if rows:
            first, last, head = rows[-1]
            if r.rank == last + 1 and (r.role, r.first_error, r.source) == (head.role, head.first_error, head.source):
                rows[-1] = (first, r.rank, head)
                continue
        rows.append((r.rank, r.rank, r))
    return rows


def _where(f: Finding) -> str:
    first, last = f.lines
    lines = f"{first}" if first == last else f"{first}-{last}"
    rank = f"{f.rank_label} · " if f.rank_label else ""
    host = f"host {f.host} · " if f.host else ""
    return f"{rank}{host}{f.source}:{lines}"


def _run_line(run: dict | None) -> str:
    """The run model in one line: GPUs and their links, NCCL, how far it got and how it stopped."""
    if not run:
        return ""
    parts = []
    gpus = run.get("gpus") or {}
    if gpus.get("count"):
        link = {"pcie": " over PCIe", "nvlink": " over NVLink"}.get(gpus.get("interconnect"), "")
        parts.append(f"{gpus['count']} GPUs/ranks{link}")
    if run.get("nccl_version"):
        parts.append(f"NCCL {run['nccl_version']}")
    stop = run.get("stop") or {}
    phases = [x["phase"] for x in run.get("phases_reached") or []]
    if phases:
        parts.append(f"reached {phases[-1]}")
    if stop.get("kind") not in (None, "unknown", "error"):
        parts.append(f"stopped ({stop['kind']}) {stop.get('where') or ''}".rstrip())
    return " · ".join(parts) if len(parts) > 1 or stop.get("kind") not in (None, "unknown", "error") else ""


# What a terminal would act on rather than show: C0 controls but tab and newline (ESC starts colour,
# title and hyperlink sequences, CR rewrites the line), DEL, the C1 controls (U+0085, U+009B CSI,
# U+009D OSC ...), and the bidirectional controls (U+202E turns the rest of a line around:
# "Trojan Source", CVE-2021-42574). Each is shown as a visible escape instead.
_TERMINAL_CONTROLS = lazy(re.compile, "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str) -> str:
    """``text`` with every control and bidi control character escaped visibly (``\\x1b``, ``\\u202e``)."""
    return _TERMINAL_CONTROLS.sub(_visible, text)


def _for_terminal(value: Any) -> Any:
    """``value`` (a diagnosis and everything in it) with ``terminal_text`` applied to every string,
    as a copy of what changed (the rest is shared, unchanged): the text report is made from this, so
    nothing read from a log reaches the terminal raw, and our own colour codes, added while
    rendering, are the only escape sequences in it."""
    kind = type(value)
    if kind is str:
        return terminal_text(value) if _TERMINAL_CONTROLS.search(value) else value
    if kind in (int, float, bool, type(None)):
        return value
    if isinstance(value, dict):
        items = [(_for_terminal(k), _for_terminal(v)) for k, v in value.items()]
        same = all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items()))
        return value if same else dict(items)
    if isinstance(value, (list, tuple)):
        items = [_for_terminal(v) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else kind(items)
    if is_dataclass(value) and not isinstance(value, type):
        changed = {}
        for f in fields(value):
            if f.init:
                old = getattr(value, f.name)
                new = _for_terminal(old)
                if new is not old:
                    changed[f.name] = new
        return replace(value, **changed) if changed else value
    return value


def render_text(d: Diagnosis, color: bool = False, max_evidence: int = 8) -> str:
    d = _for_terminal(ensure_masked(d))
    p = _Paint(color)
    out: list[str] = []
    if d.status == "incomplete":
        out.append(p(f"mltriage: INCOMPLETE — no failure found in what could be read, but {len(d.unread)} input(s) "
                     "could not be read", "yellow", "bold") + f" ({d.lines_read} lines, {len(d.sources)} source(s))")
        for f in d.findings:
            out.append(f"  {p('·', 'dim')} {f.severity}: {f.title} [{f.signature}] at {_where(f)}")
        out.extend(_footer(d, p))
        return "\n".join(out) + "\n"
    if d.status == "healthy":
        out.append(p("mltriage: no failure found", "green", "bold") + f" ({d.lines_read} lines, {len(d.sources)} source(s))")
        stop = (d.run or {}).get("stop") or {}
        run = _run_line(d.run) if stop.get("kind") == "hang-silent" else ""
        if run:  # the log ends where runs hang: say how far it got, so the suspicion below can be judged
            out.append(p(f"  Run: {run}", "dim"))
        for f in d.findings:
            out.append(f"  {p('·', 'dim')} {f.severity}: {f.title} [{f.signature}] at {_where(f)}")
            if run and f.kind == "hang" and f.verify:
                out.append(f"      if it hung there, try: {f.verify}")
        out.extend(_footer(d, p))
        return "\n".join(out) + "\n"

    root = d.root_cause
    head = "mltriage: FAILURE"
    if d.initiating_rank is not None:
        head += f" — initiated by rank {d.initiating_rank}"
        if d.initiating_host:
            head += f" on {d.initiating_host}"
    kind = ", ".join(x for x in (d.failure_kind, d.failure_domain) if x)
    out.append(p(head, "red", "bold") + (f"  ({kind})" if kind else ""))
    if d.explanation:
        out.append(p(f"  {d.explanation}", "dim"))
    run = _run_line(d.run)
    if run:
        out.append(p(f"  Run: {run}", "dim"))
    out.append("")
    if root is not None:
        out.extend(_render_finding(root, p, max_evidence, label="ROOT CAUSE" if root.role == "root-cause" else "MOST LIKELY CAUSE"))

    others = [f for f in d.findings if f is not root]
    errors = [f for f in others if f.is_error]
    if errors:
        out.append(p("Collateral — consequences of the failure above:", "bold"))
        grouped: dict[str, list[Finding]] = defaultdict(list)
        for f in errors:
            grouped[f.signature].append(f)
        for sig, group in grouped.items():
            ranks = sorted({r for f in group for r in f.reporting_ranks})
            who = f"rank{'s' if len(ranks) > 1 else ''} {_ranks_text(ranks)}: " if ranks else ""
            first = group[0]
            out.append(f"  {p('•', 'yellow')} {who}{first.title} [{sig}] ×{sum(f.count for f in group)}")
            out.append(f"      {p('first at ' + _where(first), 'dim')}")
            if first.evidence:  # (a finding derived from the run as a whole may cite no line)
                out.append(f"      {first.evidence[-1].strip()[:200]}")
        out.append("")
    notes = [f for f in others if not f.is_error]
    if notes:
        out.append(p("Context:", "bold"))
        for f in notes[:20]:
            out.append(f"  · {f.severity}: {f.title} [{f.signature}] at {_where(f)}")
        out.append("")
    stamped = [t for t in d.timeline if t.timestamp is not None]
    if stamped and len({t.rank for t in d.timeline}) > 1:
        events, first = _initiator_first(d, d.timeline)
        out += _timeline(events[:12], stamped[0].timestamp, p, first)
    if len(d.ranks) > 1:
        out.append(p("Ranks:", "bold"))
        out.append(f"  {'rank':>5}  {'role':<10}  {'first error':<34}  where")
        rows = _rank_rows(d.ranks)
        for first, last, r in rows[:64]:
            role = p(f"{r.role:<10}", "red" if r.role == "initiator" else ("yellow" if r.role == "collateral" else "dim"))
            where = f"{Path(r.source).name}:{r.first_line}" if r.source and r.first_line else ""
            if last != first:
                where = f"{where} (first of them)" if where else ""
            who = f"{first}" if first == last else f"{first}–{last}"
            out.append(f"  {who:>5}  {role}  {(r.first_error or '-'):<34}  {where}")
        if len(rows) > 64:
            out.append(f"  … {sum(last - first + 1 for first, last, _ in rows[64:])} more ranks (see --json)")
        out.append("")
    if d.flight_recorder:
        out.append(p("Flight Recorder (per rank):", "bold"))
        for t in d.flight_recorder:
            out.append(
                f"  rank {t.rank:>4}: last scheduled SeqNum {t.last_scheduled}, started {t.last_started}, "
                f"completed {t.last_completed}" + (f", waiting in {t.stuck_op}" if t.stuck_op else "")
            )
        out.append("")
    out.extend(_footer(d, p))
    return "\n".join(out) + "\n"


def _render_finding(f: Finding, p: _Paint, max_evidence: int, label: str) -> list[str]:
    out = [
        p(f"{label}: {f.title}", "red", "bold"),
        p(f"  [{f.signature} · {f.category} · {f.severity} · confidence {f.confidence:.2f}] {_where(f)}", "dim"),
        "",
        f"  {f.root_cause}",
        "",
        p("  Evidence:", "bold"),
    ]
    evidence = f.evidence
    if len(evidence) > max_evidence:
        evidence = evidence[:2] + ["  …"] + evidence[-(max_evidence - 3) :]
    for line in evidence:
        out.append(p("  │ ", "dim") + line[:300])
    for note in f.notes:
        out.append(p(f"  ▸ {note}", "magenta"))
    out.append("")
    out.append(p("  Fix:", "bold") + f" {f.fix.summary}")
    for export in f.fix.exports():
        out.append(p(f"    {export}", "green"))
    for flag in f.fix.flags:
        out.append(p(f"    {flag.instruction}", "green") + f" ({flag.why.rstrip('.')})")
    if f.fix.relaunch:
        out.append(p(f"    $ {f.fix.relaunch}", "cyan") + p("  # this run's command with it", "dim"))
    for step in f.fix.steps:
        out.append(f"    - {step}")
    for command in f.fix.commands:
        out.append(p(f"    $ {command}", "cyan"))
    if f.verify:
        out.append(p("  Verify:", "bold") + f" {f.verify}")
    if f.catalogue is not None and f.signature != CATALOGUE_SIGNATURE:
        out.append(p("  Source:", "bold") + f" {f.catalogue.site} in {f.catalogue.releases}"
                   + (f" ({f.catalogue.link})" if f.catalogue.link else ""))
    if f.signature == CATALOGUE_SIGNATURE and f.catalogue is not None:
        out.append(p(f"  More: mltriage catalogue show {f.catalogue.id}", "dim"))
    else:
        out.append(p(f"  More: mltriage explain {f.signature}", "dim"))
    out.append("")
    return out


def _footer(d: Diagnosis, p: _Paint) -> list[str]:
    out = []
    if d.releases:
        out.append(p("This log comes from: ", "bold") + "; ".join(d.releases.values())
                   + " (from the catalogued messages it holds)")
    if d.topology:
        out.append(p(f"GPU topology (pasted {', '.join(d.topology['sources'])}):", "bold"))
        out.extend(f"  {fact}" for fact in d.topology["facts"])
    if d.probe:
        out.append(p(f"Local P2P probe: {d.probe.get('machine_verdict')}", "bold") + f" {d.probe.get('message', '')}")
    for w in d.warnings:
        out.append(p(f"warning: {w}", "yellow"))
    for s in d.unread:
        out.append(p(f"NOT READ {s['name']}: {s['reason']} (the diagnosis is incomplete)", "yellow", "bold"))
    for s in d.skipped:
        out.append(p(f"skipped {s['name']}: {s['reason']}", "dim"))
    return out


_SARIF_LEVEL = {"critical": "error", "error": "error", "warning": "warning", "info": "note"}


def render_sarif(d: Diagnosis) -> dict:
    ensure_masked(d)
    rules: dict[str, dict] = {}
    results = []
    for f in d.findings:
        rules.setdefault(
            f.signature,
            {
                "id": f.signature,
                "name": f.signature,
                "shortDescription": {"text": f.title},
                "properties": {"category": f.category, "role": f.role},
                "defaultConfiguration": {"level": _SARIF_LEVEL.get(f.severity, "note")},
            },
        )
        message = f.root_cause
        if f.fix.env or f.fix.flags:
            message += " Fix: " + "; ".join([*f.fix.exports(), *(flag.instruction for flag in f.fix.flags)])
        results.append(
            {
                "ruleId": f.signature,
                "level": _SARIF_LEVEL.get(f.severity, "note"),
                "message": {"text": message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": _uri(f.source)},
                            "region": {"startLine": f.lines[0], "endLine": f.lines[1]},
                        }
                    }
                ],
                "properties": {"role": f.role, "rank": f.rank, "confidence": f.confidence, "facts": f.facts},
            }
        )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mltriage",
                        "version": __version__,
                        "informationUri": "https://github.com/mltriage/mltriage",
                        "rules": list(rules.values()),
                    }
                },
                "results": results,
                # SARIF's own place for "the tool could not do all of its work": inputs not read
                "invocations": [
                    {
                        "executionSuccessful": d.complete,
                        "toolExecutionNotifications": [
                            {
                                "level": "error",
                                "message": {"text": f"not read: {s['reason']} (the diagnosis is incomplete)"},
                                "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(s["name"])}}}],
                            }
                            for s in d.unread
                        ],
                    }
                ],
            }
        ],
    }


def _uri(source: str) -> str:
    if source.startswith("<"):
        return "stdin"
    return Path(source).as_posix()
