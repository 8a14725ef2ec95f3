"""The error catalogue joined to a diagnosis.

Three things, in this order:
1. every finding's own message line is looked up, so a curated entry also shows where the source
   raises it, and a generic one (any exception, any CUDA error) says which project and function;
2. error and warning lines that nothing explained become findings of their own when the catalogue
   knows them ("RuntimeError raised by vLLM in gpu_p2p_access_check ..."); unknown ones stay quiet,
   except an NCCL ``WARN`` followed by its error chain (``file:line -> N`` lines of the same thread):
   that is where an NCCL call failed, an error whether or not the catalogue knows its message;
3. the releases the log can come from, narrowed by all catalogued lines together.
Curated findings always outrank catalogue findings (these are generic).
"""

from __future__ import annotations


from bisect import bisect_right
from collections import defaultdict

from mltriage.catalogue.components import layer_of
from mltriage.catalogue.formats import MIN_LITERAL_CHARS, fill_text
from mltriage.catalogue.match import (
    NICE_NAMES,
    CatalogueMatch,
    Hint,
    describe_releases,
    hints_in,
    installed_releases,
    match_line,
    narrow_releases,
    same_file,
    stated_releases,
)
from mltriage.catalogue.nccl import WARN_SITE, describe_result, result_name
from mltriage.catalogue.prose import prose_for
from mltriage.catalogue.store import Catalogue, default_catalogue
from mltriage.engine.catalogue_lines import CATALOGUE_SIGNATURE, CatalogueLine, CatalogueLines, ChainLine
from mltriage.engine.findings import NEARBY_LINES, message_level
from mltriage.engine.prefixes import parse_prefixes
from mltriage.masking import mask_secrets
from mltriage.model import CatalogueRef, Finding, Fix
from mltriage.numbers import parse_int

MIN_FRAMELESS_LITERAL = 32  # literal characters a fixed exception message needs to be named without its frames
MIN_OWN_LITERAL = 20  # literal characters matched for a line to become a catalogue finding of its own
CATALOGUE_CONFIDENCE = {"error": 0.5, "warning": 0.4}
CHAIN_CONFIDENCE = 0.6  # a WARN whose result the log shows passed up the stack: NCCL itself says the call failed
CHAIN_GAP = 64  # lines from a WARN to the first step of its chain, and between steps (other threads interleave)
ERROR_KINDS = ("critical", "error")
WARNING_KINDS = ("warning", "warn")
MAX_LOOKUPS = 500  # catalogue lookups per kind of candidate (findings, error lines, other lines)
# lookups of one diagnosis in all: adversarial logs hold thousands of candidates. A count, not a
# time: the same log gets the same findings on a busy machine as on an idle one.
LOOKUP_BUDGET = 1_000


