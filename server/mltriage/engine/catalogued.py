"""The error catalogue joined to a diagnosis.

Three things, in this order:
1. every finding's own message line is looked up, so a curated entry also shows where the source
   raises it, and a generic one (any exception, any CUDA error) says which project and function;
2. error and warning lines that nothing explained become findings of their own when the catalogue
   knows them ("RuntimeError raised by vLLM in gpu_p2p_access_check ..."); unknown ones stay quiet;
3. the releases the log can come from, narrowed by all catalogued lines together.
Curated findings always outrank catalogue findings (these are generic).
"""

from __future__ import annotations

import re

from mltriage.catalogue.formats import fill_text
from mltriage.catalogue.match import (
    NICE_NAMES,
    CatalogueMatch,
    Hint,
    describe_releases,
    hints_in,
    match_line,
    narrow_releases,
    same_file,
)
from mltriage.catalogue.prose import prose_for
from mltriage.catalogue.store import Catalogue, default_catalogue
from mltriage.engine.catalogue_lines import CATALOGUE_SIGNATURE, CatalogueLine, CatalogueLines
from mltriage.engine.findings import NEARBY_LINES, message_level
from mltriage.engine.prefixes import parse_prefixes
from mltriage.masking import mask_secrets
from mltriage.model import CatalogueRef, Finding, Fix
from mltriage.numbers import parse_int

MIN_FRAMELESS_LITERAL = 32  # literal characters a fixed exception message needs to be named without its frames
MIN_OWN_LITERAL = 20  # literal characters matched for a line to become a catalogue finding of its own
CATALOGUE_CONFIDENCE = {"error": 0.5, "warning": 0.4}
ERROR_KINDS = ("critical", "error")
WARNING_KINDS = ("warning", "warn")
MAX_LOOKUPS = 500  # catalogue lookups per kind of candidate (findings, error lines, other lines)
# lookups of one diagnosis in all: adversarial logs hold thousands of candidates. A count, not a
# time: the same log gets the same findings on a busy machine as on an idle one.
LOOKUP_BUDGET = 1_000


def consult_catalogue(findings: list[Finding], lines: CatalogueLines,
                      catalogue: Catalogue | None = None) -> tuple[list[Finding], dict[str, str], bool]:
    """New findings for catalogued lines nothing explained, the releases the log comes from, and
    whether the lookup budget stopped the lookups before every line was looked up."""
    catalogue = catalogue or default_catalogue()
    if not catalogue.available:
        return [], {}, False
    spent = 0
    stopped = False
    per_line: list[list[CatalogueMatch]] = []
    refs: list[tuple[Finding, list[CatalogueMatch]]] = []
    framed = {(f.facts.get("exception_type"), f.facts.get("exception_message")) for f in findings if _raising_frame(f)}
    for finding in findings[:MAX_LOOKUPS]:
        if spent >= LOOKUP_BUDGET:
            stopped = True
            break
        if not _raising_frame(finding) and \
                (finding.facts.get("exception_type"), finding.facts.get("exception_message")) in framed - {(None, None)}:
            continue  # the same exception's traceback elsewhere in the log decides (its frames name the raiser)
        spent += 1
        matches = _lookup_finding(finding, catalogue)
        if matches:
            per_line.append(matches)
            refs.append((finding, matches))
    new: list[tuple[Finding, list[CatalogueMatch]]] = []
    for line in lines.errors[:MAX_LOOKUPS] + lines.others[:MAX_LOOKUPS]:
        if spent >= LOOKUP_BUDGET:
            stopped = True
            break  # (error lines first: they are what the budget is spent on)
        if _explained(line, findings):
            continue
        spent += 1
        message = line.context.message
        matches = match_line(message, catalogue, hints_in(line.text))
        # a finding of its own needs a message that is someone's in particular, not a few common words
        matches = [m for m in matches if m.entry.kind.lower() not in ("info", "debug") and m.specificity >= MIN_OWN_LITERAL]
        if not matches:
            continue
        per_line.append(matches)
        finding = _finding_for(line, matches[0])
        if finding is not None:
            new.append((finding, matches))
    narrowed = narrow_releases(per_line)
    narrowed.update(_stated_releases(lines, catalogue))
    for finding, matches in refs + new:
        finding.catalogue = _ref(catalogue, _best(matches, narrowed), narrowed)
    for finding, _ in refs:
        if finding.generic and finding.catalogue is not None:
            finding.notes.insert(0, describe_source(finding.catalogue))
    for finding, _ in new:
        _describe_new(finding)
    return [f for f, _ in new], {p: describe_releases(catalogue, p, r) for p, r in sorted(narrowed.items())}, stopped


