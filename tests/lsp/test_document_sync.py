"""Incremental didChange: lines break at CRLF, CR and LF only, columns are in the negotiated
encoding, ranges outside the text are clamped. Over stdio the server's text is read back through
where it places the diagnostic of an edited-in error line (its row and the columns of the match)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pytest_lsp import LanguageClient

from conftest import server_env
from helpers import RawServer, open_document, wait_for_diagnostics
from mltriage.lsp.app import build_server
from mltriage.lsp.document_sync import CHUNK, ChunkedText, DocumentSyncProtocol, apply_change

# a one-line error the engine places on its whole line (torch 2.x's OOM message, first sentence)
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
MATCH = (OOM.index("CUDA"), OOM.index(" GiB") + 4)  # what the cuda-oom signature's span covers
EMOJI = "\U0001f600"  # outside the BMP: two UTF-16 units, four UTF-8 bytes, one code point


# ---- the edit on its own --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "start", "end", "new", "expected"),
    [
        ("a\x0cb\nc\n", (1, 0), (1, 0), "Z", "a\x0cb\nZc\n"),  # a form feed breaks no line
        ("a\x85b\u2028c\x1cd\nc", (1, 1), (1, 1), "Z", "a\x85b\u2028c\x1cd\ncZ"),
        ("a\rb\rc", (2, 0), (2, 1), "Z", "a\rb\rZ"),
        ("a\r\nb\r\nc", (1, 0), (2, 0), "", "a\r\nc"),  # CRLF is one break
        ("a\r\nb", (0, 1), (1, 0), "", "ab"),  # the whole CRLF goes
        ("ab\ncd", (1, 1), (0, 1), "-", "a-d"),  # a reversed range is taken in order
        ("ab\ncd", (0, 9), (0, 9), "Z", "abZ\ncd"),  # past the line's end: its end, not the next line
        ("ab\ncd", (7, 3), (9, 0), "Z", "ab\ncdZ"),  # past the last line: the end of the text
        ("ab\ncd\n", (2, 0), (2, 0), "Z", "ab\ncd\nZ"),  # the empty last line exists
        ("ab\ncd", (-1, -4), (0, 1), "Z", "Zb\ncd"),  # negative: the start
        ("", (3, 3), (4, 4), "x", "x"),
    ],
)
def test_apply_change(text: str, start, end, new: str, expected: str):
    assert apply_change(text, start, end, new, "utf-16") == expected


@pytest.mark.parametrize(
    ("encoding", "column"), [("utf-16", 2), (None, 2), ("utf-8", 4), ("utf-32", 1)]
)
def test_columns_count_in_the_negotiated_encoding(encoding, column: int):
    # after the emoji; a column inside it (half a surrogate pair, a partial UTF-8 sequence) stops before it
    assert apply_change(f"{EMOJI}é", (0, column), (0, column), "|", encoding) == f"{EMOJI}|é"
    assert apply_change(f"{EMOJI}é", (0, 1), (0, 1), "|", "utf-16") == f"|{EMOJI}é"
    assert apply_change(f"{EMOJI}é", (0, 5), (0, 5), "|", "utf-8") == f"{EMOJI}é"[:1] + "|é"


def _reference_offset(text: str, line: int, character: int) -> int:
    """Where a UTF-16 position is in ``text``, found the plain way: every line split out."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    if line >= len(starts):
        return len(text)
    start = starts[max(0, line)]
    end = re.compile(r"\r|\n").search(text, start)
    content = text[start : end.start() if end else len(text)]
    units = index = 0
    while index < len(content) and units + (2 if ord(content[index]) > 0xFFFF else 1) <= character:
        units += 2 if ord(content[index]) > 0xFFFF else 1
        index += 1
    return start + index