def consult_catalogue(findings: list[Finding], lines: CatalogueLines, catalogue: Catalogue | None = None,
                      installed: dict[str, str] | None = None) -> tuple[list[Finding], dict[str, str], bool]:
    """New findings for catalogued lines nothing explained, the releases the log comes from, and
    whether the lookup budget stopped the lookups before every line was looked up. ``installed``:
    package key -> version, as the log lists them (``run_model.build.installed_versions``)."""
    catalogue = catalogue or default_catalogue()
    if not catalogue.available:
        return [], {}, False
    spent = 0
    stopped = False
    # the releases the log says it runs pick those releases' sites: an installed version the log lists
    # (torch==2.5.1), and over it, a release the running program prints ("NCCL version 2.10.3")
    printed = _stated_releases(lines, catalogue)
    stated = {**installed_releases(installed or {}, catalogue), **printed}
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
        matches = _lookup_finding(finding, catalogue, stated)
        if matches:
            per_line.append(matches)
            refs.append((finding, matches))
    new: list[tuple[Finding, list[CatalogueMatch]]] = []
    chains = warn_chains(lines)
    for line in lines.errors[:MAX_LOOKUPS] + lines.others[:MAX_LOOKUPS]:
        if spent >= LOOKUP_BUDGET:
            stopped = True
            break  # (error lines first: they are what the budget is spent on)
        explainer = _explained(line, findings)
        if explainer is not None:
            if id(line) in chains and explainer.line == line.line:  # a curated WARN: its chain's result joins it
                _add_chain(explainer, line, chains[id(line)])
            continue
        spent += 1
        message = line.context.message
        chain = chains.get(id(line))
        matches = match_line(message, catalogue, hints_in(line.text), stated=stated)
        # a finding of its own needs a message that is someone's in particular, not a few common words
        # (a WARN whose chain follows is NCCL's own failure: its site is named on less text)
        least = MIN_LITERAL_CHARS if chain else MIN_OWN_LITERAL
        matches = [m for m in matches if m.entry.kind.lower() not in ("info", "debug") and m.specificity >= least]
        if matches:
            per_line.append(matches)
        elif not chain:
            continue
        finding = _finding_for(line, matches[0] if matches else None, chain)
        if finding is not None:
            new.append((finding, matches))
    narrowed = narrow_releases(per_line)
    # a listed version narrows a project the log has a catalogued line of (a pip freeze names twenty
    # packages: their releases are the run model's, not the log's); a printed release is the log's own
    narrowed.update({p: r for p, r in stated.items() if p in narrowed or p in printed})
    for finding, matches in refs + new:
        if matches:
            finding.catalogue = _ref(catalogue, _best(matches, narrowed), narrowed)
    for finding, _ in refs:
        if finding.generic and finding.catalogue is not None:
            finding.notes.insert(0, describe_source(finding.catalogue))
            _point_at_layer(finding, finding.catalogue.project, finding.catalogue.site.rsplit(":", 1)[0])
    for finding, _ in new:
        _describe_new(finding)
    for finding in findings:
        if finding.generic and "component" not in finding.facts:
            warned = WARN_SITE.search(finding.evidence[0]) if finding.evidence else None
            site = finding.facts.get("nccl_warn_site") or (f"{warned['file']}:{warned['line']}" if warned else "")
            if site:  # a generic entry named an NCCL WARN: the WARN's own file:line still names the layer
                _point_at_layer(finding, "nccl", site.rsplit(":", 1)[0])
    return [f for f, _ in new], {p: describe_releases(catalogue, p, r) for p, r in sorted(narrowed.items())}, stopped


def _stated_releases(lines: CatalogueLines, catalogue: Catalogue) -> dict[str, set[int]]:
    """Releases the log names itself (``catalogue.match.STATED``)."""
    return stated_releases((line.context.message for line in lines.lines), catalogue)


def _raising_frame(finding: Finding) -> str | None:
    """``path:line`` of the frame that raised a traceback's exception (its innermost frame)."""
    return finding.facts.get("raised_in") or finding.facts.get("user_frame")


def _same_package(seen: str, site_path: str) -> bool:
    """The innermost frame is a re-raise inside the package that raised (Dynamo's compile_wrapper re-raises
    Unsupported with the traceback cut at ``torch/_dynamo/eval_frame.py``): a site under the same two
    folders of an installed package (``torch/_dynamo/``) is the raise. The user's own files are in none."""
    seen = seen.replace("\\", "/")
    folders = site_path.removeprefix("src/").split("/")[:-1][:2]
    return len(folders) == 2 and "/site-packages/" in seen and \
        seen.partition("/site-packages/")[2].startswith("/".join(folders) + "/")


def _lookup_finding(finding: Finding, catalogue: Catalogue, stated: dict[str, set[int]]) -> list[CatalogueMatch]:
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
        # (past a quote's or code block's margin, as the scanner read the line: no message starts with '>')
        message = parse_prefixes(text.lstrip(" \t>")).message
    kind = finding.facts.get("exception_type")
    if not message:
        return []
    matches = match_line(message, catalogue, hints, kind=kind, stated=stated)
    if kind:  # an exception is the site that raises its type; the same words logged elsewhere are not it
        matches = [m for m in matches if kind.rpartition(".")[2] in m.entry.kinds]
    if raising_file:  # a plain "list index out of range" raised by the user's own code is no library's raise
        framed = [m for m in matches if any(same_file(raising_file, s.path) for s in m.entry.sites)] or \
            [m for m in matches if any(_same_package(raising_file, s.path) for s in m.entry.sites)]
        # a Python frame is never a C++ site: a TORCH_CHECK under torch.mm shows the Python frame that called the
        # operator, so a C++ message is named as a frameless one is, on its own text
        matches = framed or [m for m in matches if _native(m) and _specific(m)]
    elif kind:  # an exception line without its frames: a short fixed message may be anyone's (CPython's own)
        matches = [m for m in matches if _specific(m)]
    return matches


def _specific(match: CatalogueMatch) -> bool:
    """A message nobody else's words are likely to be: it has values, or enough fixed text."""
    return "{" in match.entry.format or match.specificity >= MIN_FRAMELESS_LITERAL


