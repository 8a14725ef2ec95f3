"""Hover on a matched line shows the encyclopedia entry with the line's facts."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from helpers import line_of, open_document, wait_for_diagnostics


async def test_hover_on_flagged_line_shows_entry(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "torchrun_python_exception.log"
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    target = diagnostics[0]
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=target.range.start)
    )
    assert hover is not None
    assert hover.contents.kind == types.MarkupKind.Markdown
    text = hover.contents.value
    assert f"`{target.code}`" in text
    # the entry itself: its title and a fix section come from the signature file
    assert target.data["title"] in text
    assert "fix" in text.lower()
    assert hover.range == target.range


async def test_hover_elsewhere_is_empty(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "torchrun_python_exception.log"
    uri = open_document(client, log)
    await wait_for_diagnostics(client, uri)
    quiet = line_of(log, "step 0 loss")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=quiet, character=3))
    )
    assert hover is None


async def test_hover_on_unknown_document_is_empty(client: LanguageClient, workspace: Path):
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=(workspace / "nope.log").as_uri()),
            position=types.Position(line=0, character=0),
        )
    )
    assert hover is None