# "NCCL INFO NCCL version 2.28.9+cuda13.0", c10d's "..., NCCL version 2.12.10", vLLM's start-up banner,
# DeepSpeed's "DeepSpeed info: version=0.19.8": the log saying which release it is
_STATED = {
    "nccl": re.compile(r"\bNCCL version (\d+\.\d+\.\d+)"),
    "vllm": re.compile(r"\bvLLM (?:API server )?version (\d+\.\d+\.\d+(?:\.post\d+|\.\d+)?)\b|LLM engine \(v(\d+\.\d+\.\d+(?:\.post\d+|\.\d+)?)\)"),
    "deepspeed": re.compile(r"DeepSpeed info: version=(\d+\.\d+\.\d+)"),
}


def _stated_releases(lines: CatalogueLines, catalogue: Catalogue) -> dict[str, set[int]]:
    """Releases the log names itself (one version per project; two different ones name none)."""
    stated: dict[str, set[str]] = {}
    for line in lines.lines:
        for project, pattern in _STATED.items():
            m = pattern.search(line.context.message)
            if m:
                stated.setdefault(project, set()).add(next(g for g in m.groups() if g))
    out = {}
    for project, versions in stated.items():
        if len(versions) != 1:
            continue
        (version,) = versions
        names = [r.name for r in catalogue.releases(project)]
        match = {i for i, name in enumerate(names) if name == version or name.startswith(version + "-")}
        if match:
            out[project] = match
    return out


def _raising_frame(finding: Finding) -> str | None:
    """``path:line`` of the frame that raised a traceback's exception (its innermost frame)."""
    return finding.facts.get("raised_in") or finding.facts.get("user_frame")


def _lookup_finding(finding: Finding, catalogue: Catalogue) -> list[CatalogueMatch]:
    hints: list[Hint] = []
    raising_file = None  # the traceback's innermost frame: the file whose raise this is
    raised_in = _raising_frame(finding)
    if raised_in and ":" in raised_in:
        path, _, line = raised_in.rpartition(":")
        raising_file = path
        number = parse_int(line)
        if number is not None:
            hints.append(Hint(path, number))
    message = finding.facts.get("exception_message")
    if message is None and finding.evidence:
        text = finding.evidence[-1] if finding.block is not None else finding.evidence[0]
        hints += hints_in(text)
        message = parse_prefixes(text).message
    kind = finding.facts.get("exception_type")
    if not message:
        return []
    matches = match_line(message, catalogue, hints)
    if kind:  # an exception is the site that raises its type; the same words logged elsewhere are not it
        matches = [m for m in matches if m.entry.kind == kind.rpartition(".")[2]]
    if raising_file:  # a plain "list index out of range" raised by the user's own code is no library's raise
        matches = [m for m in matches if any(same_file(raising_file, s.path) for s in m.entry.sites)]
    elif kind:  # an exception line without its frames: a short fixed message may be anyone's (CPython's own)
        matches = [m for m in matches if "{" in m.entry.format or m.specificity >= MIN_FRAMELESS_LITERAL]
    return matches


def _explained(line: CatalogueLine, findings: list[Finding]) -> bool:
    rank = line.stream[1]
    for f in findings:
        if f.generic:  # a catch-all layer explains no other line
            continue
        if f.source == line.source.name and f.lines[0] - NEARBY_LINES <= line.line <= f.lines[1] + NEARBY_LINES \
                and (f.rank == rank or f.rank is None):
            return True
        # a finding many ranks shared (engine/rank_groups.py) explains each of its ranks' own line
        if f.rank_lines and rank in f.rank_lines and rank != f.rank and f.source_of(rank) == line.source.name \
                and abs(f.rank_lines[rank] - line.line) <= NEARBY_LINES:
            return True
    return False


def _level(match: CatalogueMatch, line: CatalogueLine) -> str | None:
    said = line.context.level or message_level(line.context.message)
    if said in ("warning", "info", "debug"):
        return said  # the line's own level: a warning that quotes an error message is still a warning
    kind = match.entry.kind.lower()
    if kind in ERROR_KINDS:
        return "error"
    if kind in WARNING_KINDS or kind.endswith("warning"):
        return "warning"
    # an exception's message printed on its own line (logged, or the exception line outside a traceback)
    return "error" if (line.context.level in (None, "error", "critical")) else line.context.level


