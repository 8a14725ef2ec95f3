"""Incremental ``didChange`` applied the way the editor sees the text.

pygls 2.1 applies a ranged change after re-splitting the whole document with ``str.splitlines``,
which also breaks lines at form feeds, ``\\x1c``-``\\x1e``, NEL and U+2028/9: an edit after one of
them lands on the wrong line, and the re-split costs ~0.6 s per keystroke on a 5-million-line log.
Here a range is resolved by counting only CRLF, CR and LF (``str.count`` over chunks, from the line
of the previous edit when it is before the new one), in the negotiated position encoding, with
positions outside the text clamped as VS Code clamps them. The result reaches pygls as a
whole-document change, its public way to replace a document's text.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.protocol.language_server import LanguageServerProtocol, lsp_method
from pygls.workspace import TextDocument

log = logging.getLogger(__name__)

UTF8, UTF32 = types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf32
_CHUNK = 1 << 16  # characters counted per str.count call
_STEP = 256  # below this, breaks are found one by one

Position = tuple[int, int]  # (line, character) in client units


@dataclass(frozen=True)
class Anchor:
    """A line start known in ``text``: the line of the last edit (the text before it did not change)."""

    text: str
    line: int
    offset: int
    has_cr: bool  # False: the text has no CR, so LF is the only break


@dataclass(frozen=True)
class _Resolved:
    offset: int
    line: int
    line_start: int


def _breaks(text: str, start: int, end: int, has_cr: bool) -> int:
    found = text.count("\n", start, end)
    if has_cr:
        found += text.count("\r", start, end) - text.count("\r\n", start, end)
    return found


def _next_break(text: str, pos: int, has_cr: bool, limit: int) -> tuple[int, int]:
    """Where the first line break at or after ``pos`` starts and ends; ``(limit, limit)`` if none."""
    lf = text.find("\n", pos, limit)
    lf = limit if lf < 0 else lf
    if has_cr and (cr := text.find("\r", pos, lf)) >= 0:
        return cr, cr + 2 if text.startswith("\n", cr + 1) else cr + 1
    return lf, min(lf + 1, limit)


def _line_start(text: str, line: int, has_cr: bool, from_line: int = 0, from_offset: int = 0) -> int | None:
    """Offset where ``line`` begins, counted from a known line start; None past the last line."""
    pos, remaining, size, length = from_offset, line - from_line, _CHUNK, len(text)
    while remaining:
        if pos >= length:
            return None
        end = min(pos + size, length)
        if has_cr and text.startswith("\r\n", end - 1):
            end += 1  # a CRLF is one break: never count its halves in two chunks
        found = _breaks(text, pos, end, has_cr)
        if found < remaining:
            remaining, pos = remaining - found, end
        elif size > _STEP:
            size //= 16
        else:
            pos = _next_break(text, pos, has_cr, end)[1]
            remaining -= 1
    return pos


def _code_points(line: str, units: int, encoding: str | None) -> int:
    """Code points in ``line`` covered by its first ``units`` client units; a unit count that ends
    inside a character stops before it."""
    prefix = line[: max(0, units)]
    if prefix.isascii() or encoding == UTF32:
        return len(prefix)
    if encoding == UTF8:
        data = prefix.encode("utf-8", "surrogatepass")
        cut = min(units, len(data))
        while cut < len(data) and data[cut] & 0xC0 == 0x80:  # inside a multi-byte sequence
            cut -= 1
        return len(data[:cut].decode("utf-8", "surrogatepass"))
    covered = prefix.encode("utf-16-le", "surrogatepass")[: 2 * units].decode("utf-16-le", "surrogatepass")
    if covered and covered[-1] != prefix[len(covered) - 1]:
        return len(covered) - 1  # it ends with the high half of a surrogate pair
    return len(covered)


def _resolve(text: str, position: Position, encoding: str | None, has_cr: bool, known: Anchor | None) -> _Resolved:
    line, character = max(0, position[0]), position[1]
    if known is not None and known.line <= line:
        start = _line_start(text, line, has_cr, known.line, known.offset)
    else:
        start = _line_start(text, line, has_cr)
    if start is None:  # past the last line: the end of the text
        return _Resolved(len(text), -1, -1)
    end = _next_break(text, start, has_cr, len(text))[0]
    return _Resolved(start + _code_points(text[start : min(end, start + max(0, character))], character, encoding), line, start)


def apply_change(
    text: str, start: Position, end: Position, new_text: str, encoding: str | None, anchor: Anchor | None = None
) -> tuple[str, Anchor | None]:
    """``text`` with the range ``start``-``end`` replaced by ``new_text``, and the anchor for the next
    edit. Lines break at CRLF, CR and LF only; a reversed range is taken in order."""
    known = anchor if anchor is not None and anchor.text is text else None
    has_cr = known.has_cr if known is not None else "\r" in text
    first = _resolve(text, start, encoding, has_cr, known)
    if first.line >= 0 and end[0] >= first.line:
        known = Anchor(text, first.line, first.line_start, has_cr)
    last = _resolve(text, end, encoding, has_cr, known)
    first, last = sorted((first, last), key=lambda r: r.offset)
    result = "".join((text[: first.offset], new_text, text[last.offset :]))  # one copy fewer than a + b + c
    joined = first.line_start > 0 and result.startswith("\r\n", first.line_start - 1)
    if first.line < 0 or joined:
        return result, None  # no line start known before the edit (a CR now joined by an LF)
    return result, Anchor(result, first.line, first.line_start, has_cr or "\r" in new_text)


class DocumentSyncProtocol(LanguageServerProtocol):
    """Replaces pygls's built-in ``didChange`` (its ``lsp_method`` of that name) with `apply_change`,
    and makes ``initialize`` settle on UTF-16 positions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._anchors: weakref.WeakKeyDictionary[TextDocument, Anchor] = weakref.WeakKeyDictionary()

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        """Positions are always counted in UTF-16, the one encoding every client must accept: pygls
        would take a client's first preference (UTF-8 for some), while the columns the server publishes
        and reads are UTF-16 or code points only (``LanguageServer.utf16``)."""
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        return (yield from super().lsp_initialize(params))

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:  # pygls keys them so
            log.warning("didChange for %s, which is not open: ignored", uri)
            return
        document = self.workspace.get_text_document(uri)
        text, anchor = document.source, self._anchors.pop(document, None)
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                span = change.range
                start, end = (span.start.line, span.start.character), (span.end.line, span.end.character)
                text, anchor = apply_change(text, start, end, change.text, self.workspace.position_encoding, anchor)
            else:
                text, anchor = change.text, None
        self.workspace.update_text_document(params.text_document, types.TextDocumentContentChangeWholeDocument(text=text))
        if anchor is not None:
            self._anchors[document] = anchor
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None
