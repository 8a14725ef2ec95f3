"""Hover on a matched line: what happened there, the fix and how to verify it; the entry one click away."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from lsprotocol import types

from mltriage.engine.catalogue_lines import CATALOGUE_SIGNATURE
from mltriage import markdown as md
from mltriage.lsp.convert import Span, entry_uri

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
    shown = [(k, v if len(v) <= MAX_FACT_CHARS else v[:MAX_FACT_CHARS] + "…") for k, v in sorted(finding.facts.items()) if v]
    return "This line: " + ", ".join(f"{md.escape(k)} = {md.code(v)}" for k, v in shown[:6]) if shown else ""


def hover_markdown(finding: Any, diagnosis: Any) -> str:
    """The first screen: what happened on this line, the fix (exports one per line), how to verify;
    the full entry one click away. Every string of the finding may hold log text: each goes through
    `markdown` (escaped, or in code), none is pasted in as Markdown."""
    head = [f"**mltriage** · {md.text(finding.title)}", md.code(finding.signature)]
    if finding.rank_label:
        head.append(md.text(finding.rank_label))
    out = [" · ".join(head), ""]
    if finding.role == "collateral":
        first = diagnosis.initiating_rank
        out += [f"*A consequence* of the failure that started {f'on rank {int(first)}' if first is not None else 'elsewhere'}.", ""]
    out += [md.text(finding.root_cause), ""]
    out += [f"- {md.text(note)}" for note in finding.notes]
    if finding.notes:
        out.append("")
    facts = _facts_line(finding)
    if facts:
        out += [facts, ""]
    fix = finding.fix
    if fix.summary:
        out += [f"**Fix:** {md.text(fix.summary)}", ""]
    if fix.env:
        out += [*md.code_block(fix.exports()), ""]
    out += [f"- {md.text(flag.instruction)}" for flag in fix.flags]
    if fix.flags:
        out.append("")
    if fix.relaunch:  # the log's own launch command with the flags
        out += ["This run's command with it:", "", *md.code_block([fix.relaunch]), ""]
    if finding.verify:
        out += ["**Verify:**", "", *md.code_block([finding.verify]), ""]
    source = finding.catalogue  # the error catalogue: where upstream raises it, in which releases
    if source is not None:
        upstream = f" ({md.link('upstream source', source.link)})" if source.link else ""
        out += [f"**Source:** {md.code(source.site)} in {md.text(source.releases)}{upstream}", ""]
    if finding.signature == CATALOGUE_SIGNATURE:  # no encyclopedia entry: the catalogue entry instead
        out.append(f"Every release's site: {md.code(f'mltriage catalogue show {source.id}')}" if source else "")
    else:
        link = ENTRY_COMMAND + "?" + quote(json.dumps([entry_uri(finding.signature, finding.facts)]), safe="")
        out.append(md.link("Open the full entry", link))
    return "\n".join(out)


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
        markdown = hover_markdown(result.finding(index), result.summary)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
            range=types.Range(start=types.Position(line=row, character=start), end=types.Position(line=row, character=end)),
        )
