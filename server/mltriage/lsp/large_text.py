"""A large document's text read from its message off the event loop, in pieces.

``json.loads`` of a ``didOpen`` carrying an 80 MB log is one C call of ~0.8 s that holds the GIL:
every hover waited for it, and then for the text to be cut into chunks (`document_sync`). Here,
on the reader's thread, a message body of `LARGE_BODY` bytes or more is scanned for its long JSON
strings (a regular expression over 1 MB windows at a time); each is decoded in pieces of about
16 KB cut after an escaped line break, which are the document's chunks as they are (each ends a
line, a CRLF is never cut), and is replaced in the body by a token. What remains is small, and is
parsed on the loop as any message is. Between two pieces the loop gets the GIL back.

Only a ``didOpen``'s text and a ``didChange``'s texts are taken so (`adopt` checks that every token
stands there); for any other message, or anything unexpected, the body is parsed whole as before.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from mltriage.lsp.document_sync import ChunkedText

LARGE_BODY = 1 << 20  # bodies this large are looked at
_LONG = 1 << 16  # bytes of a JSON string taken out
_WINDOW = 1 << 20  # bytes matched per regular-expression call
_PIECE = 1 << 14  # bytes decoded at a time (up to the next escaped line break after them)
# a token no log can hold: a NUL and a number drawn when the server starts
TOKEN = f"\x00mltriage-text-{uuid.uuid4().hex}-"

_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)
_ESCAPED_BREAK = re.compile(rb"\\(?:r\\n|n|r)")
_BACKSLASH, _QUOTE = 0x5C, 0x22
_TEXT_METHODS = ("textDocument/didOpen", "textDocument/didChange")


@dataclass
class Prepared:
    body: bytes  # the message with each long string replaced by its token
    texts: dict[str, ChunkedText] = field(default_factory=dict)


@dataclass(frozen=True)
class Sizes:
    long: int = _LONG
    piece: int = _PIECE
    window: int = _WINDOW  # at least 8


def _string_end(body: bytes | bytearray, start: int, sizes: Sizes) -> int | None:
    """Where the string whose content starts at ``start`` ends (its closing quote); None if never."""
    at, size = start, len(body)
    while True:
        limit = min(size, at + sizes.window)
        end = _STRING_BODY.match(body, at, limit).end()
        if end >= size:
            return None
        if body[end] == _QUOTE:
            return end
        at = end  # the window ended (maybe right after a backslash): go on from there


def _cut_after(body: bytes | bytearray, start: int, end: int, sizes: Sizes) -> int:
    """The end of the first escaped line break at or after ``start`` (before ``end``), else ``end``."""
    at = start
    while at < end:
        limit = min(end, at + sizes.window)
        for found in _ESCAPED_BREAK.finditer(body, at, limit):
            if limit < end and found.start() > limit - 4:
                break  # a CRLF the window may cut: the next window sees it whole
            backslashes, k = 0, found.start() - 1
            while k >= 0 and body[k] == _BACKSLASH:
                backslashes, k = backslashes + 1, k - 1
            if backslashes % 2 == 0:  # this backslash is not itself escaped
                return found.end()
        if limit == end:
            break
        at = limit - 4
    return end


def _decode(body: bytes | bytearray, start: int, end: int, sizes: Sizes) -> ChunkedText | None:
    pieces = []
    at = start
    while at < end:
        cut = _cut_after(body, at + sizes.piece, end, sizes) if at + sizes.piece < end else end
        try:
            pieces.append(json.loads(b'"' + body[at:cut] + b'"'))
        except ValueError:  # not JSON after all: the whole body is parsed, and the error said, as usual
            return None
        at = cut
    return ChunkedText.from_pieces(pieces)


def prepare(body: bytes | bytearray, sizes: Sizes = Sizes()) -> Prepared | None:
    """On the reader's thread: ``body`` with its long strings taken out and decoded; None when it
    has none, or when they are not JSON strings."""
    out, texts, at = [], {}, 0
    pos = 0
    while (quote := body.find(b'"', pos)) >= 0:
        end = _string_end(body, quote + 1, sizes)
        if end is None:
            return None
        if end - quote - 1 >= sizes.long:
            text = _decode(body, quote + 1, end, sizes)
            if text is None:
                return None
            token = f"{TOKEN}{len(texts)}"
            texts[token] = text
            out += [body[at:quote], json.dumps(token).encode()]
            at = end + 1
        pos = end + 1
    if not texts:
        return None
    out.append(body[at:])
    return Prepared(b"".join(out), texts)


def adopt(prepared: Prepared) -> Any:
    """The message parsed from the prepared body, when it is a ``didOpen`` or ``didChange`` whose
    every token stands for a document text; else None (the caller parses the body whole)."""
    try:
        data = json.loads(prepared.body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("method") not in _TEXT_METHODS or not isinstance(data.get("params"), dict):
        return None
    params = data["params"]
    if data["method"] == _TEXT_METHODS[0]:
        item = params.get("textDocument")
        places = [item.get("text")] if isinstance(item, dict) else []
    else:
        changes = params.get("contentChanges")
        places = [c.get("text") for c in changes if isinstance(c, dict)] if isinstance(changes, list) else []
    if sorted(p for p in places if isinstance(p, str) and p in prepared.texts) != sorted(prepared.texts):
        return None  # a token somewhere else: not a document text
    return data
