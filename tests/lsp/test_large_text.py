"""A large document's text decoded in pieces off the event loop (`large_text`) is the text
``json.loads`` reads, in chunks that each end a line; anything else is left to ``json.loads``."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from mltriage.lsp.large_text import Sizes, adopt, prepare

SMALL = Sizes(long=30, piece=5, window=8)  # so that pieces, windows and escapes cross each other


def did_open(text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": "file:///a.log", "languageId": "log", "version": 1, "text": text}}}).encode()


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet='ab\n\r\\"\t\x00é\U0001f600\ud800', min_size=30, max_size=150), ensure_ascii=st.booleans())
def test_pieces_are_the_text_json_reads(text: str, ensure_ascii: bool):
    body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": "file:///a.log", "version": 2},
        "contentChanges": [{"text": text}, {"text": text + "\\n"}]}}, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")
    prepared = prepare(body, SMALL)
    assert prepared is not None
    data = adopt(prepared)
    assert data is not None
    changes = data["params"]["contentChanges"]
    for change, expected in zip(changes, (text, text + "\\n"), strict=True):
        chunked = prepared.texts[change["text"]]
        assert chunked.text() == expected
        pieces = chunked.pieces()
        for piece, after in zip(pieces, pieces[1:]):
            assert piece.endswith(("\n", "\r")) and not (piece.endswith("\r") and after.startswith("\n")), pieces


def test_only_document_texts_are_taken():
    long = "x" * 100
    command = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "workspace/executeCommand",
                          "params": {"command": "mltriage.diagnoseText", "arguments": [long]}}).encode()
    assert adopt(prepare(command, SMALL)) is None  # parsed whole, as before
    elsewhere = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": "file:///" + long, "languageId": "log", "version": 1, "text": long}}}).encode()
    assert adopt(prepare(elsewhere, SMALL)) is None  # a token in the uri
    assert adopt(prepare(did_open(long), SMALL))["params"]["textDocument"]["text"].startswith("\x00mltriage-text-")


def test_what_is_not_json_is_left_to_json():
    for body in (did_open("x" * 100)[:-30], did_open("x" * 100).replace(b"xxxx", b"x\\qx", 1), b'{"a": "' + b"x" * 100):
        assert prepare(body, SMALL) is None
