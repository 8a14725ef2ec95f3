"""Small helpers shared by the server tests."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient


def open_document(client: LanguageClient, path: Path, language_id: str = "log", text: str | None = None) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language_id, version=1, text=path.read_text() if text is None else text
            )
        )
    )
    return uri


async def wait_for_diagnostics(client: LanguageClient, uri: str, timeout: float = 30.0):
    """The next diagnostics published for ``uri`` (callers pop the old ones first)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if uri in client.diagnostics:
            return client.diagnostics[uri]
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for {uri} within {timeout} s")


def line_of(path: Path, needle: str) -> int:
    """0-based number of the first line containing ``needle``."""
    for number, line in enumerate(path.read_text().splitlines()):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")