def _check_chunks(chunked: ChunkedText) -> None:
    pieces = chunked.pieces()
    for piece, after in zip(pieces, pieces[1:]):
        assert piece.endswith(("\n", "\r")), pieces  # a line never spans two chunks
        assert not (piece.endswith("\r") and after.startswith("\n")), pieces  # nor does a CRLF


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab\n\r\x0c\u2028é\U0001f600", max_size=80),
    chunk=st.integers(min_value=1, max_value=12),
    edits=st.lists(st.tuples(st.integers(-1, 30), st.integers(-1, 12), st.integers(-1, 30), st.integers(-1, 12),
                             st.text(alphabet="xy\n\r\U0001f600", max_size=20)), max_size=12),
)
def test_edits_on_chunks_are_the_edits_on_the_whole_text(text, chunk, edits):
    """Small chunks, so that edits cross them, join them and split them; each result is the
    reference's (the whole text split into the editor's lines, the range replaced)."""
    chunked, expected = ChunkedText(text, chunk=chunk), text
    for line, character, end_line, end_character, new in edits:
        chunked.edit((line, character), (end_line, end_character), new, "utf-16")
        a, b = sorted((_reference_offset(expected, line, character), _reference_offset(expected, end_line, end_character)))
        expected = expected[:a] + new + expected[b:]
        assert chunked.text() == expected == "".join(chunked.pieces())
        assert chunked.length == len(expected)
        breaks = len(re.findall(r"\r\n|\r|\n", expected))
        assert chunked.line_count == breaks + 1
        assert chunked.lines_of_text == breaks + (not re.search(r"[\r\n]\Z|\A\Z", expected))
        _check_chunks(chunked)


def test_a_keystroke_rebuilds_one_chunk():
    """In a 1,000,000-line document an edit replaces one chunk and leaves the others (the same
    objects): its cost is the chunk's, whatever the document's size."""
    text = "".join(f"[rank{i % 8}]: step {i} loss 0.{i % 97}\n" for i in range(1_000_000))
    chunked = ChunkedText(text)
    before = chunked.pieces()
    assert len(before) > 100 and max(map(len, before)) < 2 * CHUNK
    chunked.edit((654_321, 9), (654_321, 9), "x", "utf-16")
    after = chunked.pieces()
    changed = [i for i, (old, new) in enumerate(zip(before, after, strict=True)) if old is not new]
    assert len(changed) == 1
    assert after[changed[0]].splitlines()[654_321 - sum(p.count("\n") for p in after[: changed[0]])].startswith("[rank1]: xstep 654321 ")
    _check_chunks(chunked)


def test_the_builtin_did_open_and_did_change_are_ours():
    # pygls 2.1 registers every `lsp_method` of its protocol class by name; ours must take the slots
    features = build_server().protocol.fm.builtin_features
    for method, ours in ((types.TEXT_DOCUMENT_DID_CHANGE, DocumentSyncProtocol.lsp_text_document__did_change),
                         (types.TEXT_DOCUMENT_DID_OPEN, DocumentSyncProtocol.lsp_text_document__did_open)):
        assert getattr(LanguageServerProtocol, ours.__name__).method_name == method
        assert features[method].__func__ is ours


# ---- over stdio -----------------------------------------------------------------------------
def change(client: LanguageClient, uri: str, version: int, start, end, text: str) -> None:
    client.diagnostics.pop(uri, None)
    span = types.Range(start=types.Position(*start), end=types.Position(*end))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=span, text=text)],
        )
    )


async def placed(client: LanguageClient, uri: str) -> list[tuple[int, int, int]]:
    """(row, start column, end column) of each published diagnostic."""
    return sorted((d.range.start.line, d.range.start.character, d.range.end.character) for d in await wait_for_diagnostics(client, uri))


def oom_at(row: int, units_before: int) -> tuple[int, int, int]:
    return row, units_before + MATCH[0], units_before + MATCH[1]


