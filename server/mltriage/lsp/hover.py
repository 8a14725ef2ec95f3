"""Hover on a matched line: what happened there, the fix and how to verify it; the entry one click away."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from lsprotocol import types

from mltriage.engine.catalogue_lines import CATALOGUE_SIGNATURE
from mltriage import markdown as md
from mltriage.lsp.convert import Filed, Span, entry_uri, filed_as

# the extension's command that opens an entry URI (the hover's link runs it; the client trusts only it)
ENTRY_COMMAND = "command:mltriage.showEntry"

if TYPE_CHECKING:
    from mltriage.lsp.app import MltriageServer
    from mltriage.lsp.results import Result


def findings_at(result: Result, line: int) -> list[tuple[int, Span]]:
    """(finding index, its diagnostic's span) pairs for a 0-based editor line: the firing line
    first, then any evidence block (e.g. a traceback) that contains the line."""
    exact, inside = [], []
    line += 1  # the engine counts the document's lines from 1
    for index, fired, first, last, span in result.placed():
        if fired == line:
            exact.append((index, span))
        elif first <= line <= last:
            inside.append((index, span))
    return exact or inside


MAX_FACT_CHARS = 120


def _facts_line(finding: Any) -> str:
    texts = ((k, str(v)) for k, v in sorted(finding.facts.items()) if v not in (None, ""))  # (a number 0 is shown)
    shown = [(k, v if len(v) <= MAX_FACT_CHARS else v[:MAX_FACT_CHARS] + "…") for k, v in texts]
    return "This line: " + ", ".join(f"{md.escape(k)} = {md.code(v)}" for k, v in shown[:6]) if shown else ""


def _first_screen(finding: Any, filed: Filed, initiating_rank: int | None) -> list[str]:
    """What VS Code's hover shows before it scrolls (about 250 px), under the diagnostic's one line of
    what broke: the fix itself (the exports, the flag) and the command that verifies it."""
    fix = finding.fix
    if filed is Filed.COLLATERAL:
        started = f"on rank {int(initiating_rank)}" if initiating_rank is not None else "elsewhere"
        return [f"**Fix:** the failure that started {started}; this line is *a consequence* of it.", ""]
    out: list[str] = []
    if fix.env:
        out += ["**Fix:**", "", *md.code_block(fix.exports()), ""]
    for flag in fix.flags:
        out += [f"**Fix:** {md.text(flag.instruction)}" if not fix.env else f"- {md.text(flag.instruction)}", ""]
    if not fix.env and not fix.flags and fix.summary:
        out += [f"**Fix:** {md.text(fix.summary)}", ""]
    if finding.verify:
        out += [f"**Verify:** {md.code(finding.verify)}", ""]
    return out


def hover_markdown(finding: Any, filed: Filed, initiating_rank: int | None) -> str:
    """The first screen (`_first_screen`), then the rest: the notes, this line's facts, the fix in
    words, this run's command with the flags, the upstream source and the full entry one click away.
    The line of what broke is the diagnostic's message, which VS Code shows above this (never said
    twice). Every string of the finding may hold log text: each goes through `markdown` (escaped, or
    in code), none is pasted in as Markdown."""
    out = _first_screen(finding, filed, initiating_rank)
    fix = finding.fix
    rest: list[str] = [f"- {md.text(note)}" for note in finding.notes]
    if finding.notes:
        rest.append("")
    facts = _facts_line(finding)
    if facts:
        rest += [facts, ""]
    if fix.summary and (fix.env or fix.flags) and filed is not Filed.COLLATERAL:
        rest += [md.text(fix.summary), ""]
    if fix.relaunch and filed is not Filed.COLLATERAL:  # the log's own launch command with the flags
        rest += ["This run's command with it:", "", *md.code_block([fix.relaunch]), ""]
    source = finding.catalogue  # the error catalogue: where upstream raises it, in which releases
    if source is not None:
        upstream = f" ({md.link('upstream source', source.link)})" if source.link else ""
        rest += [f"**Source:** {md.code(source.site)} in {md.text(source.releases)}{upstream}", ""]
    tail = [md.code(finding.signature)]
    if finding.signature == CATALOGUE_SIGNATURE:  # no encyclopedia entry: the catalogue entry instead
        if source:
            tail.append(f"every release's site: {md.code(f'mltriage catalogue show {source.id}')}")
    else:
        link = ENTRY_COMMAND + "?" + quote(json.dumps([entry_uri(finding.signature, finding.facts)]), safe="")
        tail.append(md.link("Open the full entry", link))
    rest.append(" · ".join(tail))
    if out:
        out += ["---", ""]
    return "\n".join(out + rest)


def register(server: MltriageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: MltriageServer, params: types.HoverParams) -> types.Hover | None:
        result = ls.diagnostics.results.get(params.text_document.uri)
        if result is None:
            return None
        pairs = findings_at(result, params.position.line)
        if not pairs:
            return None
        index, (row, start, end) = pairs[0]
        finding = result.finding(index)
        markdown = hover_markdown(finding, filed_as(finding, index, result.root), result.summary.initiating_rank)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
            range=types.Range(start=types.Position(line=row, character=start), end=types.Position(line=row, character=end)),
        )