def _native(match: CatalogueMatch) -> bool:
    """Every site of the entry is C/C++ (no Python frame can be one of them)."""
    return not any(s.path.endswith(".py") for s in match.entry.sites)


def _explained(line: CatalogueLine, findings: list[Finding]) -> Finding | None:
    """The curated finding that explains this line (its own line or one near it), if any."""
    rank = line.stream[1]
    for f in findings:
        if f.generic:  # a catch-all layer explains no other line
            continue
        if f.source == line.source.name and f.lines[0] - NEARBY_LINES <= line.line <= f.lines[1] + NEARBY_LINES \
                and (f.rank == rank or f.rank is None):
            return f
        # a finding many ranks shared (engine/rank_groups.py) explains each of its ranks' own line
        if f.rank_lines and rank in f.rank_lines and rank != f.rank and f.source_of(rank) == line.source.name \
                and abs(f.rank_lines[rank] - line.line) <= NEARBY_LINES:
            return f
    return None


def _chain_facts(line: CatalogueLine, chain: list[ChainLine]) -> dict[str, str]:
    first, last = chain[0].step, chain[-1].step
    warned = WARN_SITE.match(line.context.message)
    facts = {"nccl_warn_site": f"{warned['file']}:{warned['line']}" if warned else "",
             "nccl_result": result_name(first.code), "nccl_result_code": str(first.code)}
    if last.code != first.code:
        facts["nccl_returned"] = f"{result_name(last.code)} ({last.code})"
    facts["nccl_chain"] = " → ".join(f"{c.step.file}:{c.step.line}" for c in chain[:12]) + \
        (f" → … ({len(chain) - 12} more)" if len(chain) > 12 else "")
    return facts


def _add_chain(finding: Finding, line: CatalogueLine, chain: list[ChainLine]) -> None:
    """A curated finding of an NCCL WARN: the result its error chain shows, as facts and a note."""
    facts = _chain_facts(line, chain)
    for k, v in facts.items():
        finding.facts.setdefault(k, v)
    finding.notes.append("NCCL's error chain:" + _chain_sentence(facts))


def warn_chains(lines: CatalogueLines) -> dict[int, list[ChainLine]]:
    """Each NCCL WARN line (by ``id``) that its error chain follows, and the chain: the ``-> N`` lines
    of the same source, stream and thread after it, each within ``CHAIN_GAP`` lines of the one
    before, up to the thread's next WARN. A WARN with no chain (NCCL_DEBUG=WARN prints none, and
    some WARNs are followed by a retry) is left to its own level."""
    by_thread: dict[tuple, list[ChainLine]] = defaultdict(list)
    for step in lines.chains:
        by_thread[(step.source, step.stream, step.thread)].append(step)
    if not by_thread:
        return {}
    warns: dict[tuple, list[CatalogueLine]] = defaultdict(list)
    for line in lines.errors:
        if WARN_SITE.match(line.context.message):
            warns[(line.source.name, line.stream, line.thread)].append(line)
    out: dict[int, list[ChainLine]] = {}
    for key, thread_warns in warns.items():
        steps = by_thread.get(key)
        if not steps:
            continue
        numbers = [s.line for s in steps]
        thread_warns.sort(key=lambda w: w.line)
        for n, warn in enumerate(thread_warns):
            until = thread_warns[n + 1].line if n + 1 < len(thread_warns) else None
            chain: list[ChainLine] = []
            at = warn.line
            for step in steps[bisect_right(numbers, warn.line):]:
                if step.line - at > CHAIN_GAP or (until is not None and step.line > until):
                    break
                chain.append(step)
                at = step.line
            if chain and chain[0].step.code != 0:
                out[id(warn)] = chain
    return out


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


