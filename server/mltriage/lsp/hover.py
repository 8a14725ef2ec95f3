"""Hover on a matched line: the encyclopedia entry with this line's facts filled in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from mltriage.lsp import engine_calls

if TYPE_CHECKING:
    from mltriage.lsp.app import MltriageServer
    from mltriage.lsp.diagnostics import Result


def findings_at(result: Result, line: int) -> list[tuple[Any, Any]]:
    """(finding, diagnostic) pairs for a 0-based editor line: the firing line first, then any
    evidence block (e.g. a traceback) that contains the line."""
    exact, inside = [], []
    for finding, diagnostic in zip(result.diagnosis.findings, result.diagnostics, strict=True):
        first, last = (n - 1 + result.line_offset for n in finding.lines)
        if finding.line - 1 + result.line_offset == line:
            exact.append((finding, diagnostic))
        elif first <= line <= last:
            inside.append((finding, diagnostic))
    return exact or inside


def _header(finding: Any) -> str:
    bits = [f"`{finding.signature}`", finding.role.replace("-", " ")]
    if finding.rank is not None:
        bits.append(f"rank {finding.rank}")
    if finding.host:
        bits.append(f"host `{finding.host}`")
    bits.append(f"confidence {finding.confidence:.0%}")
    return "*mltriage* · " + " · ".join(bits)


def register(server: MltriageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: MltriageServer, params: types.HoverParams) -> types.Hover | None:
        result = ls.diagnostics.results.get(params.text_document.uri)
        if result is None:
            return None
        pairs = findings_at(result, params.position.line)
        if not pairs:
            return None
        finding, diagnostic = pairs[0]
        # rendered on the loop (a few ms, cached): a hop to a worker thread would queue behind the
        # engine for the GIL while a large log is being diagnosed
        markdown = engine_calls.explain_cached(finding.signature, tuple(sorted(finding.facts.items())))
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=f"{_header(finding)}\n\n{markdown}"),
            range=diagnostic.range,
        )
