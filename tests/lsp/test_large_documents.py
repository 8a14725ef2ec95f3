"""Large documents over stdio: their text is read off the event loop (`large_text`) into chunks
(`document_sync`), lands where the editor has it, and a hover is answered while it is read."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from mltriage.lsp.large_text import LARGE_BODY

from conftest import server_env
from helpers import RawServer, open_document, wait_for_diagnostics

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
MATCH = (OOM.index("CUDA"), OOM.index(" GiB") + 4)  # the cuda-oom signature's span
EMOJI = "\U0001f600"  # two UTF-16 units


async def test_a_large_document_is_read_as_the_editor_has_it(client, workspace: Path):
    """2 MB of CRLF lines with non-BMP characters and escapes (quotes, backslashes, tabs): the
    error line is found on its row, at its UTF-16 columns, then again after an edit before it."""
    filler = f'step {{}} {EMOJI} loss "0.5" path C:\\runs\\x\t\\n ok\r\n'
    head = "".join(filler.format(i) for i in range(20_000))
    text = head + f"{EMOJI}{OOM}\r\n" + "".join(filler.format(i) for i in range(20_000))
    assert len(json.dumps(text)) > 2 * LARGE_BODY  # read by `large_text`, in many pieces
    uri = open_document(client, workspace / "large.log", text=text)
    diagnostics = await wait_for_diagnostics(client, uri, timeout=120)
    placed = [(d.range.start.line, d.range.start.character, d.range.end.character) for d in diagnostics if d.code == "cuda-oom"]
    assert placed == [(20_000, 2 + MATCH[0], 2 + MATCH[1])]
    from lsprotocol import types

    client.diagnostics.pop(uri, None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(19_999, 0), end=types.Position(20_000, 2)), text="[rank3]: ")]))
    diagnostics = await wait_for_diagnostics(client, uri, timeout=120)
    placed = [(d.range.start.line, d.range.start.character, d.range.end.character) for d in diagnostics if d.code == "cuda-oom"]
    assert placed == [(19_999, len("[rank3]: ") + MATCH[0], len("[rank3]: ") + MATCH[1])]


async def test_a_hover_is_answered_while_a_large_document_is_read(workspace: Path):
    """The server decodes a 20 MB didOpen on a thread; a hover sent right after it is answered
    before the server gets to diagnosing that document (its progress bar's `create` request).
    Before, the hover waited for the whole message to be parsed on the event loop."""
    server = await RawServer.start(sys.executable, "-m", "mltriage.server", env=server_env())
    try:
        await server.request("initialize", {"rootUri": workspace.as_uri(), "initializationOptions": {"debounceMs": 0},
                                            "capabilities": {"window": {"workDoneProgress": True}}})
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        small = workspace / "logs" / "torchrun_python_exception.log"
        (diagnostic, *_) = await server.diagnostics_for(small)
        big = workspace / "big.log"
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": big.as_uri(), "languageId": "log", "version": 1, "text": "[rank0]: step 1 loss 0.5\n" * 800_000}}})
        server.send({"jsonrpc": "2.0", "id": "hover", "method": "textDocument/hover", "params": {
            "textDocument": {"uri": small.as_uri()}, "position": diagnostic["range"]["start"]}})
        first = await asyncio.wait_for(server.receive(
            lambda m: m.get("id") == "hover" or m.get("method") == "window/workDoneProgress/create"), 120)
        assert first.get("id") == "hover" and first["result"]["contents"]["value"], first
        create = await asyncio.wait_for(server.receive(lambda m: m.get("method") == "window/workDoneProgress/create"), 120)
        server.send({"jsonrpc": "2.0", "id": create["id"], "result": None})
        message = await asyncio.wait_for(server.receive(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == big.as_uri()), 300)
        assert message["params"]["diagnostics"] == []  # read whole: nothing in it is an error
    finally:
        assert await server.stop() == 0