def _finding_for(line: CatalogueLine, match: CatalogueMatch | None, chain: list[ChainLine] | None = None) -> Finding | None:
    """(Run reasoning later demotes an error the run went on from, as it does a handled traceback.)"""
    level = "error" if chain else _level(match, line) if match else None
    if level not in ("error", "warning"):
        return None
    entry = match.entry if match else None
    rank = line.stream[1]
    facts = {k: mask_secrets(v) for k, v in match.facts.items()} if match else {}
    if rank is not None:
        facts.setdefault("rank", rank)
    if chain:
        facts.update(_chain_facts(line, chain))
        warned = WARN_SITE.match(line.context.message)
        if warned and not entry:
            facts["nccl_warn_message"] = mask_secrets(warned["message"].strip())[:300]
    start = line.context.offset
    network = entry is None or entry.project == "nccl" or any("/distributed/" in site.path for site in entry.sites)
    return Finding(
        signature=CATALOGUE_SIGNATURE,
        title="",
        category="communication" if network else "program",
        severity=level,
        proposed_role="root-cause" if level == "error" else "context",
        rank=rank,
        host=line.context.host or line.source.host,
        source=line.source.name,
        lines=(line.line, line.line),
        line=line.line,
        column_start=start,
        column_end=start + len(line.context.message),
        evidence=[mask_secrets(line.text), *(mask_secrets(c.text) for c in (chain or ())[:6])],
        facts=facts,
        root_cause="",
        fix=Fix(),
        verify="",
        confidence=CHAIN_CONFIDENCE if chain else CATALOGUE_CONFIDENCE[level],
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
    site = match.site(releases)
    newest = min(site.last, max(releases)) if releases else site.last
    return CatalogueRef(id=entry.id, project=entry.project, kind=site.kind or entry.kind, format=entry.format,
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


def _chain_sentence(facts: dict[str, str]) -> str:
    """What the error chain after an NCCL WARN says: the code the WARN's site returned, its meaning,
    and the call sites it went up through."""
    code = int(facts["nccl_result_code"])
    returned = f"; the NCCL call returned {facts['nccl_returned']}" if "nccl_returned" in facts else ""
    return (f" The call returned {describe_result(code)}, passed up through {facts['nccl_chain']}{returned}: "
            "the NCCL call failed here.")


def _describe_uncatalogued_warn(finding: Finding) -> None:
    """An NCCL WARN with its error chain that no catalogued release holds (a build not in public
    history, or a message the extractor missed): its own prefix names the site."""
    message = finding.facts.get("nccl_warn_message", "")
    short = message if len(message) <= 90 else message[:87] + "…"
    finding.title = f"NCCL error: {short} ({finding.facts['nccl_result']})"
    site = finding.facts.get("nccl_warn_site") or "an unnamed site"
    finding.root_cause = (f"NCCL logs this WARN at `{site}` (no catalogued NCCL release holds this message at that "
                          "site: a build from outside the public releases, or a message written at run time)."
                          + _chain_sentence(finding.facts))
    finding.fix = Fix(summary="The WARN's message says what failed; the lines before it in the same thread say on what.",
                      steps=[f"Read the condition around `{site}` in the NCCL source of the release you run",
                             "Rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALL to see what the failing call was doing"])
    finding.verify = "Rerun the failing command and check that the WARN and its `-> N` lines are gone"
    _point_at_layer(finding, "nccl", site.rsplit(":", 1)[0])


def _point_at_layer(finding: Finding, project: str, path: str) -> None:
    """Where the message is raised names the layer that failed: say so, and give the switch that takes
    that layer out of the path (the one-run experiment that confirms it)."""
    layer = layer_of(project, path)
    if layer is None:
        return
    finding.facts.setdefault("component", layer.component.value)
    if layer.short not in finding.title:
        finding.title = f"{finding.title} in {layer.short}"
    finding.root_cause = (finding.root_cause + f" It is raised in {layer.what}.").strip()
    finding.fix.steps.insert(0, f"To confirm the layer, {layer.confirm}")
    for name, value in layer.env:
        finding.fix.env.setdefault(name, value)


def _describe_new(finding: Finding) -> None:
    ref = finding.catalogue
    if ref is None:
        _describe_uncatalogued_warn(finding)
        return
    project = NICE_NAMES.get(ref.project, ref.project)
    first = _filled(ref.format.splitlines()[0] if ref.format else "", finding.facts)
    short = first if len(first) <= 90 else first[:87] + "…"
    chained = "nccl_result_code" in finding.facts
    if ref.kind.lower() in ERROR_KINDS + WARNING_KINDS:
        finding.title = f"{project} {'warning' if finding.severity == 'warning' else 'error'}: {short}"
    else:
        finding.title = f"{ref.kind} from {project}: {short}"
    if chained:
        finding.title += f" ({finding.facts['nccl_result']})"
    values = ", ".join(f"{k} = {v}" for k, v in finding.facts.items() if k != "rank" and not k.startswith("nccl_"))
    prose = prose_for(ref.id)
    meaning = f" {prose.meaning}" if prose else ""
    finding.root_cause = (describe_source(ref) + "." + (_chain_sentence(finding.facts) if chained else "") + meaning
                          + (f" Values in this log: {values}." if values else ""))
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
    _point_at_layer(finding, ref.project, ref.site.rsplit(":", 1)[0])