def _finding_for(line: CatalogueLine, match: CatalogueMatch) -> Finding | None:
    """(Run reasoning later demotes an error the run went on from, as it does a handled traceback.)"""
    level = _level(match, line)
    if level not in ("error", "warning"):
        return None
    entry = match.entry
    rank = line.stream[1]
    facts = {k: mask_secrets(v) for k, v in match.facts.items()}
    if rank is not None:
        facts.setdefault("rank", str(rank))
    start = line.context.offset
    network = entry.project == "nccl" or any("/distributed/" in site.path for site in entry.sites)
    return Finding(
        signature=CATALOGUE_SIGNATURE,
        title="",
        category="communication" if network else "program",
        severity=level,
        role="root-cause" if level == "error" else "context",
        rank=rank,
        host=line.context.host or line.source.host,
        source=line.source.name,
        lines=(line.line, line.line),
        line=line.line,
        column_start=start,
        column_end=start + len(line.context.message),
        evidence=[mask_secrets(line.text)],
        facts=facts,
        root_cause="",
        fix=Fix(),
        verify="",
        confidence=CATALOGUE_CONFIDENCE[level],
        count=line.count,
        generic=True,
        timestamp=line.context.timestamp if line.context.clock != "uptime" else None,
        clock=line.context.clock if line.context.clock != "uptime" else None,
        ranks=[rank] if rank is not None else [],
    )


def _best(matches: list[CatalogueMatch], narrowed: dict[str, set[int]]) -> CatalogueMatch:
    """Of equally good matches, one whose releases agree with the rest of the log."""
    for m in matches:
        if m.releases & narrowed.get(m.entry.project, set()):
            return m
    return matches[0]


def _ref(catalogue: Catalogue, match: CatalogueMatch, narrowed: dict[str, set[int]]) -> CatalogueRef:
    entry = match.entry
    releases = match.releases & narrowed.get(entry.project, match.releases) or match.releases
    sites = match.sites_in(releases) or entry.sites
    site = max(sites, key=lambda s: s.last)
    newest = min(site.last, max(releases)) if releases else site.last
    return CatalogueRef(id=entry.id, project=entry.project, kind=entry.kind, format=entry.format,
                        function=site.function, site=f"{site.path}:{site.line}",
                        releases=describe_releases(catalogue, entry.project, releases),
                        link=catalogue.link(entry, site, newest))


def describe_source(ref: CatalogueRef) -> str:
    """``RuntimeError raised by vLLM in `gpu_p2p_access_check` (`path:line`), present in vLLM 0.5.4–0.10.1``."""
    project = NICE_NAMES.get(ref.project, ref.project)
    where = f" in `{ref.function}`" if ref.function else ""
    if ref.kind.lower() in ERROR_KINDS + WARNING_KINDS + ("info", "critical"):
        what = f"{project} logs this {'warning' if ref.kind.lower() in WARNING_KINDS else ref.kind.lower()}{where}"
    else:
        what = f"{ref.kind} raised by {project}{where}"
    return f"{what} (`{ref.site}`), present in {ref.releases}"


def _filled(text: str, facts: dict[str, str]) -> str:
    """A format's line with this log's values in it (an unknown value reads as …)."""
    return fill_text(text, lambda name: facts.get(name, "…")[:60])


def _describe_new(finding: Finding) -> None:
    ref = finding.catalogue
    assert ref is not None
    project = NICE_NAMES.get(ref.project, ref.project)
    first = _filled(ref.format.splitlines()[0] if ref.format else "", finding.facts)
    short = first if len(first) <= 90 else first[:87] + "…"
    if ref.kind.lower() in ERROR_KINDS + WARNING_KINDS:
        finding.title = f"{project} {'warning' if finding.severity == 'warning' else 'error'}: {short}"
    else:
        finding.title = f"{ref.kind} from {project}: {short}"
    values = ", ".join(f"{k} = {v}" for k, v in finding.facts.items() if k != "rank")
    prose = prose_for(ref.id)
    meaning = f" {prose.meaning}" if prose else ""
    finding.root_cause = describe_source(ref) + "." + meaning + (f" Values in this log: {values}." if values else "")
    source_step = (f"Read the condition around `{ref.site}`" + (f" ({ref.link})" if ref.link else "")
                   + " in the release you run")
    if prose:
        finding.fix = Fix(summary=prose.solutions[0] if prose.solutions else prose.meaning,
                          steps=[*prose.solutions[1:], source_step],
                          commands=[prose.example_fix] if prose.example_fix else [])
    else:
        finding.fix = Fix(
            summary="No curated entry covers this message yet: the source line says under which condition it is raised.",
            steps=[source_step,
                   "Look for an earlier error of the same rank: a message logged on the way down is often a consequence",
                   f"`mltriage catalogue show {ref.id}` lists every release's site of this message"],
        )
    finding.verify = "Rerun the failing command and check that this line is gone"