@pytest.mark.parametrize(
    ("text", "row"),
    [("a\x0cb\nc\n", 1), ("a\rb\rc\r", 2), ("a\r\nb\r\nc\r\n", 2), ("a\x0c\u2028b\x85\r\nc", 1)],
)
async def test_an_edit_lands_on_the_editors_line(client: LanguageClient, workspace: Path, text: str, row: int):
    uri = open_document(client, workspace / "edited.log", text=text)
    assert list(await wait_for_diagnostics(client, uri)) == []
    change(client, uri, 2, (row, 0), (row, 0), OOM + "\n")
    assert await placed(client, uri) == [oom_at(row, 0)]
    change(client, uri, 3, (row, 0), (row, 0), "[rank1]: ")  # a second edit, from the first's place
    assert await placed(client, uri) == [oom_at(row, 9)]


async def test_utf16_columns_after_a_non_bmp_character(client: LanguageClient, workspace: Path):
    uri = open_document(client, workspace / "emoji.log", text=f"start\n{EMOJI}{EMOJI}{OOM}\n")
    assert await placed(client, uri) == [oom_at(1, 4)]
    change(client, uri, 2, (1, 0), (1, 2), "")  # the first emoji: two UTF-16 units
    assert await placed(client, uri) == [oom_at(1, 2)]
    change(client, uri, 3, (1, 2), (1, 2), "é")  # after the second one
    assert await placed(client, uri) == [oom_at(1, 3)]


async def test_ranges_outside_the_text_are_clamped(client: LanguageClient, workspace: Path):
    uri = open_document(client, workspace / "clamped.log", text="start\nend")
    assert list(await wait_for_diagnostics(client, uri)) == []
    change(client, uri, 2, (50, 3), (90, 0), "\n" + OOM)  # past the last line: appended to the text
    assert await placed(client, uri) == [oom_at(2, 0)]
    change(client, uri, 3, (1, 99), (2, 0), " ")  # past line 1's end: its end, not line 2's start
    assert await placed(client, uri) == [oom_at(1, 4)]
    # a full-text change still replaces everything, and ranged edits go on from it
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=4),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="a\x0cb\n" + OOM)],
        )
    )
    assert await placed(client, uri) == [oom_at(1, 0)]
    change(client, uri, 5, (1, 0), (1, 0), "x")
    assert await placed(client, uri) == [oom_at(1, 1)]


async def test_bad_changes_leave_the_server_serving(workspace: Path):
    server = await RawServer.start(sys.executable, "-m", "mltriage.server", env=server_env())
    try:
        await server.initialize(workspace, {"debounceMs": 0})
        path = workspace / "bad.log"
        path.write_text(OOM + "\n")
        assert await server.diagnostics_for(path)
        for version, span in enumerate(
            [{"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": -5}}, {"start": {"line": 0}}], start=2
        ):
            server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": path.as_uri(), "version": version}, "contentChanges": [{"range": span, "text": "x"}]}})
        server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {  # a document never opened
            "textDocument": {"uri": (workspace / "never.log").as_uri(), "version": 1},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}})
        answer = await server.request("workspace/executeCommand", {"command": "mltriage.diagnoseText", "arguments": [{"uri": path.as_uri()}]})
        assert [f["line"] for f in answer["result"]["findings"]] == [1]
    finally:
        assert await server.stop() == 0


async def test_a_client_preferring_utf8_gets_utf16_positions(workspace: Path):
    """pygls takes a client's first position encoding; the server publishes UTF-16 columns (or code
    points), so it settles on UTF-16, which every client must accept. Before, a client listing
    utf-8 first got `positionEncoding: utf-8` and columns in code points after any non-ASCII text."""
    server = await RawServer.start(sys.executable, "-m", "mltriage.server", env=server_env())
    try:
        answer = await server.request("initialize", {"rootUri": workspace.as_uri(), "initializationOptions": {"debounceMs": 0},
                                                     "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]}}})
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        assert answer["result"]["capabilities"]["positionEncoding"] == "utf-16"
        path = workspace / "utf8-client.log"
        path.write_text(f"{EMOJI}é{OOM}\n")
        (diagnostic,) = await server.diagnostics_for(path)
        assert (diagnostic["range"]["start"]["character"], diagnostic["range"]["end"]["character"]) == oom_at(0, 3)[1:]
    finally:
        assert await server.stop() == 0
